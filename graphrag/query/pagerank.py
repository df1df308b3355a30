"""What ``ppr`` and ``hipporag`` share: the node names of their entity-chunk graphs, the
min-max scaling of scores, fact scores, and the chunks ranked by a Personalized PageRank the
graph store runs (igraph's PRPACK by default, as HippoRAG 2)."""

from __future__ import annotations

import numpy as np

from graphrag.stores import GraphStore

ENTITY = "entity:"
TEXT_UNIT = "text_unit:"
# The probability of following an edge in the walk: HippoRAG 2's 0.5 (its config_utils.py
# ``damping``), for both methods.
DAMPING = 0.5


def min_max(scores: np.ndarray) -> np.ndarray:
    """Return ``scores`` scaled to [0, 1] (all ones when they are all equal), as HippoRAG's
    ``min_max_normalize`` does for fact and passage scores."""
    if not len(scores):
        return scores
    span = float(scores.max() - scores.min())
    return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)


def rank_chunks(scores: dict[str, float], dense_order: list[str]) -> list[str]:
    """Return the chunk ids by PageRank score, ties (and unscored runs) in dense order."""
    position = {u: i for i, u in enumerate(dense_order)}
    return sorted(dense_order, key=lambda u: (-scores.get(TEXT_UNIT + u, 0.0), position[u]))


def walked(
    graph: GraphStore, seeds: dict[str, float], damping: float, first: list[str]
) -> list[str]:
    return rank_chunks(graph.personalized_pagerank(seeds, damping), first)
