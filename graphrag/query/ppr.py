"""Personalized-PageRank retrieval in the style of HippoRAG 2: the graph picks the chunks.

No LLM at retrieval time. The facts (relationships) nearest the question seed their two
entities (similarity over the entity's chunk count: a hub says little), the chunks are seeded
by dense similarity (``passage_weight``), and PageRank over the entity-chunk graph ranks the
chunks (dense rank breaks ties). Under ``query.first_stage = "hybrid"`` the chunk seeds and
the tie order are the hybrid ranking's (dense fused with BM25); the facts stay dense.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import networkx as nx
import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.merge import fact_texts
from graphrag.query.base import IndexVectors, Method, Retrieval
from graphrag.query.registry import register
from graphrag.text.embeddings import Embedder

ENTITY = "entity:"
TEXT_UNIT = "text_unit:"


def entity_chunk_graph(
    entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
) -> nx.Graph:
    """Return the undirected graph of ``entity:<id>`` and ``text_unit:<id>`` nodes: relationship
    edges weighted over the largest weight, mention edges of weight 1."""
    graph = nx.Graph()
    graph.add_nodes_from(TEXT_UNIT + u for u in text_units[S.ID])
    graph.add_nodes_from(ENTITY + e for e in entities[S.ID])
    top = float(relationships[S.WEIGHT].max()) if len(relationships) else 1.0
    for source, target, weight in zip(
        relationships[S.SOURCE_ID], relationships[S.TARGET_ID], relationships[S.WEIGHT], strict=True
    ):
        a, b = ENTITY + source, ENTITY + target
        if a == b:
            continue
        previous = graph.edges[a, b]["weight"] if graph.has_edge(a, b) else 0.0
        graph.add_edge(a, b, weight=previous + float(weight) / (top or 1.0))
    units = set(text_units[S.ID])
    for entity, mentioned in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True):
        for unit in mentioned:
            if unit in units:
                graph.add_edge(ENTITY + entity, TEXT_UNIT + unit, weight=1.0)
    return graph


def entity_seeds(
    fact_ends: list[tuple[str, str]],
    fact_scores: np.ndarray,
    chunk_counts: dict[str, int],
    top_n: int,
) -> dict[str, float]:
    """Return the seed weight of the ``top_n`` entities best matched by a fact."""
    weights: dict[str, float] = {}
    for row in np.argsort(-fact_scores, kind="stable")[:top_n]:
        score = max(float(fact_scores[row]), 0.0)
        for entity in fact_ends[row]:
            weights[entity] = weights.get(entity, 0.0) + score / max(chunk_counts.get(entity, 1), 1)
    heaviest = sorted(weights, key=lambda e: -weights[e])[:top_n]
    return {ENTITY + e: weights[e] for e in heaviest if weights[e] > 0}


def min_max(scores: np.ndarray) -> np.ndarray:
    """Return ``scores`` scaled to [0, 1] (all ones when they are all equal), as HippoRAG's
    ``min_max_normalize`` does for fact and passage scores."""
    if not len(scores):
        return scores
    span = float(scores.max() - scores.min())
    return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)


def chunk_seeds(unit_ids: list[str], scores: np.ndarray, weight: float) -> dict[str, float]:
    """Return the dense-similarity seeds of chunk nodes: min-max normalized, times ``weight``."""
    if not len(scores) or weight <= 0:
        return {}
    return {
        TEXT_UNIT + u: weight * float(s) for u, s in zip(unit_ids, min_max(scores), strict=True)
    }


def personalized_pagerank(
    graph: nx.Graph, seeds: dict[str, float], damping: float
) -> dict[str, float]:
    """Return each node's PageRank personalized on ``seeds`` (empty when no seed weighs)."""
    seeds = {n: w for n, w in seeds.items() if w > 0 and n in graph}
    if not seeds:
        return {}
    return nx.pagerank(graph, alpha=damping, personalization=seeds, weight="weight")


def rank_chunks(scores: dict[str, float], dense_order: list[str]) -> list[str]:
    """Return the chunk ids by PageRank score, ties (and unscored runs) in dense order."""
    position = {u: i for i, u in enumerate(dense_order)}
    return sorted(dense_order, key=lambda u: (-scores.get(TEXT_UNIT + u, 0.0), position[u]))


def walked_rows(
    graph: nx.Graph, seeds: dict[str, float], damping: float, first_rows: list[int], ids: list[str]
) -> list[int]:
    """Return the text-unit rows ``first_rows`` by their PageRank personalized on ``seeds``,
    ties in ``first_rows``' order (``ids``: each row's text-unit id)."""
    scores = personalized_pagerank(graph, seeds, damping)
    row_of = {ids[r]: r for r in first_rows}
    return [row_of[u] for u in rank_chunks(scores, [ids[r] for r in first_rows])]


def fact_vectors(vectors: IndexVectors, embedder: Embedder) -> np.ndarray:
    """Return the index's fact vectors (an older index's facts are embedded here)."""
    if vectors.facts is not None:
        return vectors.facts
    facts = fact_texts(vectors.index.relationships)
    return embedder.embed(facts) if facts else np.zeros((0, 1), dtype=np.float32)


@dataclass
class PPRSettings:
    """``[query.ppr]``: HippoRAG 2's Personalized PageRank over entities and chunks."""

    top_entities: int = 5
    """Facts whose two ends are seeded, and the seeds kept."""
    damping: float = 0.5
    """Probability of following an edge (HippoRAG 2: 0.5)."""
    # HippoRAG 2: 0.05, for thousands of passages; 1.0 was chosen on the demo (research log).
    passage_weight: float = 1.0
    """Weight of the dense question-chunk seeds beside the entity seeds."""


@register("ppr", settings=PPRSettings, opt_in=True, order=70)
class PPRRetrieval(Method):
    options: PPRSettings

    @cached_property
    def graph(self) -> nx.Graph:
        entities, relationships = self.graph_tables
        return entity_chunk_graph(entities, relationships, self.index.text_units)

    @cached_property
    def fact_vectors(self) -> np.ndarray:
        return fact_vectors(self.vectors, self.embedder)

    def seeds(self, question_vector: np.ndarray, chunk_scores: np.ndarray) -> dict[str, float]:
        """Return the personalization of the walk: matched entities and the chunks' first-stage
        scores (dense similarity; the fused score under ``query.first_stage = "hybrid"``)."""
        (entities, rel), units = self.graph_tables, self.index.text_units
        fact_scores = self.fact_vectors @ question_vector if len(rel) else np.zeros(0)
        seeds = entity_seeds(
            list(zip(rel[S.SOURCE_ID], rel[S.TARGET_ID], strict=True)),
            fact_scores,
            {e: len(u) for e, u in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True)},
            self.options.top_entities,
        )
        seeds.update(chunk_seeds(list(units[S.ID]), chunk_scores, self.options.passage_weight))
        return seeds

    def ranking(self, question: str) -> list[int]:
        """Return the rows of the text units, best first, by Personalized PageRank."""
        vector = self.embedder.embed_one(question)
        first_rows, first_scores = self.first_stage(vector, question)
        seeds = self.seeds(vector, first_scores)
        ids = list(self.index.text_units[S.ID])
        return walked_rows(self.graph, seeds, self.options.damping, first_rows, ids)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
