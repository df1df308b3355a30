"""Personalized-PageRank retrieval in the style of HippoRAG 2: the graph picks the chunks.

No LLM at retrieval time; one answer call with the naive method's prompt. The steps:

1. Embed the question; score every relationship, read as a fact ``source -> target:
   description``, by cosine similarity (and, with ``ppr_seed_entities``, every entity by its
   description: not HippoRAG 2's way, and it measured worse on the demo, see the README).
2. Seed entity nodes: the two ends of the top ``ppr_top_entities`` facts (and the top
   entities, if asked) get their similarity (summed), divided by the number of chunks the
   entity appears in, as HippoRAG 2 does: a hub named everywhere says little about where to
   look. Only the ``ppr_top_entities`` heaviest seeds are kept.
3. Seed chunk nodes with the question's dense similarity to each chunk, min-max normalized
   and scaled by ``ppr_passage_weight`` (HippoRAG 2's passage node weight, 0.05), so dense
   retrieval breaks ties and rescues a chunk whose entities were missed.
4. Personalized PageRank (networkx) with damping ``ppr_damping`` (HippoRAG 2: 0.5) over an
   undirected graph of entity and chunk nodes: entity-entity edges from relationships,
   weighted by relationship weight over the largest weight (so the strongest relationship
   counts as much as one provenance link), and entity-chunk edges of weight 1 from the
   entities' ``text_unit_ids``.
5. Chunks ranked by PageRank (dense rank breaks ties); the top ``top_k`` are the context.
"""

from __future__ import annotations

from functools import cached_property

import networkx as nx
import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.merge import fact_texts
from graphrag.query.base import RANKING_DEPTH, ContextItem, Method, Retrieval

ENTITY = "entity:"
TEXT_UNIT = "text_unit:"


def entity_chunk_graph(
    entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
) -> nx.Graph:
    """Return the undirected graph of ``entity:<id>`` and ``text_unit:<id>`` nodes."""
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
    entity_ids: list[str] | None = None,
    entity_scores: np.ndarray | None = None,
) -> dict[str, float]:
    """Return the seed weight of the ``top_n`` entities best matched by a fact (or directly)."""
    weights: dict[str, float] = {}

    def add(entity: str, score: float) -> None:
        weights[entity] = weights.get(entity, 0.0) + max(score, 0.0) / max(
            chunk_counts.get(entity, 1), 1
        )

    if entity_ids is not None and entity_scores is not None:
        for row in np.argsort(-entity_scores, kind="stable")[:top_n]:
            add(entity_ids[row], float(entity_scores[row]))
    for row in np.argsort(-fact_scores, kind="stable")[:top_n]:
        for end in fact_ends[row]:
            add(end, float(fact_scores[row]))
    heaviest = sorted(weights, key=lambda e: -weights[e])[:top_n]
    return {ENTITY + e: weights[e] for e in heaviest if weights[e] > 0}


def chunk_seeds(unit_ids: list[str], scores: np.ndarray, weight: float) -> dict[str, float]:
    """Return the dense-similarity seeds of chunk nodes: min-max normalized, times ``weight``."""
    if not len(scores) or weight <= 0:
        return {}
    span = float(scores.max() - scores.min())
    normalized = (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    return {TEXT_UNIT + u: weight * float(s) for u, s in zip(unit_ids, normalized, strict=True)}


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


class PPRRetrieval(Method):
    name = "ppr"

    @cached_property
    def graph(self) -> nx.Graph:
        return entity_chunk_graph(
            self.index.entities, self.index.relationships, self.index.text_units
        )

    @cached_property
    def fact_vectors(self) -> np.ndarray:
        """The index's fact vectors (the embed stage stores them); an older index's facts are
        embedded here, once."""
        if self.vectors.facts is not None:
            return self.vectors.facts
        facts = fact_texts(self.index.relationships)
        return self.embedder.embed(facts) if facts else np.zeros((0, 1), dtype=np.float32)

    def seeds(self, question_vector: np.ndarray) -> dict[str, float]:
        """Return the personalization of the walk: matched entities and dense chunk scores."""
        entities, rel, units = self.index.entities, self.index.relationships, self.index.text_units
        fact_scores = self.fact_vectors @ question_vector if len(rel) else np.zeros(0)
        direct = self.params.ppr_seed_entities and len(entities)
        seeds = entity_seeds(
            list(zip(rel[S.SOURCE_ID], rel[S.TARGET_ID], strict=True)),
            fact_scores,
            {e: len(u) for e, u in zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True)},
            self.params.ppr_top_entities,
            list(entities[S.ID]) if direct else None,
            self.vectors.entities @ question_vector if direct else None,
        )
        chunk_scores = self.vectors.text_units @ question_vector
        seeds.update(chunk_seeds(list(units[S.ID]), chunk_scores, self.params.ppr_passage_weight))
        return seeds

    def ranking(self, question: str) -> list[int]:
        """Return the rows of the text units, best first, by Personalized PageRank."""
        vector = self.embedder.embed_one(question)
        units = self.index.text_units
        dense_rows = self.text_unit_ranking(vector, len(units))
        dense_order = [units[S.ID].iloc[r] for r in dense_rows]
        scores = personalized_pagerank(self.graph, self.seeds(vector), self.params.ppr_damping)
        row_of = {u: r for r, u in zip(dense_rows, dense_order, strict=True)}
        return [row_of[u] for u in rank_chunks(scores, dense_order)]

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return (await self.aretrieve_ranked(question)).items

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        """The chunk context by PageRank (``Method.chunk_context``), ranked ``RANKING_DEPTH``
        deep for recall@k."""
        rows = self.ranking(question)
        return Retrieval(
            self.chunk_context(rows, question),
            self.text_unit_ids(rows[: max(self.params.top_k, RANKING_DEPTH)]),
        )
