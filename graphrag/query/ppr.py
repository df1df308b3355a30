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

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.query.base import Method, Retrieval
from graphrag.query.index_stores import undirected
from graphrag.query.pagerank import DAMPING, ENTITY, TEXT_UNIT, min_max, walked
from graphrag.query.registry import register
from graphrag.stores import GraphStore


def entity_chunk_edges(
    entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
) -> tuple[list[str], dict[tuple[str, str], float]]:
    """Return the nodes and undirected edges of the graph of ``entity:<id>`` and
    ``text_unit:<id>`` nodes: relationship edges weighted over the largest weight, mention
    edges of weight 1."""
    nodes = [TEXT_UNIT + u for u in text_units[S.ID]] + [ENTITY + e for e in entities[S.ID]]
    edges: dict[tuple[str, str], float] = {}
    top = float(relationships[S.WEIGHT].max()) if len(relationships) else 1.0
    for source, target, weight in zip(
        relationships[S.SOURCE_ID], relationships[S.TARGET_ID], relationships[S.WEIGHT], strict=True
    ):
        if source != target:
            undirected(edges, ENTITY + source, ENTITY + target, float(weight) / (top or 1.0))
    units = set(text_units[S.ID])
    for entity, mentioned in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True):
        for unit in mentioned:
            if unit in units:
                edges[(ENTITY + entity, TEXT_UNIT + unit)] = 1.0
    return nodes, edges


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


def chunk_seeds(scores: pd.Series, weight: float) -> dict[str, float]:
    """Return the first-stage seeds of chunk nodes (``scores`` by text-unit id): min-max
    normalized, times ``weight``."""
    if not len(scores) or weight <= 0:
        return {}
    scaled = min_max(scores.to_numpy())
    return {TEXT_UNIT + u: weight * float(s) for u, s in zip(scores.index, scaled, strict=True)}


@dataclass
class PPRSettings:
    """``[query.ppr]``: HippoRAG 2's Personalized PageRank over entities and chunks."""

    top_entities: int = 5
    """Facts whose two ends are seeded, and the seeds kept."""
    # HippoRAG 2 uses 0.05 for thousands of passages (why 1.0: docs/defaults-provenance.md)
    passage_weight: float = 1.0
    """Weight of the dense question-chunk seeds beside the entity seeds."""


@register("ppr", settings=PPRSettings, opt_in=True, order=70)
class PPRRetrieval(Method):
    options: PPRSettings

    @cached_property
    def graph(self) -> GraphStore:
        entities, relationships = self.graph_tables
        return self.stores.graph_store(
            *entity_chunk_edges(entities, relationships, self.index.text_units)
        )

    def seeds(self, question_vector: np.ndarray, chunk_scores: pd.Series) -> dict[str, float]:
        """Return the personalization of the walk: matched entities and the chunks' first-stage
        scores (dense similarity; the fused score under ``query.first_stage = "hybrid"``)."""
        entities, rel = self.graph_tables
        seeds = entity_seeds(
            list(zip(rel[S.SOURCE_ID], rel[S.TARGET_ID], strict=True)),
            self.stores.fact_scores(self.embedder, rel, question_vector),
            {e: len(u) for e, u in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True)},
            self.options.top_entities,
        )
        seeds.update(chunk_seeds(chunk_scores, self.options.passage_weight))
        return seeds

    def ranking(self, question: str) -> list[str]:
        vector = self.embedder.embed_one(question)
        first, first_scores = self.first_stage(vector, question)
        seeds = self.seeds(vector, first_scores)
        return walked(self.graph, seeds, DAMPING, first)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
