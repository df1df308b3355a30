"""The storage seam (graphrag/stores/): each default store on its own, and every registered
method over a second, deliberately different implementation of each protocol (a dict-backed
vector store scoring in float64, and LanceDB's, the real engine; the networkx graph store
(power iteration, not PRPACK); an index store in memory), which must answer the demo's
questions from the committed cache exactly as the defaults do; and the graph methods over the
LadybugDB graph store (an embedded graph database) likewise."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from conftest import ANSWERED_ON_DEFAULTS, FakeLLM

from graphrag import schemas as S
from graphrag.index.store import Index, load_index, write_index
from graphrag.llm.client import ChatLLM
from graphrag.query.index_stores import IndexStores
from graphrag.query.registry import ALL_METHODS, make_methods
from graphrag.settings import REPO_ROOT
from graphrag.stores import UnknownBackendError, backend, backend_of
from graphrag.stores.igraph_graph import IGraphStore
from graphrag.stores.numpy_vectors import NumpyVectorStore
from graphrag.stores.parquet_folder import ParquetIndexStore
from graphrag.stores.protocols import BACKENDS
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")


@backend("vector", "dict")
class DictVectorStore:
    """Vectors in a dict by id, each scored on its own in float64."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self.vectors = {
            i: np.asarray(v, dtype=np.float64) for i, v in zip(ids, matrix, strict=True)
        }

    def ids(self) -> list[str]:
        return list(self.vectors)

    def scores(self, query: np.ndarray) -> pd.Series:
        q = np.asarray(query, dtype=np.float64)
        return pd.Series({i: float(v @ q) for i, v in self.vectors.items()}, dtype=np.float64)

    def top_k(
        self, query: np.ndarray, k: int, among: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        scores = self.scores(query)
        ids = list(self.vectors) if among is None else list(among)
        ranked = sorted(range(len(ids)), key=lambda p: (-scores[ids[p]], p))
        return [(ids[p], float(scores[ids[p]])) for p in ranked[:k]]


@backend("index", "memory")
class MemoryIndexStore:
    """Tables and artifacts in dicts, nothing on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tables: dict[str, pd.DataFrame] = {}
        self.manifest: dict[str, Any] = {}
        self.artifacts: dict[str, pd.DataFrame] = {}

    def read_tables(self) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        return dict(self.tables), dict(self.manifest)

    def write_tables(self, tables: dict[str, pd.DataFrame], manifest: dict[str, Any]) -> None:
        self.tables, self.manifest, self.artifacts = dict(tables), dict(manifest), {}

    def get_artifact(self, name: str) -> pd.DataFrame | None:
        return self.artifacts.get(name)

    def put_artifact(self, name: str, frame: pd.DataFrame) -> None:
        self.artifacts[name] = frame.copy()


def in_memory(index: Index) -> Index:
    """Return ``index`` over a memory index store, without its fact vectors (built on use)."""
    store = MemoryIndexStore(index.path)
    tables = {name: getattr(index, name) for name in S.TABLES}
    tables[S.RELATIONSHIPS] = tables[S.RELATIONSHIPS].drop(
        columns=[S.FACT_EMBEDDING], errors="ignore"
    )
    store.write_tables(tables, index.manifest)
    return Index(path=index.path, manifest=index.manifest, store=store, **store.read_tables()[0])


def answered(method: Any, question: str) -> dict[str, Any]:
    answer = method.answer(question)
    return {k: getattr(answer, k) for k in ("text", "contexts", "sources", "ranking", "failures")}


def scripted(body: dict[str, Any]) -> str:
    """A stand-in model for the methods whose demo answers are not recorded: every JSON step
    keeps its first item and names the bay; the answer cites its first context."""
    if body["messages"][0]["content"].startswith("You write one Cypher query"):
        return "MATCH (e:Entity) WHERE lower(e.title) CONTAINS 'kestrel' RETURN e.title"
    if "response_format" in body:
        return json.dumps(
            {
                "relevant": [1],
                "answer_type_keywords": ["ORGANIZATION"],
                "entities_from_query": ["Kestrel Bay Marine Institute"],
            }
        )
    return "The Kestrel Bay Marine Institute [1]."


@pytest.mark.parametrize("name", list(ALL_METHODS))
@pytest.mark.parametrize("qid", ["q01", "q11", "q19"])
@pytest.mark.parametrize("vectors", ["dict", "lancedb"])  # LanceDB: the real engine, exact
def test_every_method_answers_alike_over_other_stores(
    demo_index: Index, replay_settings, replay_embedder, make_settings, fake_llm: FakeLLM,
    name: str, qid: str, vectors: str, tmp_path: Path,
) -> None:  # fmt: skip
    settings = replay_settings
    if name not in ANSWERED_ON_DEFAULTS:  # not recorded: a scripted model, the same for both
        fake_llm.respond_with(scripted)
        settings = make_settings(fake_llm.base_url, cache={"mode": "off"})
    llm, question = ChatLLM(settings), QUESTIONS.loc[qid, "question"]
    default = make_methods(demo_index, [name], settings, llm, replay_embedder)[name]
    other_index = in_memory(demo_index)
    vectors = f"lancedb:{tmp_path}" if vectors == "lancedb" else vectors
    stores = IndexStores(other_index, graph="networkx", vectors=vectors)
    other = make_methods(other_index, [name], settings, llm, replay_embedder, stores)[name]
    expected = answered(default, question)
    assert expected["text"] and expected["sources"]
    assert answered(other, question) == expected


# the methods that walk a graph store (the others never build one)
GRAPH_METHODS = ["ppr", "hipporag"]


@pytest.mark.parametrize("name", GRAPH_METHODS)
@pytest.mark.parametrize("qid", ["q01", "q11", "q19"])
def test_graph_methods_answer_alike_over_the_ladybug_graph_store(
    demo_index: Index, replay_settings, replay_embedder, make_settings, fake_llm: FakeLLM,
    name: str, qid: str,
) -> None:  # fmt: skip
    settings = replay_settings
    if name not in ANSWERED_ON_DEFAULTS:
        fake_llm.respond_with(scripted)
        settings = make_settings(fake_llm.base_url, cache={"mode": "off"})
    llm, question = ChatLLM(settings), QUESTIONS.loc[qid, "question"]
    default = make_methods(demo_index, [name], settings, llm, replay_embedder)[name]
    stores = IndexStores(demo_index, graph="ladybug")
    other = make_methods(demo_index, [name], settings, llm, replay_embedder, stores)[name]
    expected = answered(default, question)
    assert expected["text"] and expected["sources"]
    assert answered(other, question) == expected
    assert type(other.graph).__name__ == "LadybugGraphStore"


# --------------------------------------------------------------------------- the defaults


def test_numpy_vector_store_ranks_ids_ties_in_stored_order() -> None:
    store = NumpyVectorStore(["a", "b", "c"], np.array([[1, 0], [0, 1], [1, 0]], np.float32))
    query = np.array([1, 0], np.float32)
    assert store.top_k(query, 2) == [("a", 1.0), ("c", 1.0)]
    assert store.top_k(query, 3, among=["c", "b", "a"]) == [("c", 1.0), ("a", 1.0), ("b", 0.0)]
    assert store.scores(query).to_dict() == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert NumpyVectorStore([], np.zeros((0, 2))).top_k(query, 3) == []
    with pytest.raises(Exception, match="another model"):
        store.top_k(np.ones(3, np.float32), 1)


def test_igraph_store_answers_the_graph_questions_and_matches_networkx_pagerank() -> None:
    edges = [("a", "b", 2.0), ("b", "c", 1.0), ("c", "d", 0.5), ("a", "c", 1.0)]
    store = IGraphStore(["a", "b", "c", "d", "lonely"], edges)
    assert store.nodes() == ["a", "b", "c", "d", "lonely"]
    assert sorted(store.neighbours("c")) == ["a", "b", "d"] and store.neighbours("x") == []
    assert sorted(store.edges_among(["a", "b", "c"])) == sorted(edges[:2] + edges[3:])
    assert (
        store.edges_among(["b", "a"]) == [("a", "b", 2.0)] and store.edges_among(["a", "d"]) == []
    )
    seeds = {"a": 1.0, "d": 0.5, "unknown": 3.0}
    scores = store.personalized_pagerank(seeds, 0.5)
    graph = store.to_networkx()
    assert graph.edges["a", "b"]["weight"] == 2.0 and "lonely" in graph
    expected = nx.pagerank(graph, alpha=0.5, personalization={"a": 1.0, "d": 0.5}, tol=1e-12)
    assert scores == pytest.approx(expected, abs=1e-9)
    assert store.personalized_pagerank({"a": 0.0, "unknown": 1.0}, 0.5) == {}


def test_parquet_store_keeps_artifacts_until_the_index_is_written_again(
    demo_index: Index, tmp_path: Path
) -> None:
    tables = {name: getattr(demo_index, name) for name in S.TABLES}
    write_index(tables, tmp_path / "index", demo_index.manifest)
    store = ParquetIndexStore(tmp_path / "index")
    assert store.get_artifact("vectors") is None
    frame = pd.DataFrame({S.ID: ["r1", "r2"], "vector": [[0.5, 0.5], [1.0, 0.0]]})
    store.put_artifact("vectors", frame)
    kept = ParquetIndexStore(tmp_path / "index").get_artifact("vectors")
    assert kept[S.ID].tolist() == ["r1", "r2"] and list(kept["vector"][1]) == [1.0, 0.0]
    write_index(tables, tmp_path / "index", demo_index.manifest)
    assert store.get_artifact("vectors") is None, "a new index starts without the old artifacts"


class CountingEmbedder:
    """The replay embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.texts = inner, 0
        self.model_id = inner.model_id

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += len(texts)
        return self.inner.embed(texts)

    def embed_one(self, text: str) -> np.ndarray:
        return self.inner.embed_one(text)


def test_fact_vectors_are_built_once_kept_by_the_index_store_and_reused(
    demo_index: Index, replay_embedder, tmp_path: Path
) -> None:
    tables = {name: getattr(demo_index, name) for name in S.TABLES}
    relationships = tables[S.RELATIONSHIPS].drop(columns=[S.FACT_EMBEDDING], errors="ignore")
    write_index({**tables, S.RELATIONSHIPS: relationships}, tmp_path / "ix", demo_index.manifest)
    question = replay_embedder.embed_one(QUESTIONS.loc["q11", "question"])
    embedder = CountingEmbedder(replay_embedder)

    first = IndexStores(load_index(tmp_path / "ix")).facts(embedder)
    assert embedder.texts == len(relationships)
    again = IndexStores(load_index(tmp_path / "ix")).facts(embedder)
    assert embedder.texts == len(relationships), "the next load reads the kept artifact"
    assert again.top_k(question, 5) == first.top_k(question, 5)
    assert first.ids() == list(relationships[S.ID])


def test_a_backend_is_chosen_by_name_and_an_unknown_one_is_named() -> None:
    assert backend_of("graph") is IGraphStore and backend_of("vector") is NumpyVectorStore
    assert backend_of("index") is ParquetIndexStore
    assert backend_of("vector", "dict") is DictVectorStore and "memory" in BACKENDS["index"]
    with pytest.raises(UnknownBackendError, match="known: igraph, ladybug, networkx"):
        backend_of("graph", "neo4j")
