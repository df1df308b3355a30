"""Naive RAG: the top-k text units by embedding similarity to the question."""

from __future__ import annotations

from graphrag.query.base import ContextItem, Method, Retrieval


class NaiveRAG(Method):
    name = "naive"

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.ranked_text_units(self.embedder.embed_one(question), question)

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return (await self.aretrieve_ranked(question)).items
