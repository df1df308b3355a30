"""HippoRAG 2 (Gutiérrez et al., 2025), step for step after OSU-NLP-Group/HippoRAG's HippoRAG.py
(places cited below): linked facts, filtered by the model's recognition memory, seed their
entities; every passage is seeded at a small weight; PageRank over entities, passages and
synonym edges ranks the passages. Where ours differs and why: docs/hipporag.md."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.query.base import Cost, Method, Retrieval, drop_step, note_failure
from graphrag.query.pagerank import ENTITY, TEXT_UNIT, min_max, undirected, walked
from graphrag.query.registry import register
from graphrag.settings import Settings
from graphrag.stores import GraphStore
from graphrag.text.tokens import count_tokens, message_tokens

SYNONYM_NEIGHBOURS = 100  # HippoRAG.py add_synonymy_edges: at most ~100 synonyms per phrase
SYNONYM_BATCH = 1024  # rows of the name-similarity matrix computed at a time (memory only)
# Name similarity from which two entities get a synonym edge (synonymy_edge_sim_threshold)
SYNONYM_THRESHOLD = 0.8
LINKING_TOP_K = 5  # facts linked to the question, and entities seeded from them


@dataclass
class HippoRAGSettings:
    """``[query.hipporag]``: HippoRAG 2's retrieval, with its own defaults (config_utils.py)."""

    passage_node_weight: float = 0.05
    """Weight of every passage's dense score in the walk's seeds (passage_node_weight)."""
    recognition_filter: bool = True
    """Let the model drop linked facts that do not help (recognition memory; one LLM call)."""


Edges = dict[tuple[str, str], float]


def fact_graph(relationships: pd.DataFrame, text_units: pd.DataFrame) -> tuple[list[str], Edges]:
    """Return HippoRAG 2's nodes and undirected edges without synonyms: per fact twice its chunks
    (``add_fact_edges``' parallel edges), and 1 from each chunk to its facts' ends."""
    nodes = [TEXT_UNIT + u for u in text_units[S.ID]]
    edges: Edges = {}
    units = set(text_units[S.ID])
    facts = (relationships[c] for c in (S.SOURCE_ID, S.TARGET_ID, S.TEXT_UNIT_IDS))
    for source, target, stated in zip(*facts, strict=True):
        chunks = [u for u in stated if u in units]
        a, b = ENTITY + source, ENTITY + target
        edges.update({(end, TEXT_UNIT + u): 1.0 for end in (a, b) for u in chunks})
        if a != b:
            undirected(edges, a, b, 2.0 * max(len(chunks), 1))
    return list(dict.fromkeys([*nodes, *(n for pair in edges for n in pair)])), edges


def synonym_pairs(names: list[str], vectors: np.ndarray, threshold: float) -> list[tuple]:
    """Return (i, j, similarity) of names ``threshold`` alike, ``SYNONYM_NEIGHBOURS`` per name at
    most, nearest first; a name of 2 letters or fewer seeks none (``add_synonymy_edges``)."""
    pairs = []
    for start in range(0, len(names), SYNONYM_BATCH):
        block = vectors[start : start + SYNONYM_BATCH] @ vectors.T
        for offset, row in enumerate(block):
            i = start + offset
            if len(re.sub(r"[^A-Za-z0-9]", "", names[i])) <= 2:
                continue
            near = np.flatnonzero(row >= threshold)
            near = near[np.argsort(-row[near], kind="stable")]
            kept = [j for j in near if j != i][: SYNONYM_NEIGHBOURS + 1]
            pairs.extend((i, int(j), float(row[j])) for j in kept)
    return pairs


def add_synonym_edges(nodes: set[str], edges: Edges, entity_ids: list[str], pairs: list) -> int:
    """Add the synonym edges between entities among ``nodes`` (the similarity, once per
    direction that found it, as parallel edges add up); return how many were added."""
    added = 0
    for i, j, similarity in pairs:
        a, b = ENTITY + entity_ids[i], ENTITY + entity_ids[j]
        if a in nodes and b in nodes:
            undirected(edges, a, b, similarity)
            added += 1
    return added


def phrase_seeds(
    fact_ends: list[tuple[str, str]], fact_scores: list[float], chunk_counts: dict, top_k: int
) -> dict[str, float]:
    """Return the ``top_k`` heaviest seeds at the kept facts' ends: each fact's score over the
    entity's chunk count, averaged over its facts (``graph_search_with_fact_entities``)."""
    total: dict[str, float] = {}
    occurs: dict[str, int] = {}
    for ends, score in zip(fact_ends, fact_scores, strict=True):
        for entity in dict.fromkeys(ends):
            total[entity] = total.get(entity, 0.0) + score / max(chunk_counts.get(entity, 1), 1)
            occurs[entity] = occurs.get(entity, 0) + 1
    mean = {e: total[e] / occurs[e] for e in total}
    heaviest = sorted(mean, key=lambda e: -mean[e])[:top_k]
    return {ENTITY + e: mean[e] for e in heaviest}


