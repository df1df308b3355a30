"""Personalized-PageRank retrieval: the walk on hand-made tables where the right order is
known (and checked against PageRank's closed form), HippoRAG 2's seed weighting, the whole
method on a hand-made index, and on the demo index for questions with known support."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from conftest import FakeLLM

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import items_tokens
from graphrag.query.pagerank import rank_chunks
from graphrag.query.ppr import PPRRetrieval, chunk_seeds, entity_chunk_edges, entity_seeds
from graphrag.settings import REPO_ROOT, Settings
from graphrag.stores.igraph_graph import IGraphStore
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")

# A harbour trust funds a pier; the mayor opens the pier; the mayor also runs a festival; the
# festival has a fair. Chunks: c1 (trust, pier), c2 (pier, mayor), c4 (mayor, festival),
# c3 (festival, fair). Seeded on the trust, a walk reaches c1, then c2, c4 and c3 in that order
# of hops, and nothing else can reorder them: every chunk has two entities, every edge weighs 1.
ENTITIES = pd.DataFrame(
    {
        S.ID: ["trust", "pier", "mayor", "festival", "fair"],
        S.TITLE: ["Harbour Trust", "Pier", "Mayor Lin", "Festival", "Fair"],
        S.DESCRIPTION: [
            "a harbour trust",
            "a pier",
            "the mayor",
            "a festival",
            "a fair",
        ],
        S.TEXT_UNIT_IDS: [["c1"], ["c1", "c2"], ["c2", "c4"], ["c4", "c3"], ["c3"]],
    }
)
RELATIONSHIPS = pd.DataFrame(
    {
        S.ID: ["r1", "r2", "r3", "r4"],
        S.SOURCE_ENTITY: ["Harbour Trust", "Mayor Lin", "Mayor Lin", "Festival"],
        S.TARGET_ENTITY: ["Pier", "Pier", "Festival", "Fair"],
        "source_id": ["trust", "mayor", "mayor", "festival"],
        "target_id": ["pier", "pier", "festival", "fair"],
        S.DESCRIPTION: ["funded", "opened", "runs", "has"],
        S.WEIGHT: [4.0, 4.0, 4.0, 4.0],
    }
)
TEXT_UNITS = pd.DataFrame(
    {
        S.ID: ["c1", "c2", "c3", "c4"],
        S.TEXT: [
            "The Harbour Trust funded the pier.",
            "Mayor Lin opened the pier.",
            "The festival had a fair.",
            "Mayor Lin runs the festival.",
        ],
    }
)


def entity_chunk_graph(
    entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
) -> IGraphStore:
    return IGraphStore(*_listed(*entity_chunk_edges(entities, relationships, text_units)))


def weight(graph: IGraphStore, a: str, b: str) -> float:
    """Return the weight of the edge a-b of ``graph`` (0.0: none)."""
    edges = graph.edges_among([a, b])
    return float(edges[0][2]) if edges and a != b else 0.0


def _listed(nodes: list[str], edges: dict) -> tuple[list[str], list]:
    return nodes, [(a, b, w) for (a, b), w in edges.items()]


def closed_form_pagerank(graph: nx.Graph, seeds: dict[str, float], damping: float) -> dict:
    """PageRank's fixed point r = d W r + (1 - d) v, solved directly (no dangling nodes)."""
    nodes = list(graph)
    adjacency = nx.to_numpy_array(graph, nodelist=nodes, weight="weight")
    transition = adjacency / adjacency.sum(axis=0, keepdims=True)  # column-stochastic
    v = np.array([seeds.get(n, 0.0) for n in nodes])
    v = v / v.sum()
    r = np.linalg.solve(np.eye(len(nodes)) - damping * transition, (1 - damping) * v)
    return dict(zip(nodes, r, strict=True))


