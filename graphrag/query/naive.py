"""Naive RAG: the top-k text units by embedding similarity to the question."""

from __future__ import annotations

from graphrag.query.base import ContextItem, Method


class NaiveRAG(Method):
    name = "naive"

    async def aretrieve(self, question: str) -> list[ContextItem]:
        vector = self.embedder.embed_one(question)
        return self.text_unit_items(self.text_unit_ranking(vector, self.query.top_k))
