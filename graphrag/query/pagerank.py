"""What ``ppr`` and ``hipporag`` share: node names, min-max scaling, undirected edges, and the
chunks ranked by the graph store's Personalized PageRank (igraph's PRPACK, as HippoRAG 2)."""

from __future__ import annotations

import numpy as np

from graphrag.stores import GraphStore

ENTITY = "entity:"
TEXT_UNIT = "text_unit:"
DAMPING = 0.5  # the walk's probability of following an edge: HippoRAG 2's (config_utils.py)


def min_max(scores: np.ndarray) -> np.ndarray:
    """Return ``scores`` scaled to [0, 1] (all ones when equal), as HippoRAG's min_max_normalize."""
    if not len(scores):
        return scores
    span = float(scores.max() - scores.min())
    return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)


def rank_chunks(scores: dict[str, float], dense_order: list[str]) -> list[str]:
    """Return the chunk ids by PageRank score, ties (and unscored runs) in dense order."""
    position = {u: i for i, u in enumerate(dense_order)}
    return sorted(dense_order, key=lambda u: (-scores.get(TEXT_UNIT + u, 0.0), position[u]))


def walked(graph: GraphStore, seeds: dict[str, float], first: list[str]) -> list[str]:
    """Return the chunks ``first`` ranked by a PageRank walk from ``seeds``."""
    return rank_chunks(graph.personalized_pagerank(seeds, DAMPING), first)


def undirected(edges: dict[tuple[str, str], float], a: str, b: str, weight: float) -> None:
    """Add ``weight`` to the undirected edge a-b of ``edges`` (keyed as first given)."""
    key = (b, a) if (b, a) in edges else (a, b)
    edges[key] = edges.get(key, 0.0) + weight
