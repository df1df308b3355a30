"""HyDE: retrieve with the embedding of a passage the LLM imagines answering the question.

A question and its answer are phrased differently; a hypothetical answer sits closer in
embedding space to the passage that really answers it (Gao et al., 2022).
"""

from __future__ import annotations

from graphrag import prompts
from graphrag.query.base import ContextItem, Method


class HyDE(Method):
    name = "hyde"

    async def aretrieve(self, question: str) -> list[ContextItem]:
        passage = await self.llm.achat(
            prompts.hypothetical_passage(question), max_tokens=self.query.hyde_max_tokens
        )
        vector = self.embedder.embed_one(passage.text.strip() or question)
        return self.text_unit_items(self.text_unit_ranking(vector, self.query.top_k))
