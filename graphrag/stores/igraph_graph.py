"""The default graph store: igraph in memory, built from an edge list; Personalized PageRank by
PRPACK, as HippoRAG 2 runs it; networkx only for export."""

from __future__ import annotations

from collections.abc import Iterable

import igraph as ig
import networkx as nx
import numpy as np

from graphrag.stores.protocols import Edge, backend


@backend("graph", "igraph")
class IGraphStore:
    """An undirected weighted graph; one edge per pair of nodes (``edges`` gives each once)."""

    def __init__(self, nodes: list[str], edges: list[Edge]) -> None:
        names = list(dict.fromkeys([*nodes, *(n for a, b, _ in edges for n in (a, b))]))
        self._vertex = {n: v for v, n in enumerate(names)}
        self._names = names
        self.graph = ig.Graph(
            n=len(names),
            edges=[(self._vertex[a], self._vertex[b]) for a, b, _ in edges],
            directed=False,
        )
        self.graph.es["weight"] = [float(w) for _, _, w in edges]

    def nodes(self) -> list[str]:
        return list(self._names)

    def neighbours(self, node: str) -> list[str]:
        vertex = self._vertex.get(node)
        return [] if vertex is None else [self._names[v] for v in self.graph.neighbors(vertex)]

    def edges_among(self, nodes: Iterable[str]) -> list[Edge]:
        vertices = sorted({self._vertex[n] for n in nodes if n in self._vertex})
        edges = self.graph.es.select(_within=vertices)
        return [(self._names[e.source], self._names[e.target], e["weight"]) for e in edges]

    def personalized_pagerank(self, seeds: dict[str, float], damping: float) -> dict[str, float]:
        reset = np.zeros(len(self._names))
        for node, weight in seeds.items():
            if weight > 0 and node in self._vertex:
                reset[self._vertex[node]] += weight
        if not reset.any():
            return {}
        scores = self.graph.personalized_pagerank(
            directed=False,
            damping=damping,
            reset=reset.tolist(),
            weights="weight" if self.graph.ecount() else None,
            implementation="prpack",
        )
        return dict(zip(self._names, scores, strict=True))

    def to_networkx(self) -> nx.Graph:
        graph = nx.Graph()
        graph.add_nodes_from(self._names)
        graph.add_weighted_edges_from(
            (self._names[e.source], self._names[e.target], e["weight"]) for e in self.graph.es
        )
        return graph
