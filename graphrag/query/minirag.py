"""MiniRAG (Fan et al., 2025): one model call names the question's entities and answer types; the
rest is matching and counting over the chunk-entity graph (minirag_paths.py). Its chosen chunks
come first, the budget is filled from the first stage (docs/methods.md)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.query import minirag_paths as paths
from graphrag.query.base import Cost, Method, Retrieval, drop_step, note_failure
from graphrag.query.minirag_paths import ChunkEntityGraph, top_matches
from graphrag.query.registry import register
from graphrag.settings import Settings, SettingsError
from graphrag.text.tokens import count_tokens, message_tokens

# MiniRAG offers the model every entity type of its graph (its prompt's examples show 8 to 18);
# an index with open LLM types can have hundreds, so the pool is the most common ones.
TYPE_POOL_SIZE = 20
TYPE_EXAMPLES = 2  # entity names shown per type, as in MiniRAG's pools (minirag/prompt.py)
# HKUDS/MiniRAG's own values: the query entities it uses of those the model names
# (minirag/operate.py:1431), and the cosine a name, fact or chunk must reach to match (its
# vector store, minirag/kg/nano_vector_db_impl.py:76; it depends on the embedder).
MAX_QUERY_ENTITIES = 5
MIN_SIMILARITY = 0.2
NO_SEEDS = "minirag: no entity name matched the query entities; first-stage ranking"


@dataclass
class MiniRAGSettings:
    """``[query.minirag]``: MiniRAG's retrieval (HKUDS/MiniRAG, minirag/operate.py)."""

    top_k: int = 60
    """Entities matched per query entity, facts per query entity, twice the chunks MiniRAG
    keeps (MiniRAG's QueryParam.top_k, minirag/base.py:25)."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        if self.top_k < 2:
            raise SettingsError(f"query.{name}: top_k must be at least 2")


def type_pool(entities: pd.DataFrame) -> dict[str, list[str]]:
    """Return {TYPE: example names}: the most common entity types, each with the names of its
    best-connected entities (ties by name)."""
    if not len(entities):
        return {}
    types = entities[S.TYPE].fillna("").astype(str).str.strip()
    counts = Counter(t for t in types if t)
    ordered = entities.assign(_type=types).sort_values(
        [S.DEGREE, S.TITLE], ascending=[False, True], kind="stable"
    )
    return {
        kind.upper(): [str(t) for t in ordered[ordered["_type"] == kind][S.TITLE]][:TYPE_EXAMPLES]
        for kind, _ in counts.most_common(TYPE_POOL_SIZE)
    }


@register("minirag", settings=MiniRAGSettings, opt_in=True, order=75)
class MiniRAGRetrieval(Method):
    options: MiniRAGSettings

    @cached_property
    def graph(self) -> ChunkEntityGraph:
        entities, relationships = self.graph_tables  # merged by entity resolution when on
        return ChunkEntityGraph.from_tables(entities, relationships, self.index.text_units)

    @cached_property
    def name_vectors(self) -> np.ndarray:
        """Every name's vector (MiniRAG's entity_name_vdb: the name alone), a merged entity's
        other names too, so that an alias still matches."""
        names = [str(t) for t in self.index.entities[S.TITLE]]
        return self.embedder.embed(names) if names else np.zeros((0, 1), dtype=np.float32)

    @cached_property
    def entity_of_name(self) -> np.ndarray:
        """The graph's entity row of each name row (its canonical's, resolution on)."""
        row = {e: i for i, e in enumerate(self.graph_tables[0][S.ID])}
        canonical = self.resolution.canonical if self.resolution else str
        return np.array([row[canonical(e)] for e in self.index.entities[S.ID]], dtype=np.int64)

    def entity_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Return each graph entity's similarity to a query entity: its best name's."""
        scores = np.full(len(self.graph.neighbours), -np.inf)
        np.maximum.at(scores, self.entity_of_name, self.name_vectors @ query_vector)
        return scores

    @cached_property
    def fact_ends(self) -> list[tuple[int, int]]:
        entities, rel = self.graph_tables
        row = {e: i for i, e in enumerate(entities[S.ID])}
        return [
            (row.get(s, -1), row.get(t, -1))
            for s, t in zip(rel[S.SOURCE_ID], rel[S.TARGET_ID], strict=True)
        ]

    @cached_property
    def type_pool(self) -> dict[str, list[str]]:
        return type_pool(self.graph_tables[0])

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost:
        """The query-analysis call: its prompt over the index's type pool, and a reply naming
        three types and ``MAX_QUERY_ENTITIES`` names of the index's mean name tokens."""
        if not questions:
            return 0.0, 0.0, 0.0
        pool = type_pool(index.entities)
        frames = [message_tokens(prompts.minirag_keywords(q, pool)) for q in questions]
        names = MAX_QUERY_ENTITIES
        reply = {
            "answer_type_keywords": sorted(pool, key=len)[-3:],
            "entities_from_query": [""] * names,
        }
        titles = [count_tokens(str(t)) for t in index.entities[S.TITLE]]
        per_name = float(np.mean(titles)) if titles else 1.0
        return 1.0, float(np.mean(frames)), count_tokens(json.dumps(reply)) + names * per_name

    async def query_keywords(self, question: str) -> tuple[list[str], list[str]]:
        """Return (query entities, answer types) the model names; on a failed or empty reply
        the question itself is the one query entity, with no answer type (a failure)."""
        pool = self.type_pool
        try:
            reply = await self.llm.ajson(
                prompts.minirag_keywords(question, pool),
                prompts.query_keywords_schema(list(pool), MAX_QUERY_ENTITIES),
                name="query_keywords",
            )
            named = [str(e).strip() for e in reply.get("entities_from_query", [])]
            kinds = [str(t).strip().upper() for t in reply.get("answer_type_keywords", [])]
        except Exception as err:  # noqa: BLE001 - named in failures; the question seeds instead
            drop_step("minirag query keywords (seeded by the question instead)", err)
            return [question], []
        named = [e for e in named if e][:MAX_QUERY_ENTITIES]
        if not named:
            note_failure("minirag query keywords: no query entity (seeded by the question)")
            return [question], [t for t in kinds if t in pool]
        return named, [t for t in kinds if t in pool]

    def ranking(
        self, question: str, query_entities: list[str], answer_types: list[str]
    ) -> list[str]:
        """Return the text-unit ids, best first: MiniRAG's chosen chunks, then the rest of
        the first-stage ranking; the arithmetic runs over table rows."""
        o, graph, ids = self.options, self.graph, self.stores.unit_text.index
        vector = self.embedder.embed_one(question)
        unit_scores = self.dense_scores(vector).to_numpy()
        row_of = {u: r for r, u in enumerate(ids)}
        ranked = self.first_stage_ranking(vector, question, len(unit_scores))
        dense = [row_of[u] for u in ranked]
        position = np.empty(len(dense), dtype=np.int64)
        position[dense] = np.arange(len(dense))

        # 1. seeds: the entities nearest each query entity by name (operate.py:1268-1292)
        name_scores = [self.entity_scores(v) for v in self.embedder.embed(query_entities)]
        matched = [top_matches(s, o.top_k, MIN_SIMILARITY) for s in name_scores]
        all_seeds = paths.seed_entities(matched, name_scores)
        seeds = paths.drop_isolated(all_seeds, graph)
        if not seeds:
            note_failure(NO_SEEDS)
            return [ids[r] for r in dense]

        # 2. answer-type entities (operate.py:1311-1316)
        kinds = self.graph_tables[0][S.TYPE].fillna("").astype(str).str.strip().str.upper()
        answer = kinds.isin(answer_types).to_numpy(dtype=float)

        # 3. the question's matched facts that touch a seed or an answer-type entity
        fact_scores = self.stores.fact_scores(self.embedder, self.graph_tables[1], vector)
        fact_rows = top_matches(fact_scores, len(query_entities) * o.top_k, MIN_SIMILARITY)
        important = set(all_seeds) | set(np.flatnonzero(answer).tolist())
        edges = paths.good_edges(fact_rows, self.fact_ends, important)
        edges_at: dict[int, dict[int, int]] = {}
        for (a, b), rank in edges.items():
            edges_at.setdefault(a, {})[b] = rank
            edges_at.setdefault(b, {})[a] = rank

        # 4. each seed's best chunks over its paths (path2chunk, operate.py:1124-1209)
        kept = graph.path_mentions(unit_scores)
        scores = {
            s: paths.seed_chunk_scores(s, graph, answer, edges, edges_at, kept) for s in seeds
        }
        chunks = {s: paths.best_chunks(scores[s], position, paths.CHUNKS_PER_SEED) for s in seeds}

        # 5. the chunks ranked by the seeds that chose them (kwd2chunk, operate.py:1375-1379)
        keep = o.top_k // 2
        dense_top = {r for r in dense[:keep] if unit_scores[r] >= MIN_SIMILARITY}
        final = paths.rank_seed_chunks(matched, seeds, chunks, dense_top)
        chosen = sorted(final, key=lambda u: (-final[u], position[u]))[:keep]
        taken = set(chosen)
        return [ids[r] for r in chosen + [r for r in dense if r not in taken]]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        query_entities, answer_types = await self.query_keywords(question)
        return self.chunk_retrieval(self.ranking(question, query_entities, answer_types), question)