def test_graph_holds_entity_and_chunk_nodes_with_weighted_edges() -> None:
    heavier = RELATIONSHIPS.assign(**{S.WEIGHT: [8.0, 4.0, 4.0, 2.0]})
    graph = entity_chunk_graph(ENTITIES, heavier, TEXT_UNITS)

    assert set(graph.nodes()) == {f"entity:{e}" for e in ENTITIES[S.ID]} | {
        f"text_unit:{u}" for u in TEXT_UNITS[S.ID]
    }
    # Relationship weights over the largest: the strongest counts as one provenance link.
    assert weight(graph, "entity:pier", "entity:trust") == 1.0
    assert weight(graph, "entity:festival", "entity:fair") == 0.25
    assert weight(graph, "entity:mayor", "text_unit:c4") == 1.0
    assert weight(graph, "entity:trust", "text_unit:c2") == 0.0
    edges = graph.to_networkx().number_of_edges()
    assert edges == 4 + sum(len(u) for u in ENTITIES[S.TEXT_UNIT_IDS])


@pytest.mark.parametrize("damping", [0.3, 0.5, 0.85])
def test_walk_from_a_seed_ranks_chunks_by_hops(damping: float) -> None:
    graph = entity_chunk_graph(ENTITIES, RELATIONSHIPS, TEXT_UNITS)
    seeds = {"entity:trust": 1.0}

    scores = graph.personalized_pagerank(seeds, damping)

    expected = closed_form_pagerank(graph.to_networkx(), seeds, damping)
    assert scores.keys() == expected.keys()
    nodes = graph.nodes()
    assert np.allclose([scores[n] for n in nodes], [expected[n] for n in nodes], atol=1e-5)
    # Dense order says the opposite; the walk overrules it.
    assert rank_chunks(scores, ["c3", "c4", "c2", "c1"]) == ["c1", "c2", "c4", "c3"]


def test_dense_order_breaks_ties_and_chunk_seeds_can_lift_a_chunk() -> None:
    graph = entity_chunk_graph(ENTITIES, RELATIONSHIPS, TEXT_UNITS)
    # Seeded on both ends of the chain, c1/c3 and c2/c4 tie pairwise by symmetry.
    symmetric = graph.personalized_pagerank({"entity:trust": 1.0, "entity:fair": 1.0}, 0.5)
    assert rank_chunks(symmetric, ["c3", "c1", "c2", "c4"])[:2] == ["c3", "c1"]
    assert rank_chunks(symmetric, ["c1", "c3", "c2", "c4"])[:2] == ["c1", "c3"]
    # A strong enough dense seed on the farthest chunk lifts it above the nearest one.
    first = pd.Series([0.1, 0.2, 0.9, 0.3], index=["c1", "c2", "c3", "c4"])
    dense = chunk_seeds(first, weight=2.0)
    assert dense == pytest.approx(
        {"text_unit:c1": 0.0, "text_unit:c2": 0.25, "text_unit:c3": 2.0, "text_unit:c4": 0.5}
    )
    lifted = graph.personalized_pagerank({"entity:trust": 1.0, **dense}, 0.5)
    assert rank_chunks(lifted, ["c1", "c2", "c3", "c4"])[0] == "c3"


def test_no_seed_weight_means_no_walk() -> None:
    graph = entity_chunk_graph(ENTITIES, RELATIONSHIPS, TEXT_UNITS)
    assert graph.personalized_pagerank({"entity:trust": 0.0, "entity:nowhere": 1.0}, 0.5) == {}
    assert rank_chunks({}, ["c2", "c1"]) == ["c2", "c1"]
    assert chunk_seeds(pd.Series([0.4], index=["c1"]), weight=0.0) == {}


def test_seeds_from_facts_are_divided_by_how_many_chunks_name_the_entity() -> None:
    ends = [("trust", "pier"), ("mayor", "festival"), ("festival", "fair")]
    counts = {"trust": 1, "pier": 2, "mayor": 2, "festival": 4, "fair": 1}
    scores = np.array([0.8, 0.4, -0.2])  # a negative similarity seeds nothing

    seeds = entity_seeds(ends, scores, counts, top_n=2)

    # Top 2 facts: trust-pier 0.8, mayor-festival 0.4; then the 2 heaviest entities kept.
    assert seeds == pytest.approx({"entity:trust": 0.8, "entity:pier": 0.4})
    wide = entity_seeds(ends, scores, counts, top_n=5)
    assert wide == pytest.approx(
        {"entity:trust": 0.8, "entity:pier": 0.4, "entity:mayor": 0.2, "entity:festival": 0.1}
    )


