"""HippoRAG 2 step for step (query/hipporag.py): its seed rule, its graph and synonym edges on
hand-made tables, the recognition filter against a fake model, and the method on the demo."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FakeLLM
from test_ppr import (
    ENTITIES,
    QUESTIONS,
    RELATIONSHIPS,
    TEXT_UNITS,
    WordEmbedder,
    hand_made_index,
    weight,
)

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query import hipporag
from graphrag.query.hipporag import (
    HippoRAG,
    HippoRAGSettings,
    add_synonym_edges,
    fact_graph,
    phrase_seeds,
    synonym_pairs,
)
from graphrag.query.pagerank import min_max
from graphrag.settings import Settings
from graphrag.stores.igraph_graph import IGraphStore

STATED = RELATIONSHIPS.assign(**{S.TEXT_UNIT_IDS: [["c1"], ["c2"], ["c4"], ["c3", "c4"]]})


def test_min_max_scales_to_the_unit_interval() -> None:
    assert min_max(np.array([0.2, 0.6, 0.4])) == pytest.approx([0.0, 1.0, 0.5])
    assert min_max(np.array([0.3, 0.3])) == pytest.approx([1.0, 1.0])
    assert len(min_max(np.zeros(0))) == 0


def test_an_entity_seed_is_the_mean_over_its_facts_of_score_over_chunks() -> None:
    ends = [("trust", "pier"), ("mayor", "pier"), ("mayor", "festival")]
    counts = {"trust": 1, "pier": 2, "mayor": 2, "festival": 4}
    seeds = phrase_seeds(ends, [1.0, 0.6, 0.2], counts, top_k=5)
    # pier: (1.0 / 2 + 0.6 / 2) / 2; mayor: (0.6 / 2 + 0.2 / 2) / 2 - a mean, not a sum
    assert seeds == pytest.approx(
        {"entity:trust": 1.0, "entity:pier": 0.4, "entity:mayor": 0.2, "entity:festival": 0.05}
    )
    assert list(phrase_seeds(ends, [1.0, 0.6, 0.2], counts, top_k=2)) == [
        "entity:trust",
        "entity:pier",
    ]


def store(nodes: list[str], edges: dict) -> IGraphStore:
    return IGraphStore(nodes, [(a, b, w) for (a, b), w in edges.items()])


def test_fact_edges_count_chunks_twice_and_chunks_link_only_to_fact_ends() -> None:
    graph = store(*fact_graph(STATED, TEXT_UNITS))
    assert weight(graph, "entity:festival", "entity:fair") == 4.0  # 2 chunks, x2
    assert weight(graph, "entity:pier", "entity:trust") == 2.0
    assert weight(graph, "entity:festival", "text_unit:c3") == 1.0
    # the mayor is mentioned in c2 and c4 (ENTITIES), but states a fact only there
    assert weight(graph, "entity:mayor", "text_unit:c2") == 1.0
    assert weight(graph, "entity:trust", "text_unit:c2") == 0.0
    lonely = ENTITIES[S.ID][
        ~ENTITIES[S.ID].isin(set(STATED[S.SOURCE_ID]) | set(STATED[S.TARGET_ID]))
    ]
    assert not any(f"entity:{e}" in graph.nodes() for e in lonely)


def test_synonym_edges_join_similar_names_above_the_threshold() -> None:
    names = ["lena marsh", "councillor lena marsh", "port aldry", "ab"]
    vectors = np.array([[1.0, 0.0], [0.9, np.sqrt(0.19)], [0.0, 1.0], [1.0, 0.0]], np.float32)
    pairs = synonym_pairs(names, vectors, threshold=0.8)
    # both directions found, nearest first; "ab" (two letters) seeks none but can be found
    assert [(i, j) for i, j, _ in pairs] == [(0, 3), (0, 1), (1, 0), (1, 3)]
    assert pairs[1][2] == pytest.approx(0.9)
    nodes, edges = fact_graph(STATED, TEXT_UNITS)
    ids = ["pier", "fair", "trust", "nowhere"]
    assert add_synonym_edges(set(nodes), edges, ids, pairs) == 2  # "nowhere" is not in it
    assert weight(store(nodes, edges), "entity:pier", "entity:fair") == pytest.approx(1.8)


def hand_made(settings: Settings) -> HippoRAG:
    index = hand_made_index()
    index.relationships = STATED.assign(
        **{
            S.FACT_EMBEDDING: list(
                WordEmbedder().embed(list(STATED[S.DESCRIPTION] + " " + STATED[S.SOURCE_ENTITY]))
            )
        }
    )
    return HippoRAG(index, settings, ChatLLM(settings), WordEmbedder())


def ranked(method: HippoRAG, question: str) -> list[str]:
    return [
        u.removeprefix("text_unit:") for u in run_sync(method.aretrieve_ranked(question)).ranking
    ]


def test_the_recognition_filter_decides_which_facts_seed_the_walk(
    make_settings, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hipporag, "LINKING_TOP_K", 2)
    query = {"chunk_context": "top_k", "top_k": 2}
    settings = make_settings(fake_llm.base_url, query=query, cache={"mode": "off"})
    question = "Which festival fair did Mayor Lin run?"
    # the two facts linked (a tie, in table order): the mayor opened the pier (1), the mayor
    # runs the festival (2)
    fake_llm.script(json.dumps({"relevant": [2]}), json.dumps({"relevant": [1]}))
    kept_festival = ranked(hand_made(settings), question)
    kept_pier = ranked(hand_made(settings), question)
    assert fake_llm.calls == 2
    prompt = fake_llm.last_user(0)
    assert "2. Mayor Lin | runs | Festival" in prompt and prompt.endswith(question)
    assert kept_festival[0] == "c4" and kept_pier[0] == "c2"

    fake_llm.script(json.dumps({"relevant": []}))
    method = hand_made(settings)
    dense = method.text_unit_ranking(WordEmbedder().embed_one(question), 4)
    answer_ranking = ranked(method, question)
    assert answer_ranking == dense[: len(answer_ranking)], "no fact left: the dense ranking"


def test_without_the_filter_no_model_is_asked(make_settings, fake_llm: FakeLLM) -> None:
    query = {"chunk_context": "top_k", "top_k": 2, "hipporag": {"recognition_filter": False}}
    settings = make_settings(fake_llm.base_url, query=query)
    assert ranked(hand_made(settings), "What did the harbour trust fund?")[0] == "c1"
    assert fake_llm.calls == 0


@pytest.mark.parametrize("qid", ["q01", "q07", "q09", "q12", "q13"])
def test_hipporag_on_the_demo_ranks_the_supporting_documents_in_the_top_k(
    demo_index: Index, replay_settings: Settings, replay_embedder, qid: str
) -> None:
    # The recognition filter off (its replies are recorded for MuSiQue, not these questions):
    # the linked facts, HippoRAG's graph and its synonym edges over the demo's LLM extraction.
    settings = replay_settings
    unfiltered = HippoRAGSettings(recognition_filter=False)
    method = HippoRAG(demo_index, settings, ChatLLM(settings), replay_embedder, options=unfiltered)
    retrieval = run_sync(method.aretrieve_ranked(QUESTIONS.loc[qid, "question"]))
    units = demo_index.text_units.set_index(S.ID)
    top = [u.removeprefix("text_unit:") for u in retrieval.ranking[: settings.query.top_k]]
    support = set(QUESTIONS.loc[qid, "support"])
    assert support <= {d for u in top for d in units.loc[u, S.DOCUMENT_IDS]}
