"""HyDE: retrieve with the embedding of a passage the LLM imagines answering the question.

A question and its answer are phrased differently; a hypothetical answer sits closer in
embedding space to the passage that really answers it (Gao et al., 2022).
"""

from __future__ import annotations

from graphrag import prompts
from graphrag.query.base import ContextItem, Method, Retrieval


class HyDE(Method):
    name = "hyde"

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        passage = await self.llm.achat(
            prompts.hypothetical_passage(question), max_tokens=self.params.hyde_max_tokens
        )
        return self.ranked_text_units(
            self.embedder.embed_one(passage.text.strip() or question), question
        )

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return (await self.aretrieve_ranked(question)).items
