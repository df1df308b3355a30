"""BM25: the text units sharing the question's rarest words; the lexical baseline every dense and
graph method should beat."""

from __future__ import annotations

from graphrag.query.base import Method, Retrieval
from graphrag.query.rankers import descending
from graphrag.query.registry import register


@register("bm25", opt_in=True, order=90)
class BM25Retrieval(Method):
    def ranking(self, question: str) -> list[str]:
        ids = self.stores.unit_text.index
        return [ids[r] for r in descending(self.bm25_scores(question))]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.chunk_retrieval(self.ranking(question), question)
