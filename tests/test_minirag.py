"""MiniRAG's retrieval (graphrag/query/minirag.py, minirag_paths.py): each step by hand on a
small graph, the path arithmetic against MiniRAG's own path enumeration on the demo graph, the
whole method on the demo index over a fake model (the model is not under test), and the
fallback when its reply is malformed."""

from __future__ import annotations

import json
from collections import Counter

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from conftest import FakeLLM

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import collecting_failures, items_tokens
from graphrag.query.minirag import (
    MAX_QUERY_ENTITIES,
    MIN_SIMILARITY,
    MiniRAGRetrieval,
    MiniRAGSettings,
)
from graphrag.query.minirag_paths import (
    ChunkEntityGraph,
    best_chunks,
    drop_isolated,
    good_edges,
    pair,
    rank_seed_chunks,
    seed_chunk_scores,
)
from graphrag.query.registry import METHODS, OPT_IN_METHODS
from graphrag.settings import REPO_ROOT, Settings, SettingsError
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")

# a - b - c - d in a line, e alone; chunks u0..u4; b is mentioned in 7 chunks (a hub).
ENTITIES = pd.DataFrame(
    {
        S.ID: ["a", "b", "c", "d", "e"],
        S.TEXT_UNIT_IDS: [
            ["u0"],
            ["u0", "u1", "u2", "u3", "u4", "u5", "u6"],
            ["u2"],
            ["u3"],
            ["u4"],
        ],
    }
)
RELATIONSHIPS = pd.DataFrame(
    {
        S.SOURCE_ID: ["a", "b", "c", "b"],
        S.TARGET_ID: ["b", "c", "d", "b"],  # a self-loop is no edge
        S.TEXT_UNIT_IDS: [["u0"], ["u2"], ["u3"], ["u1"]],
    }
)
UNITS = pd.DataFrame({S.ID: [f"u{i}" for i in range(7)]})


def small_graph() -> ChunkEntityGraph:
    return ChunkEntityGraph.from_tables(ENTITIES, RELATIONSHIPS, UNITS)


def test_the_graph_joins_entities_by_relationships_and_chunks_by_mentions() -> None:
    graph = small_graph()
    assert [n.tolist() for n in graph.neighbours] == [[1], [0, 2], [1, 3], [2], []]
    assert graph.mentions[1].indices.tolist() == [0, 1, 2, 3, 4, 5, 6]
    assert {p: c.tolist() for p, c in graph.edge_chunks.items()} == {
        (0, 1): [0],
        (1, 2): [2],
        (2, 3): [3],
    }


def test_a_hub_gives_the_half_of_its_chunks_nearest_the_question_at_least_five() -> None:
    unit_scores = np.array([0.1, 0.9, 0.8, 0.2, 0.7, 0.6, 0.0])
    kept = small_graph().path_mentions(unit_scores)
    # b has 7 chunks: max(5, 3.5) = 5 kept, the nearest (u1, u2, u4, u5, u3); others all kept
    assert sorted(kept[1].indices.tolist()) == [1, 2, 3, 4, 5]
    assert kept[0].indices.tolist() == [0]


def test_isolated_seeds_keep_their_best_fifth_and_at_least_one() -> None:
    graph = small_graph()
    assert drop_isolated({0: 0.5, 4: 0.9}, graph) == {0: 0.5, 4: 0.9}
    assert drop_isolated({0: 0.5}, graph) == {0: 0.5}


def test_matched_facts_count_when_they_touch_an_important_entity() -> None:
    ends = [(0, 1), (2, 3), (1, 2), (1, 0)]
    edges = good_edges([3, 1, 2, 0], ends, important={0, 3})
    assert edges == {(0, 1): 0, (2, 3): 1}  # (1, 2) touches neither; (0, 1) keeps rank 0


def enumerated_paths(graph: nx.Graph, seed: int) -> list[tuple[int, ...]]:
    """MiniRAG's get_neighbors_within_k_hops(seed, 2) with merge_tuples (utils.py:362-386):
    every (seed, n, x) with x != seed, or (seed, n) when n has no other neighbour."""
    paths = []
    for _, n in graph.edges(seed):
        ends = [x for _, x in graph.edges(n) if x != seed]
        paths += [(seed, n, x) for x in ends] if ends else [(seed, n)]
    return paths


