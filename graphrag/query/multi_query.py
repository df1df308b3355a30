"""Multi-query: retrieve for the question and N rephrasings, fused by reciprocal rank fusion
(each query ranked by the first stage, ``query.first_stage``: under "hybrid", its own words
are BM25's query)."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag import prompts
from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register


@dataclass
class MultiQuerySettings:
    """``[query.multi_query]``."""

    rephrasings: int = 3
    """Rephrasings of the question the LLM writes; each is retrieved for, beside the question."""


@register("multi_query", settings=MultiQuerySettings, order=30)
class MultiQuery(Method):
    async def aretrieve_ranked(self, question: str) -> Retrieval:
        n = self.options.rephrasings
        schema = prompts.rephrasings_schema(n)
        result = await self.llm.ajson(prompts.rephrase(question, n), schema, name="rephrasings")
        return self.fused_retrieval([question, *result["queries"]], question)
