"""MiniRAG's arithmetic over table rows and arrays (seeds, paths, chunk scores), with no model, so
each step can be checked by hand; it follows HKUDS/MiniRAG at commit 4fe2fba (line numbers
below are of its minirag/operate.py and minirag/utils.py)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from graphrag import schemas as S

# operate.py:1302: seeds with no neighbour are kept only as the best-scored 20% (at least one)
ISOLATED_SHARE = 0.2
# operate.py:1171-1172: an entity on a path mentioned in more than 5 chunks gives only its
# max(5, n/2) chunks nearest the question
MENTIONS_KEPT_ABOVE = 5
# operate.py:1339: each seed keeps the 3 best chunks of its paths
CHUNKS_PER_SEED = 3
# operate.py:1229: the best-matched seed of a query entity counts twice
FIRST_SEED_BOOST = 2.0
# operate.py:1235-1236: a seed whose best chunk is among the question's nearest chunks counts
# ten times, for that chunk and the ones after it (the code multiplies a running score)
DENSE_HIT_BOOST = 10.0

Pair = tuple[int, int]


def pair(a: int, b: int) -> Pair:
    return (a, b) if a < b else (b, a)


@dataclass
class ChunkEntityGraph:
    """MiniRAG's heterogeneous graph over table rows: entity-entity edges (relationships),
    chunk-entity edges (an entity's mentions), and the chunks each relationship came from."""

    neighbours: list[np.ndarray]  # entity row -> entity rows
    mentions: sparse.csr_matrix  # entities x text units, 1 where the entity is mentioned
    edge_chunks: dict[Pair, np.ndarray]  # entity pair -> text-unit rows of its relationships

    @classmethod
    def from_tables(
        cls, entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
    ) -> ChunkEntityGraph:
        entity_row = {e: i for i, e in enumerate(entities[S.ID])}
        unit_row = {u: i for i, u in enumerate(text_units[S.ID])}
        adjacency: list[set[int]] = [set() for _ in range(len(entities))]
        edge_chunks: dict[Pair, set[int]] = defaultdict(set)
        for source, target, units in zip(
            relationships[S.SOURCE_ID],
            relationships[S.TARGET_ID],
            relationships[S.TEXT_UNIT_IDS],
            strict=True,
        ):
            a, b = entity_row.get(source), entity_row.get(target)
            if a is None or b is None or a == b:
                continue
            adjacency[a].add(b)
            adjacency[b].add(a)
            edge_chunks[pair(a, b)].update(unit_row[u] for u in units if u in unit_row)
        rows, cols = [], []
        for row, units in enumerate(entities[S.TEXT_UNIT_IDS]):
            found = sorted({unit_row[u] for u in units if u in unit_row})
            rows += [row] * len(found)
            cols += found
        mentions = sparse.csr_matrix(
            (np.ones(len(rows)), (rows, cols)), shape=(len(entities), len(text_units))
        )
        return cls(
            [np.array(sorted(n), dtype=np.int64) for n in adjacency],
            mentions,
            {p: np.array(sorted(u), dtype=np.int64) for p, u in edge_chunks.items()},
        )

    def path_mentions(self, unit_scores: np.ndarray) -> sparse.csr_matrix:
        """Return the mentions an entity gives as a path's 2nd or 3rd node: all, or for one in more
        than 5 chunks the max(5, n/2) nearest the question."""
        data = self.mentions.data.copy()
        indptr, indices = self.mentions.indptr, self.mentions.indices
        for row in np.flatnonzero(np.diff(indptr) > MENTIONS_KEPT_ABOVE):
            start, end = indptr[row], indptr[row + 1]
            keep = int(max(MENTIONS_KEPT_ABOVE, (end - start) / 2))
            order = np.argsort(-unit_scores[indices[start:end]], kind="stable")
            data[start + order[keep:]] = 0.0
        kept = sparse.csr_matrix((data, indices, indptr), shape=self.mentions.shape)
        kept.eliminate_zeros()
        return kept


def top_matches(scores: np.ndarray, k: int, min_similarity: float) -> list[int]:
    """Return the rows of the ``k`` best ``scores`` at or above ``min_similarity``, best
    first (ties by row): a vector store query with MiniRAG's threshold."""
    order = np.argsort(-scores, kind="stable")[:k]
    return [int(r) for r in order if scores[r] >= min_similarity]


def seed_entities(matched: list[list[int]], scores: list[np.ndarray]) -> dict[int, float]:
    """Return the seed entities of every query entity with their name similarity; an entity
    matched twice keeps the later query entity's similarity (operate.py:1278-1287)."""
    seeds: dict[int, float] = {}
    for rows, similarity in zip(matched, scores, strict=True):
        seeds.update({r: float(similarity[r]) for r in rows})
    return seeds


def drop_isolated(seeds: dict[int, float], graph: ChunkEntityGraph) -> dict[int, float]:
    """Return ``seeds`` without the isolated ones (no path) past the best 20% of them."""
    isolated = [s for s in seeds if not len(graph.neighbours[s])]
    isolated.sort(key=lambda s: -seeds[s])
    kept = set(isolated[: max(1, int(len(isolated) * ISOLATED_SHARE))])
    return {s: w for s, w in seeds.items() if len(graph.neighbours[s]) or s in kept}


def good_edges(fact_rows: list[int], fact_ends: list[Pair], important: set[int]) -> dict[Pair, int]:
    """Return {entity pair: rank} of the question's matched facts that touch an important
    entity (a seed or an answer-type entity), best-ranked fact per pair (operate.py:1321-1330)."""
    ranks: dict[Pair, int] = {}
    for rank, row in enumerate(fact_rows):
        a, b = fact_ends[row]
        if a != b and (a in important or b in important):
            ranks.setdefault(pair(a, b), rank)
    return ranks


def seed_chunk_scores(
    seed: int,
    graph: ChunkEntityGraph,
    answer: np.ndarray,
    edges: dict[Pair, int],
    edges_at: dict[int, dict[int, int]],
    kept_mentions: sparse.csr_matrix,
) -> np.ndarray:
    """Return every text unit's score for one seed: the sum over the seed's two-hop paths
    (seed, n, x), x != seed (or (seed, n) when n leads nowhere else), of the path's score
    1 + answer-type nodes + matched facts on it (utils.py:404-437, operate.py:1186), times the
    path's chunks: the seed's mentions, n's and x's kept mentions, and the chunks of the
    best-ranked matched fact on the path (operate.py:1132-1184). ``edges_at``: entity ->
    {other end: rank} of ``edges``."""
    node_weight = np.zeros(len(graph.neighbours))
    edge_weight: dict[Pair, float] = defaultdict(float)
    total = 0.0
    for n in graph.neighbours[seed]:
        first = pair(seed, n)
        base = 1.0 + answer[seed] + answer[n] + (first in edges)
        ends = graph.neighbours[n]
        ends = ends[ends != seed]
        at_n = edges_at.get(int(n), {})
        second = np.array([x in at_n for x in ends.tolist()], dtype=bool) if at_n else None
        weights = base + answer[ends] + (second if second is not None else 0.0)
        path_sum = float(weights.sum()) if len(ends) else base
        total += path_sum
        node_weight[n] += path_sum
        node_weight[ends] += weights
        if second is None or not second.any():
            if first in edges:
                edge_weight[first] += path_sum
            continue
        for x, w, matched in zip(ends.tolist(), weights.tolist(), second.tolist(), strict=True):
            options = [e for e in (first, pair(n, x) if matched else None) if e in edges]
            if options:
                edge_weight[min(options, key=edges.__getitem__)] += w
    scores = np.asarray(kept_mentions.T @ node_weight).ravel()
    scores += total * graph.mentions[seed].toarray().ravel()
    if not len(graph.neighbours[seed]):
        scores += graph.mentions[seed].toarray().ravel()  # no path: its own chunks, once each
    for edge, weight in edge_weight.items():
        scores[graph.edge_chunks.get(edge, np.zeros(0, dtype=np.int64))] += weight
    return scores


def best_chunks(scores: np.ndarray, dense_position: np.ndarray, k: int) -> list[int]:
    """Return the ``k`` best-scored text-unit rows (score > 0), ties by dense rank."""
    order = np.lexsort((dense_position, -scores))[:k]
    return [int(u) for u in order if scores[u] > 0]


def rank_seed_chunks(
    matched: list[list[int]],
    seeds: dict[int, float],
    chunks: dict[int, list[int]],
    dense_top: set[int],
) -> dict[int, float]:
    """Return each text unit's final score (``kwd2chunk``, operate.py:1220-1249): each kept seed
    adds its similarity (doubled for the first) to its chunks, x10 from a best chunk in the dense
    top."""
    final: dict[int, float] = defaultdict(float)
    for rows in matched:
        kept = [r for r in rows if r in seeds]
        for i, seed in enumerate(kept):
            score = seeds[seed] * (FIRST_SEED_BOOST if i == 0 else 1.0)
            for j, unit in enumerate(chunks[seed]):
                if j == 0 and unit in dense_top:
                    score *= DENSE_HIT_BOOST
                final[unit] += score
    return dict(final)
