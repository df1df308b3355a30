"""Settings of the retrieval methods: ``[query]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class QuerySettings:
    top_k: int = 3
    hyde_max_tokens: int = 160
    rephrasings: int = 3
    rrf_k: int = 60
    local_top_entities: int = 8
    # > 0: the context budget of local search. 0 (auto): the model's per-slot window
    # (llm.context_tokens, else embedded.ctx_size / embedded.parallel) minus
    # answer_max_tokens and the answer prompt's fixed part, at most max_context_tokens
    local_context_tokens: int = 0
    # the cap of every budget sized to the window (local search, chunk_context "budget"): ~25 ms
    # per prompt token on 2 CPU cores
    max_context_tokens: int = 3000
    # naive, HyDE, multi-query and PPR: "budget": the ranked chunks that fit the same budget
    # local search fills (Method.answer_budget), so that methods are compared at equal
    # context; or "top_k" chunks
    chunk_context: Literal["top_k", "budget"] = "budget"
    # the share of local search's budget its text units take (and more if the graph items
    # leave room); 0.85 (Microsoft's default: 0.5): the 1.5B model answers from passages better
    # than from descriptions. 0.7 (with reports at 0.2) put the gold evidence in the context as
    # often as naive RAG on the demo (0.875 against 0.801 at 0.5); 0.85 with reports at 0.05
    # raised local's keyword hit on all three demo question sets (README, "Local search with
    # more source text")
    local_text_unit_share: float = 0.85
    # the order local search reads its text units in (the candidates are the same: the
    # selected entities' units). "shared_mentions": units mentioning most selected entities
    # first; "entity_rank" (Microsoft GraphRAG's): the best-matching entity's units first,
    # each entity's by how many of its relationships the unit holds; "question": the units
    # whose embedding is nearest the question first (evidence recall of the context on the
    # demo 0.797 against 0.753 and 0.699; recall@2 higher on the demo and MuSiQue's indexes)
    local_text_unit_order: Literal["entity_rank", "shared_mentions", "question"] = "question"
    # the share of local search's budget the community reports take: 0.05, about one short
    # report (0.2 before 0.85 of text units became the default)
    local_community_share: float = 0.05
    local_community_level: int = -1  # -1: deepest level holding every selected entity
    local_max_relationships: int = 20  # relationships to unselected entities, at most
    global_level: int = -1  # -1: chosen by the data (GlobalSearch.auto_level_reports)
    # the map budget when the level is chosen: this many batches of global_batch_tokens
    global_max_batches: int = 3
    global_batch_tokens: int = 2000
    # reports one map call reads, at most (0: as many as global_batch_tokens holds, as
    # Microsoft GraphRAG packs them). 1: the 1.5B model's points come mostly from the first
    # report of a batch (benchmarks/global_map.py), and on the demo's global questions one
    # report per call hits more keywords for about the same model seconds
    global_reports_per_call: int = 1
    # the seed of the map's report shuffle (-1: llm.seed). Microsoft GraphRAG shuffles the
    # reports with a fixed seed too; another seed reorders the batches, and with one report a
    # call only the order in which the reduce reads the points changes
    # (benchmarks/global_noise.py measures what that does to the answers)
    global_shuffle_seed: int = -1
    # seeds of further report orders: the reduce drafts one answer per order (the
    # global_shuffle_seed one first) and one more call merges the drafts (GlobalSearch.awrite;
    # [] : one reduce call, as Microsoft GraphRAG). The 1.5B reduce keeps different keywords
    # under different orders (benchmarks/global_noise.py); with [1, 2] global search's
    # comprehensiveness win rate over naive RAG was the first whose interval lies above 0.5
    # (30 thematic questions), and it held on 12 written afterwards, for 3 more calls and
    # about 60% more tokens (README, "Drafts under several orders")
    global_reduce_seeds: list[int] = field(default_factory=lambda: [1, 2])
    global_map_max_points: int = 4  # points (or picked sentences) one map call returns
    # "points": the map writes points in its own words (Microsoft GraphRAG); "sentences": it
    # picks numbered sentences of the reports and the reduce reads those sentences verbatim
    # (query/global_search.py: a 1.5B model's points paraphrase away names and dates, or
    # invent them). On the lean demo graph's 6 global questions, keyword hit 0.333 with
    # points against 0.528 with sentences, 0.722 with sentences and entity facts (200)
    global_map_style: Literal["points", "sentences"] = "sentences"
    global_reduce_tokens: int = 1500
    # the order the reduce reads the map's points in: "score" (Microsoft GraphRAG's), or
    # "score_then_question": equal scores by embedding similarity to the question (the 1.5B
    # map scores nearly every point 100; GlobalSearch.order_points). Not the default: on the
    # 18 thematic questions it moved neither keyword hit nor the pairwise judgment against
    # naive RAG (benchmarks/global_map.py prints its arm)
    # "score_then_report": equal scores one report at a time in turn (by_report_in_turn); not
    # the default either: its first items hold more keywords, its answers fewer (README)
    global_point_order: Literal["score", "score_then_question", "score_then_report"] = "score"
    # Global search per Microsoft GraphRAG (query/global_search.py)
    global_include_rank: bool = True  # show each report's rank (0-10) in the map context
    global_min_rank: float = 0.0  # map only reports ranked at least this
    global_dynamic_selection: bool = False  # rate reports from the root down; map relevant ones
    # the relevance a report needs, as the mean rating 0-5 under the digits' probabilities
    # (Microsoft GraphRAG: a rating > 1)
    global_dynamic_threshold: float = 2.0
    global_dynamic_max_ratings: int = 16  # rating calls per question, at most
    # tokens of the community's own entity descriptions (most connected first) shown under an
    # LLM-written report in the map (0: the report alone, as Microsoft GraphRAG). A 1.5B
    # model's reports drop most of the dates, names and events their entities' descriptions
    # hold; the map then reads those facts without any indexing call
    global_report_facts_tokens: int = 200
    # tokens of the community's relationships ("source -> target: description", most
    # connected first) shown under every report in the map (0: none, the default). The lean
    # graph's relationship descriptions are often the source sentence itself; at 300 the
    # 18 thematic questions' answers hit fewer keywords and tied naive RAG as before (README)
    global_report_relations_tokens: int = 0
    answer_max_tokens: int = 250
    # the final answer's form, for naive, HyDE, multi-query, local, PPR and global search (the
    # router's too): "sentences" (at most five; global's reduce six) or "paragraphs", a short
    # paragraph per theme, as Microsoft GraphRAG answers ("multiple paragraphs") and as the
    # GraphRAG paper compared every method; paragraphs want a larger answer_max_tokens (600)
    answer_style: Literal["sentences", "paragraphs"] = "sentences"
    # a final answer that loops (one sentence again and again) is cut there and asked once
    # more with this frequency penalty; 0: cut only (query/loops.py)
    loop_frequency_penalty: float = 0.5
    # ppr (HippoRAG 2 style): entities/facts seeding a Personalized PageRank; top_k chunks kept
    ppr_top_entities: int = 5  # facts whose two ends are seeded; seeds kept
    ppr_seed_entities: bool = False  # also seed entities matched by description (not HippoRAG 2)
    ppr_damping: float = 0.5  # probability of following an edge (HippoRAG 2: 0.5)
    # weight of the dense question-chunk seeds (HippoRAG 2: 0.05, for thousands of passages);
    # chosen on the demo's 24 questions by support recall in the top 3 (the README's PPR table)
    ppr_passage_weight: float = 1.0
    # drift (Microsoft GraphRAG): HyDE primer over reports, local-search follow-ups, reduce
    drift_top_reports: int = 5  # reports closest to the hypothetical answer, for the primer
    drift_primer_tokens: int = 2000  # budget of those reports in the primer call
    drift_followups: int = 3  # follow-ups answered per round (and asked per step, at most)
    drift_depth: int = 2  # rounds of follow-ups: at most drift_followups * drift_depth steps
    drift_step_max_tokens: int = 300  # completion room of a primer or follow-up step
    drift_reduce_tokens: int = 1500  # intermediate answers given to the final reduce
    # the shares of a follow-up's local-search context (Microsoft's DRIFT has its own too):
    # text units, community reports; the graph items take the rest
    drift_local_text_unit_share: float = 0.5
    drift_local_community_share: float = 0.2
    # router: classify the question (fact / multi-hop / thematic), answer with that kind's method.
    # "embedding": similarity to hand-written prototype questions, no LLM call; "llm": one call.
    router_classifier: Literal["embedding", "llm"] = "embedding"
    router_prototype_top: int = 3  # a kind's score: mean similarity of its closest prototypes
    router_fact_method: str = "local"  # e.g. "ppr"
    router_multi_hop_method: str = "local"  # e.g. "ppr"
    router_thematic_method: str = "global"  # e.g. "drift"
