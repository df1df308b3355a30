"""Multi-query: retrieve for the question and N rephrasings, fused by reciprocal rank fusion."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from graphrag import prompts
from graphrag.query.base import RANKING_DEPTH, Method, Retrieval
from graphrag.query.registry import register

# Cormack et al.'s k: damps a ranking's top places, so that no single rephrasing decides.
RRF_K = 60


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[Hashable]], k: int = RRF_K
) -> list[Hashable]:
    """Return the items of all rankings by fused score sum(1 / (k + rank)), ranks from 1;
    ties keep the order of first appearance."""
    scores: dict[Hashable, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] += 1.0 / (k + rank)
    return sorted(scores, key=lambda item: -scores[item])


@dataclass
class MultiQuerySettings:
    """``[query.multi_query]``."""

    rephrasings: int = 3
    """Rephrasings of the question the LLM writes; each is retrieved for, beside the question."""


@register("multi_query", settings=MultiQuerySettings, order=30)
class MultiQuery(Method):
    async def aretrieve_ranked(self, question: str) -> Retrieval:
        n = self.options.rephrasings
        result = await self.llm.ajson(
            prompts.rephrase(question, n), prompts.rephrasings_schema(n), name="rephrasings"
        )
        queries = [question, *result["queries"]]
        vectors = self.embedder.embed(queries)
        top_k = self.params.chunk_context == "top_k"
        depth = self.params.top_k * 3 if top_k else self.chunk_depth()  # fuse deeper than kept
        rankings = [self.text_unit_ranking(v, depth) for v in vectors]
        fused = reciprocal_rank_fusion(rankings)
        return Retrieval(
            self.chunk_context(fused, question), self.text_unit_ids(fused[:RANKING_DEPTH])
        )