def literal_scores(
    graph: ChunkEntityGraph,
    seed: int,
    answer: set[int],
    edges: dict,
    kept: list[list[int]],
    units: int,
) -> np.ndarray:
    """The chunk scores of one seed written out path by path as MiniRAG's path2chunk does
    (operate.py:1124-1209): the best-ranked matched fact's chunks, the seed's own, the kept
    chunks of the others, all times 1 + answer-type nodes + matched facts on the path."""
    nxgraph = nx.Graph()
    nxgraph.add_nodes_from(range(len(graph.neighbours)))
    nxgraph.add_edges_from((a, int(b)) for a, ns in enumerate(graph.neighbours) for b in ns)
    total: Counter = Counter()
    for path in enumerated_paths(nxgraph, seed):
        on_path = [pair(a, b) for a, b in zip(path, path[1:], strict=False) if pair(a, b) in edges]
        score = 1 + sum(n in answer for n in path) + len(on_path)
        chunks = list(graph.edge_chunks[min(on_path, key=edges.get)]) if on_path else []
        chunks += list(graph.mentions[seed].indices)
        for node in path[1:]:
            chunks += kept[node]
        for unit, count in Counter(int(c) for c in chunks).items():
            total[unit] += count * score
    if not graph.neighbours[seed].size:
        total.update(int(u) for u in graph.mentions[seed].indices)
    return np.array([total[u] for u in range(units)], dtype=float)


def edges_at(edges: dict) -> dict[int, dict[int, int]]:
    found: dict[int, dict[int, int]] = {}
    for (a, b), rank in edges.items():
        found.setdefault(a, {})[b] = rank
        found.setdefault(b, {})[a] = rank
    return found


def test_path_scores_on_a_small_graph_match_the_paths_written_out() -> None:
    graph = small_graph()
    unit_scores = np.linspace(1.0, 0.0, 7)
    kept = graph.path_mentions(unit_scores)
    edges = {(1, 2): 0, (2, 3): 1}
    answer = np.array([0, 0, 0, 1, 0], dtype=float)  # d is of the answer type
    kept_lists = [kept[r].indices.tolist() for r in range(5)]
    for seed in range(5):
        fast = seed_chunk_scores(seed, graph, answer, edges, edges_at(edges), kept)
        slow = literal_scores(graph, seed, {3}, edges, kept_lists, 7)
        assert fast.tolist() == slow.tolist(), seed
    # a: one path (a, b, c): score 1 + fact (b, c) = 2; chunks: fact u2, a's u0, b's kept
    # five (u0..u4), c's u2 -> u0: 2 + 2, u2: 2 + 2 + 2
    a = seed_chunk_scores(0, graph, answer, edges, edges_at(edges), kept)
    assert a[0] == 4 and a[2] == 6 and a[1] == 2 and a[5] == 0


def test_each_seed_adds_its_similarity_doubled_first_and_ten_times_on_a_dense_hit() -> None:
    seeds = {7: 0.9, 8: 0.5, 9: 0.4}
    chunks = {7: [1, 2], 8: [2, 3], 9: [4]}
    final = rank_seed_chunks([[7, 8], [9, 6]], seeds, chunks, dense_top={2})
    # seed 7 (first of its query entity): 1.8 to u1 and u2; seed 8's first chunk u2 is a
    # dense hit: 5.0 to u2 and u3; seed 9 is first of the second query entity: 0.8 to u4
    assert final == pytest.approx({1: 1.8, 2: 6.8, 3: 5.0, 4: 0.8})
    assert best_chunks(np.array([0.0, 2.0, 2.0, 1.0]), np.array([0, 3, 1, 2]), 3) == [2, 1, 3]


def test_minirag_is_registered_opt_in_with_minirags_defaults() -> None:
    assert OPT_IN_METHODS["minirag"] is MiniRAGRetrieval and "minirag" not in METHODS
    assert (MiniRAGSettings().top_k, MAX_QUERY_ENTITIES, MIN_SIMILARITY) == (60, 5, 0.2)
    with pytest.raises(SettingsError, match="top_k"):
        MiniRAGSettings(top_k=1).validate("minirag", [])


