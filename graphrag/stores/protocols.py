"""The three storage protocols methods read an index through, and the backends by name. They speak
ids, never row positions, so a database fits behind one without a method changing; a backend
registers itself with ``@backend(kind, name)`` (docs/storage.md)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import networkx as nx
import numpy as np
import pandas as pd

Edge = tuple[str, str, float]  # (node, node, weight) of an undirected graph


class IndexStore(Protocol):
    """An index's tables and its artifacts (default: the parquet folder)."""

    path: Path

    def read_tables(self) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        """Return every table by name, and the manifest."""

    def write_tables(self, tables: dict[str, pd.DataFrame], manifest: dict[str, Any]) -> None:
        """Replace the index with ``tables`` and ``manifest`` (artifacts go with it)."""

    def get_artifact(self, name: str) -> pd.DataFrame | None:
        """Return the artifact ``name`` built after indexing, or None if none is kept."""

    def put_artifact(self, name: str, frame: pd.DataFrame) -> None:
        """Keep ``frame`` as the artifact ``name``, for the next load to reuse."""


class GraphStore(Protocol):
    """An undirected weighted graph over string node ids (default: igraph in memory)."""

    def nodes(self) -> list[str]:
        """Return every node id, in the order they were given."""

    def neighbours(self, node: str) -> list[str]:
        """Return the nodes sharing an edge with ``node`` (none for an unknown node)."""

    def edges_among(self, nodes: Iterable[str]) -> list[Edge]:
        """Return the edges whose two ends are both in ``nodes`` (the induced subgraph; of
        two nodes: the edge between them)."""

    def personalized_pagerank(self, seeds: dict[str, float], damping: float) -> dict[str, float]:
        """Return each node's PageRank personalized on ``seeds`` (weights need not sum to 1;
        unknown and non-positive seeds are ignored; empty when no seed is left)."""

    def to_networkx(self) -> nx.Graph:
        """Return the graph as networkx (for notebooks and exports)."""


class VectorStore(Protocol):
    """Vectors by id, ranked by cosine with a query (default: numpy brute force)."""

    def ids(self) -> list[str]:
        """Return every id, in the order they were stored."""

    def top_k(
        self, query: np.ndarray, k: int, among: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        """Return (id, score) of the ``k`` ids nearest ``query`` (only those of ``among``
        when given), best first; ties in stored order (``among``'s order when given)."""

    def scores(self, query: np.ndarray) -> pd.Series:
        """Return every id's score with ``query``, indexed by id, in stored order."""


BACKENDS: dict[str, dict[str, Callable[..., Any]]] = {"index": {}, "graph": {}, "vector": {}}
DEFAULTS = {"index": "parquet", "graph": "igraph", "vector": "numpy"}


class UnknownBackendError(ValueError):
    """A storage backend name that is not registered; the message lists the known ones."""


def backend(kind: str, name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a factory as the ``kind`` backend ``name``: an index store from a folder, a graph
    store from (nodes, edges), a vector store from (ids, row matrix)."""

    def add(factory: Callable[..., Any]) -> Callable[..., Any]:
        BACKENDS[kind][name] = factory
        return factory

    return add


def backend_of(kind: str, name: str | None = None) -> Callable[..., Any]:
    """Return the registered ``kind`` backend ``name`` (None: the default)."""
    name = name or DEFAULTS[kind]
    try:
        return BACKENDS[kind][name]
    except KeyError:
        known = ", ".join(sorted(BACKENDS[kind]))
        raise UnknownBackendError(f"no {kind} store named {name!r}; known: {known}") from None