class WordEmbedder:
    """A stand-in embedder: unit vectors of word counts over a fixed vocabulary."""

    VOCABULARY = ["trust", "harbour", "funded", "pier", "mayor", "lin", "festival", "fair"]

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = re.findall(r"[a-z]+", text.lower())
            v = np.array([words.count(w) for w in self.VOCABULARY], dtype=np.float32) + 1e-3
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def hand_made_index() -> Index:
    embedder = WordEmbedder()
    units = TEXT_UNITS.assign(**{S.TEXT_EMBEDDING: list(embedder.embed(list(TEXT_UNITS[S.TEXT])))})
    entities = ENTITIES.assign(
        **{S.DESCRIPTION_EMBEDDING: list(embedder.embed(list(ENTITIES[S.DESCRIPTION])))}
    )
    empty = pd.DataFrame()
    return Index(
        Path("hand-made"), empty, units, entities, RELATIONSHIPS, empty, empty, empty, empty
    )


def test_method_follows_the_graph_from_the_matched_fact(make_settings, fake_llm: FakeLLM) -> None:
    # "harbour trust funded" matches the fact trust -> pier; c1 is one hop away, c2 two.
    # Dense similarity alone would put c3 ("festival had a fair") last and c2 near the bottom.
    # HippoRAG 2's weak dense seeds (0.05), so that the walk's pull is what ranks the chunks.
    own = {"top_entities": 1, "passage_weight": 0.05}
    query = {"chunk_context": "top_k", "top_k": 2, "ppr": own}
    settings = make_settings(fake_llm.base_url, query=query)
    fake_llm.script("The Harbour Trust funded it [1].")
    method = PPRRetrieval(hand_made_index(), settings, ChatLLM(settings), WordEmbedder())

    question = "What did the harbour trust that funded things lead to?"
    assert method.ranking(question) == ["c1", "c2", "c4", "c3"]
    answer = method.answer(question)

    assert answer.sources == ["text_unit:c1", "text_unit:c2"]
    assert answer.contexts == [TEXT_UNITS[S.TEXT].iloc[0], TEXT_UNITS[S.TEXT].iloc[1]]
    assert fake_llm.calls == answer.usage.calls == 1, "no LLM at retrieval time"
    assert fake_llm.requests[0]["messages"][0]["content"].startswith("You answer a question")
    assert answer.cited == ["text_unit:c1"]


# --------------------------------------------------------------------------- demo index


@pytest.mark.parametrize("qid", ["q01", "q07", "q09", "q12", "q13"])
def test_ppr_on_the_demo_ranks_the_supporting_documents_in_the_top_k(
    demo_index: Index, replay_settings: Settings, replay_embedder, qid: str
) -> None:
    # q12 and q13 are multi-hop: both supporting documents must be among the top k (for q12
    # dense retrieval finds only one of the two). The context, by default, is the ranked
    # chunks that fit the answer budget, in rank order.
    method = PPRRetrieval(demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder)
    q = QUESTIONS.loc[qid, "question"]

    retrieval = run_sync(method.aretrieve_ranked(q))
    items = retrieval.items

    k = replay_settings.query.top_k
    units = demo_index.text_units.set_index(S.ID)
    ranking = [f"text_unit:{u}" for u in method.ranking(q)]
    assert retrieval.ranking == ranking[: len(retrieval.ranking)]
    top_k = [u.removeprefix("text_unit:") for u in ranking[:k]]
    support = set(QUESTIONS.loc[qid, "support"])
    assert support <= {d for u in top_k for d in units.loc[u, S.DOCUMENT_IDS]}
    sources = [i.source for i in items]
    assert sources == [s for s in ranking if s in sources]
    assert sources[:k] == ranking[:k], "the top k fit the budget"
    assert items_tokens(items) <= method.answer_budget(q) and len(items) > k
    assert [i.text for i in items] == [units.loc[i.source[10:], S.TEXT] for i in items]
