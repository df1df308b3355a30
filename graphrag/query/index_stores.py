"""The stores every method reads one index through: vector stores of its embeddings by id,
the BM25 index of its text units, a graph store for a method's graph, and the artifacts a
method builds on first use (fact vectors), kept by the index store for the next load."""

from __future__ import annotations

import hashlib
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.merge import fact_texts
from graphrag.index.store import Index
from graphrag.query.rankers import bm25_index
from graphrag.settings.query import QuerySettings
from graphrag.stores import GraphStore, VectorStore, backend_of
from graphrag.text.embeddings import Embedder


def _matrix(column: Any) -> np.ndarray:
    rows = [np.asarray(v, dtype=np.float32) for v in column]
    return np.stack(rows) if rows else np.zeros((0, 1), dtype=np.float32)


def _fact_matrix(relationships: pd.DataFrame, embedder: Embedder) -> np.ndarray:
    facts = fact_texts(relationships)
    return embedder.embed(facts) if facts else np.zeros((0, 1), dtype=np.float32)


class IndexStores:
    """An index's stores, shared by every method over it; ``graph`` and ``vectors`` name backends
    ("lancedb:s3://bucket/index": where a database keeps them; default ``vectors/<backend>``)."""

    def __init__(self, index: Index, graph: str | None = None, vectors: str | None = None) -> None:
        self.index = index
        self._graph = backend_of("graph", graph)
        name, _, self._location = (vectors or "").partition(":")
        self._vectors = backend_of("vector", name or None)
        if self._location and not getattr(self._vectors, "persists", False):
            raise ValueError(
                f"query.vector_store {vectors!r}: the {name!r} vector store keeps its vectors "
                "in memory, so it takes no location; name a database backend before the colon"
            )
        # an index in memory (no store, or a stand-in in a test) has no folder to keep them in
        stored = getattr(index, "store", None) is not None
        self._vector_folder = index.path / "vectors" / name if stored else None
        self._reports: tuple[Any, VectorStore] | None = None
        self._facts: VectorStore | None = None  # needs an embedder, so not a cached_property

    @classmethod
    def of(cls, index: Index, query: QuerySettings) -> IndexStores:
        """Return ``index``'s stores in the backends the ``[query]`` settings name."""
        return cls(index, graph=query.graph_store, vectors=query.vector_store)

    def vector_store(
        self, ids: list[str], matrix: np.ndarray, kind: str = "vectors"
    ) -> VectorStore:
        """Return a store of ``matrix``'s rows by id; a database backend keeps them as a
        table named by ``kind`` (and their hash) in its location."""
        if not getattr(self._vectors, "persists", False):
            return self._vectors(list(ids), matrix)
        location = self._location or self._vector_folder
        return self._vectors(list(ids), matrix, location=location, table=kind)

    def graph_store(self, nodes: list[str], edges: dict[tuple[str, str], float]) -> GraphStore:
        return self._graph(list(nodes), [(a, b, w) for (a, b), w in edges.items()])

    @cached_property
    def text_units(self) -> VectorStore:
        units = self.index.text_units
        return self.vector_store(list(units[S.ID]), _matrix(units[S.TEXT_EMBEDDING]), S.TEXT_UNITS)

    @cached_property
    def unit_text(self) -> pd.Series:
        units = self.index.text_units
        return pd.Series(list(units[S.TEXT]), index=pd.Index(list(units[S.ID]), dtype=object))

    @cached_property
    def entities(self) -> VectorStore:
        entities = self.index.entities
        matrix = _matrix(entities[S.DESCRIPTION_EMBEDDING])
        return self.vector_store(list(entities[S.ID]), matrix, S.ENTITIES)

    @cached_property
    def bm25(self) -> Any:
        """The BM25 index of the text units, in table order (None for an index without any)."""
        units = self.index.text_units
        return bm25_index(list(units[S.TEXT])) if len(units) else None

    @property
    def reports(self) -> VectorStore:
        """The reports' vectors by "report:<community>", rebuilt when a lazy index writes."""
        table = self.index.community_reports
        if self._reports is None or self._reports[0] is not table:
            ids = [f"report:{int(c)}" for c in table[S.COMMUNITY]]
            store = self.vector_store(ids, _matrix(table[S.FULL_CONTENT_EMBEDDING]), "reports")
            self._reports = (table, store)
        return self._reports[1]

    def facts(self, embedder: Embedder) -> VectorStore:
        """The relationships' fact vectors by relationship id: the index's own column, else
        the artifact a first use built, else embedded now and kept (docs/storage.md)."""
        if self._facts is None:
            self._facts = self._fact_store(embedder)
        return self._facts

    def _fact_store(self, embedder: Embedder) -> VectorStore:
        relationships = self.index.relationships
        ids = list(relationships[S.ID])
        if S.FACT_EMBEDDING in relationships:
            return self.vector_store(ids, _matrix(relationships[S.FACT_EMBEDDING]), "facts")
        store = self.index.store
        if store is None:  # an index made in memory keeps no artifact
            return self.vector_store(ids, _fact_matrix(relationships, embedder), "facts")
        model = hashlib.sha256(embedder.model_id.encode()).hexdigest()[:12]
        name = f"{S.FACT_EMBEDDING}-{model}"  # another embedder builds its own
        kept = store.get_artifact(name)
        if kept is not None and list(kept[S.ID]) == ids:
            return self.vector_store(ids, _matrix(kept[S.FACT_EMBEDDING]), "facts")
        matrix = _fact_matrix(relationships, embedder)
        store.put_artifact(name, pd.DataFrame({S.ID: ids, S.FACT_EMBEDDING: list(matrix)}))
        return self.vector_store(ids, matrix, "facts")

    def fact_scores(
        self, embedder: Embedder, relationships: pd.DataFrame, query: np.ndarray
    ) -> np.ndarray:
        if not len(relationships):
            return np.zeros(0)
        scores = self.facts(embedder).scores(query)
        return scores.reindex(list(relationships[S.ID])).to_numpy()