@register("hipporag", settings=HippoRAGSettings, opt_in=True, order=72)
class HippoRAG(Method):
    options: HippoRAGSettings
    synonym_edges = True  # off only in the step study (studies/hipporag_steps.py)

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost:
        """The recognition filter: one call reading ``linking_top_k`` facts of mean length, and
        a reply keeping every one of them (the most the schema allows)."""
        options, relationships = settings.query.methods[cls.name], index.relationships
        if not options.recognition_filter or not len(relationships) or not questions:
            return 0.0, 0.0, 0.0
        k = min(LINKING_TOP_K, len(relationships))
        per_fact = float(np.mean([count_tokens(f"{k}. {f}") + 1 for f in facts_of(relationships)]))
        frames = [message_tokens(prompts.recognize_facts(q, "")) for q in questions]
        reply = count_tokens(json.dumps({"relevant": list(range(1, k + 1))}))
        return 1.0, float(np.mean(frames)) + k * per_fact, float(reply)

    @cached_property
    def graph(self) -> GraphStore:
        entities, relationships = self.graph_tables  # merged by entity resolution when on
        nodes, edges = fact_graph(relationships, self.index.text_units)
        if self.synonym_edges:
            known = set(nodes)
            entities = entities[entities[S.ID].map(lambda e: ENTITY + e in known)]
            names = [str(t).lower() for t in entities[S.TITLE]]  # HippoRAG lower-cases phrases
            if len(names):
                vectors = self.embedder.embed(names)
                pairs = synonym_pairs(names, vectors, SYNONYM_THRESHOLD)
                add_synonym_edges(known, edges, list(entities[S.ID]), pairs)
        return self.stores.graph_store(nodes, edges)

    @cached_property
    def nodes(self) -> set[str]:
        return set(self.graph.nodes())

    @cached_property
    def chunk_counts(self) -> dict[str, int]:
        """Each entity's chunks: those stating one of its facts (``ent_node_to_chunk_ids``)."""
        return {
            node[len(ENTITY) :]: sum(n.startswith(TEXT_UNIT) for n in self.graph.neighbours(node))
            for node in self.graph.nodes()
            if node.startswith(ENTITY)
        }

    def linked_facts(self, question_vector: np.ndarray) -> tuple[list[int], np.ndarray]:
        """Return the rows of the ``linking_top_k`` facts nearest the question, best first, and
        every fact's min-max normalized score (``get_fact_scores``, ``rerank_facts``)."""
        rel = self.graph_tables[1]
        if not len(rel):
            return [], np.zeros(0)
        scores = min_max(self.stores.fact_scores(self.embedder, rel, question_vector))
        top = np.argsort(-scores, kind="stable")[:LINKING_TOP_K]
        return [int(r) for r in top], scores

    async def recognized(self, question: str, rows: list[int]) -> list[int]:
        """Return the linked facts the model recognizes as helpful (all, filter off); none when
        its reply fails, as in HippoRAG's ``rerank`` (named in ``Answer.failures``)."""
        if not self.options.recognition_filter or not rows:
            return rows
        facts = facts_of(self.graph_tables[1].iloc[rows])
        facts = "\n".join(f"{n}. {fact}" for n, fact in enumerate(facts, start=1))
        try:
            reply = await self.llm.ajson(
                prompts.recognize_facts(question, facts),
                prompts.fact_filter_schema(len(rows)),
                name="recognized facts",
            )
        except Exception as err:  # noqa: BLE001 - a failed filter keeps no fact
            drop_step("recognition filter", err)
            return []
        keep = {int(n) for n in reply["relevant"]}
        return [r for n, r in enumerate(rows, start=1) if n in keep]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        vector = self.embedder.embed_one(question)
        dense, first_scores = self.first_stage(vector, question)
        linked, fact_scores = self.linked_facts(vector)
        kept = await self.recognized(question, linked)
        if not kept:  # HippoRAG.retrieve: no fact left, the dense ranking
            if linked:
                note_failure("hipporag: no linked fact recognized; dense passage ranking")
            return self.chunk_retrieval(dense, question)
        rel = self.graph_tables[1]
        seeds = phrase_seeds(
            [(rel[S.SOURCE_ID].iloc[r], rel[S.TARGET_ID].iloc[r]) for r in kept],
            [float(fact_scores[r]) for r in kept],
            self.chunk_counts,
            LINKING_TOP_K,
        )
        seeds = {n: w for n, w in seeds.items() if n in self.nodes}
        weights = min_max(first_scores.to_numpy()) * self.options.passage_node_weight
        seeds.update(
            (TEXT_UNIT + u, float(w)) for u, w in zip(first_scores.index, weights, strict=True)
        )
        return self.chunk_retrieval(walked(self.graph, seeds, dense), question)


def facts_of(relationships: pd.DataFrame) -> pd.Series:
    """Return each fact as the recognition filter reads it: "source | fact | target"."""
    return (
        relationships[S.SOURCE_ENTITY].astype(str)
        + " | "
        + relationships[S.DESCRIPTION].astype(str)
        + " | "
        + relationships[S.TARGET_ENTITY].astype(str)
    )
