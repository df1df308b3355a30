"""A graph store on networkx, PageRank by its power iteration (to networkx's tolerance, 1e-6):
the engine before #59, kept for answers recorded on its last digits (MuSiQue's)."""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from graphrag.stores.protocols import Edge, backend


@backend("graph", "networkx")
class NetworkxGraphStore:
    def __init__(self, nodes: list[str], edges: list[Edge]) -> None:
        self.graph = nx.Graph()
        self.graph.add_nodes_from(nodes)
        self.graph.add_weighted_edges_from(edges)

    def nodes(self) -> list[str]:
        return list(self.graph)

    def neighbours(self, node: str) -> list[str]:
        return list(self.graph[node]) if node in self.graph else []

    def edges_among(self, nodes: Iterable[str]) -> list[Edge]:
        return list(self.graph.subgraph(nodes).edges(data="weight"))

    def personalized_pagerank(self, seeds: dict[str, float], damping: float) -> dict[str, float]:
        seeds = {n: w for n, w in seeds.items() if w > 0 and n in self.graph}
        if not seeds:
            return {}
        return nx.pagerank(self.graph, alpha=damping, personalization=seeds, weight="weight")

    def to_networkx(self) -> nx.Graph:
        return self.graph.copy()