def test_the_prompt_offers_the_pool_and_the_schema_allows_only_its_types() -> None:
    pool = {"PERSON": ["Mara Okafor", "Ilse Varga"], "GEO": ["Port Aldry"]}
    messages = prompts.minirag_keywords("Who founded KBMI?", pool)
    assert (
        messages[1]["content"] == f"Query: Who founded KBMI?\nAnswer type pool: {json.dumps(pool)}"
    )
    assert "answer_type_keywords" in messages[0]["content"]
    schema = prompts.query_keywords_schema(list(pool))
    kinds = schema["properties"]["answer_type_keywords"]
    assert kinds["items"]["enum"] == ["PERSON", "GEO"] and kinds["maxItems"] == 3
    assert schema["properties"]["entities_from_query"]["maxItems"] == 5


# --------------------------------------------------------------------------- demo index


def keyword_reply(entities: list[str], types: list[str]) -> str:
    return json.dumps({"answer_type_keywords": types, "entities_from_query": entities})


def test_path_arithmetic_matches_minirags_paths_on_the_demo_graph(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    method = MiniRAGRetrieval(
        demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder
    )
    graph = method.graph
    entities = method.graph_tables[0]  # the graph's rows (merged when resolution is on)
    answer_rows = set(np.flatnonzero(entities[S.TYPE].str.upper() == "PERSON").tolist())
    answer = np.zeros(len(entities))
    answer[list(answer_rows)] = 1.0
    question = QUESTIONS.loc["q12", "question"]
    vector = replay_embedder.embed_one(question)
    facts = method.stores.fact_scores(replay_embedder, method.graph_tables[1], vector)
    fact_rows = list(np.argsort(-facts, kind="stable")[:20])
    hubs = sorted(range(len(entities)), key=lambda r: -len(graph.neighbours[r]))[:5]
    edges = good_edges(fact_rows, method.fact_ends, set(hubs) | answer_rows)
    unit_scores = method.dense_scores(vector).to_numpy()
    kept = graph.path_mentions(unit_scores)
    kept_lists = [kept[r].indices.tolist() for r in range(len(entities))]
    assert edges and any(len(graph.neighbours[h]) > 5 for h in hubs)
    for seed in hubs:
        fast = seed_chunk_scores(seed, graph, answer, edges, edges_at(edges), kept)
        slow = literal_scores(graph, seed, answer_rows, edges, kept_lists, len(unit_scores))
        assert np.allclose(fast, slow), entities[S.TITLE].iloc[seed]


def units_of(method: MiniRAGRetrieval, title: str) -> set[str]:
    """The text units of the entity named ``title`` (all its names', resolution on)."""
    names = method.index.entities
    row = method.entity_of_name[list(names[S.TITLE]).index(title)]
    return set(method.graph_tables[0][S.TEXT_UNIT_IDS].iloc[row])


@pytest.mark.parametrize(
    ("qid", "named", "kinds"),
    [
        ("q12", ["KelpSense", "Storm Corvin"], ["PERSON"]),
        ("q07", ["Seagrass Guardians"], ["PERSON"]),
        ("q13", ["Port Aldry Tide Festival", "Storm Corvin"], ["PERSON", "EVENT"]),
    ],
)
def test_on_the_demo_the_named_entities_seed_the_paths_that_pick_the_first_chunks(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, qid, named, kinds
) -> None:
    """A fake reply names real demo entities: each is its own best seed, and the chunk
    ranked first mentions one of them (its own chunks are on every one of its paths)."""
    settings = make_settings(fake_llm.base_url)
    fake_llm.script(keyword_reply(named, kinds))
    method = MiniRAGRetrieval(demo_index, settings, ChatLLM(settings), replay_embedder)
    question = QUESTIONS.loc[qid, "question"]

    retrieval = run_sync(method.aretrieve_ranked(question))

    assert fake_llm.calls == 1
    sent = fake_llm.requests[0]
    assert question in sent["messages"][-1]["content"]
    assert json.dumps(method.type_pool) in sent["messages"][-1]["content"]
    assert set(kinds) <= set(method.type_pool)
    first = retrieval.ranking[0].removeprefix("text_unit:")
    assert any(first in units_of(method, name) for name in named)
    # the ranking is every unit once; the context is its head, filling the shared budget
    rows = method.ranking(question, named, kinds)
    assert sorted(rows) == sorted(demo_index.text_units[S.ID])
    assert retrieval.ranking == method.text_unit_ids(rows[: len(retrieval.ranking)])
    sources = [i.source for i in retrieval.items]
    assert sources == [s for s in method.text_unit_ids(rows) if s in sources]
    assert items_tokens(retrieval.items) <= method.answer_budget(question)


def test_answer_types_move_the_ranking_toward_chunks_of_that_type(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    """Paths through entities of the predicted answer type score higher, so their chunks
    gain: the PERSON-typed ranking puts more weight on chunks mentioning a person."""
    method = MiniRAGRetrieval(
        demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder
    )
    question = QUESTIONS.loc["q12", "question"]
    plain = method.ranking(question, ["KelpSense"], [])
    typed = method.ranking(question, ["KelpSense"], ["PERSON"])
    assert plain != typed
    assert sorted(plain) == sorted(typed)


def test_a_malformed_reply_seeds_with_the_question_and_is_named_in_failures(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = make_settings(fake_llm.base_url, query={"chunk_context": "top_k", "top_k": 3})

    def reply(body: dict) -> str:
        if "Answer type pool" in body["messages"][-1]["content"]:
            return "answer types: PERSON; entities: KelpSense"  # not JSON
        return "Jonah Whitlow designed it [1]."

    fake_llm.respond_with(reply)
    method = MiniRAGRetrieval(demo_index, settings, ChatLLM(settings), replay_embedder)
    question = QUESTIONS.loc["q12", "question"]

    answer = method.answer(question)

    assert len(answer.failures) == 1
    assert answer.failures[0].startswith("minirag query keywords (seeded by the question")
    expected = method.text_unit_ids(method.ranking(question, [question], []))
    assert answer.sources == expected[:3]
    assert answer.text == "Jonah Whitlow designed it [1]."


def test_an_empty_entity_list_also_falls_back_to_the_question(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    class Replying:
        async def ajson(self, messages, schema, name):
            return {"answer_type_keywords": ["PERSON", "NOT A TYPE"], "entities_from_query": [" "]}

    method = MiniRAGRetrieval(demo_index, replay_settings, Replying(), replay_embedder)
    question = QUESTIONS.loc["q07", "question"]
    with collecting_failures() as failures:
        named, kinds = run_sync(method.query_keywords(question))
    assert (named, kinds) == ([question], ["PERSON"])
    assert failures == ["minirag query keywords: no query entity (seeded by the question)"]


@pytest.mark.parametrize("first_stage", ["dense", "hybrid"])
def test_minirags_chunks_come_first_and_the_first_stage_fills_the_rest(
    demo_index: Index, make_settings, replay_embedder, first_stage: str
) -> None:
    # top_k 4: two query-entity seeds at most, two chunks kept; the rest is the first stage's
    settings = make_settings(query={"first_stage": first_stage, "minirag": {"top_k": 4}})
    method = MiniRAGRetrieval(demo_index, settings, ChatLLM(settings), replay_embedder)
    question = QUESTIONS.loc["q12", "question"]

    rows = method.ranking(question, ["KelpSense"], [])

    vector = replay_embedder.embed_one(question)
    first = method.first_stage_ranking(vector, question, len(demo_index.text_units))
    assert len(set(rows[:2])) == 2
    assert rows[2:] == [r for r in first if r not in rows[:2]]


def test_a_merged_name_still_matches_its_entity(
    demo_index: Index, make_settings, replay_embedder
) -> None:
    """With entity resolution the graph has one row per entity, yet each of its names is
    matched as MiniRAG's name store would: the entity scores its best name's."""
    settings = make_settings(query={"entity_resolution": True})
    method = MiniRAGRetrieval(demo_index, settings, ChatLLM(settings), replay_embedder)
    graph_ids = set(method.graph_tables[0][S.ID])
    names = demo_index.entities
    merged = [r for r, e in enumerate(names[S.ID]) if e not in graph_ids]
    assert merged, "the demo has names resolution merges (e.g. Marsh, Councillor Marsh)"
    for row in merged:
        vector = method.name_vectors[row]
        scores = method.entity_scores(vector)
        assert scores[method.entity_of_name[row]] == pytest.approx(1.0, abs=1e-5)
        assert len(scores) == len(graph_ids)
