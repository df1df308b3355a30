"""Personalized-PageRank retrieval in the style of HippoRAG 2, with no LLM call (the earlier,
looser port; its answers are recorded): facts nearest the question seed their entities (over
their chunk counts), chunks are seeded by first-stage score, and PageRank ranks the chunks."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.query.base import Method, Retrieval
from graphrag.query.pagerank import ENTITY, TEXT_UNIT, min_max, undirected, walked
from graphrag.query.registry import register
from graphrag.stores import GraphStore


def entity_chunk_edges(entities: pd.DataFrame, relationships: pd.DataFrame, text_units):
    """Return the nodes and undirected edges of the ``entity:``/``text_unit:`` graph:
    relationships weighted over the largest weight, mentions of weight 1."""
    nodes = [TEXT_UNIT + u for u in text_units[S.ID]] + [ENTITY + e for e in entities[S.ID]]
    edges: dict[tuple[str, str], float] = {}
    top = float(relationships[S.WEIGHT].max()) if len(relationships) else 1.0
    ends = (relationships[c] for c in (S.SOURCE_ID, S.TARGET_ID, S.WEIGHT))
    for source, target, weight in zip(*ends, strict=True):
        if source != target:
            undirected(edges, ENTITY + source, ENTITY + target, float(weight) / (top or 1.0))
    units = set(text_units[S.ID])
    for entity, mentioned in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True):
        edges.update({(ENTITY + entity, TEXT_UNIT + u): 1.0 for u in mentioned if u in units})
    return nodes, edges


def entity_seeds(
    fact_ends: list[tuple[str, str]], fact_scores: np.ndarray, chunk_counts: dict, top_n: int
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
    """Return the chunk nodes' seeds: first-stage ``scores`` min-max scaled, times ``weight``."""
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
        edges = entity_chunk_edges(entities, relationships, self.index.text_units)
        return self.stores.graph_store(*edges)

    def seeds(self, question_vector: np.ndarray, chunk_scores: pd.Series) -> dict[str, float]:
        """Return the walk's seeds: matched entities and the chunks' first-stage scores."""
        entities, rel = self.graph_tables
        seeds = entity_seeds(
            list(zip(rel[S.SOURCE_ID], rel[S.TARGET_ID], strict=True)),
            self.stores.fact_scores(self.embedder, rel, question_vector),
            {e: len(u) for e, u in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True)},
            self.options.top_entities,
        )
        return seeds | chunk_seeds(chunk_scores, self.options.passage_weight)

    def ranking(self, question: str) -> list[str]:
        vector = self.embedder.embed_one(question)
        first, first_scores = self.first_stage(vector, question)
        return walked(self.graph, self.seeds(vector, first_scores), first)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
