"""Hybrid retrieval: the dense ranking (naive RAG's) and BM25's fused by reciprocal rank fusion.

Dense retrieval finds a paraphrase; BM25 finds the rare word an embedding blurs (a name, a
code, a number). Cormack, Clarke and Büttcher (SIGIR 2009) fuse rankings by
sum(1 / (60 + rank)): no score calibration, and no single ranking decides. The fused ranking
fills the shared answer budget as naive RAG's does (``Method.chunk_retrieval``), so it is
compared at equal context. The same ranking is every text-unit method's first stage under
``query.first_stage = "hybrid"`` (naive RAG then retrieves exactly as this method does).
"""

from __future__ import annotations

from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register


@register("hybrid", opt_in=True, order=91)
class HybridRetrieval(Method):
    def ranking(self, question: str) -> list[str]:
        """Return the ids of the text units, best first by the fused dense and BM25 ranks."""
        return self.hybrid_ranking(self.embedder.embed_one(question), question)[0]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
