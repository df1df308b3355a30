"""BM25 (bm25s) and reciprocal rank fusion: what ``bm25``, ``hybrid``, ``multi_query`` and every
method under ``query.first_stage = "hybrid"`` rank text units by beside the cosine."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

import bm25s
import numpy as np

from graphrag.text import lang

# the textbook values (bm25s' defaults): K1, a repeated word's saturation; B, length scaling
K1 = 1.5
B = 0.75
# Cormack, Clarke and Büttcher (SIGIR 2009), "Reciprocal rank fusion outperforms Condorcet and
# individual rank learning methods": k = 60, which damps a ranking's top places, so that no
# single ranking decides.
RRF_K = 60


def tokenize(texts: list[str]) -> list[list[str]]:
    """Return each text's search words by its language (English as bm25s's, Chinese by jieba)."""
    return [lang.words(text) for text in texts]


def bm25_index(texts: list[str]) -> bm25s.BM25:
    """Return the BM25 index of ``texts`` (at least one)."""
    scorer = bm25s.BM25(k1=K1, b=B)
    scorer.index(tokenize(texts), show_progress=False)
    return scorer


def bm25_scores(scorer: bm25s.BM25 | None, size: int, query: str) -> np.ndarray:
    """Return the BM25 score of each of the ``size`` indexed texts for ``query``'s words (all
    0 when it has none, or when nothing is indexed: ``scorer`` None)."""
    words = tokenize([query])[0]
    if scorer is None or not words:
        return np.zeros(size, dtype=np.float32)
    return scorer.get_scores(words)


def descending(scores: np.ndarray) -> list[int]:
    """Return the rows of ``scores``, best first (ties by row)."""
    return [int(r) for r in np.argsort(-scores, kind="stable")]


def reciprocal_rank_scores(
    rankings: Sequence[Sequence[Hashable]], k: int = RRF_K
) -> dict[Hashable, float]:
    """Return each item's fused score sum(1 / (k + rank)) over ``rankings`` (ranks from 1), in
    order of first appearance."""
    scores: dict[Hashable, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] += 1.0 / (k + rank)
    return dict(scores)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hashable]], k: int = RRF_K
) -> list[Hashable]:
    """Return the items of all rankings by fused score sum(1 / (k + rank)), ranks from 1;
    ties keep the order of first appearance."""
    scores = reciprocal_rank_scores(rankings, k)
    return sorted(scores, key=lambda item: -scores[item])


def hybrid_ranking(dense: np.ndarray, lexical: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Return the rows best first and their fused score: RRF of the ``dense`` ranking and the
    ``lexical`` one (rows with a positive score only); ties in dense order."""
    dense_rows = descending(dense)
    lexical_rows = [r for r in descending(lexical) if lexical[r] > 0]
    fused = reciprocal_rank_scores([dense_rows, lexical_rows])
    scores = np.array([fused[r] for r in range(len(dense))], dtype=np.float64)
    return sorted(fused, key=lambda row: -fused[row]), scores
