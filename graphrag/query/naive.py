"""Naive RAG: the text units nearest the question by embedding similarity."""

from __future__ import annotations

from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register


@register("naive", order=10)
class NaiveRAG(Method):
    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return self.ranked_text_units(self.embedder.embed_one(question), question)
