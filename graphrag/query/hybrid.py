"""Hybrid retrieval: the dense and BM25 rankings fused by reciprocal rank fusion, in the shared
budget; every text-unit method's first stage under ``query.first_stage = "hybrid"``."""

from __future__ import annotations

from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register


@register("hybrid", opt_in=True, order=91)
class HybridRetrieval(Method):
    def ranking(self, question: str) -> list[str]:
        return self.hybrid_ranking(self.embedder.embed_one(question), question)[0]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
