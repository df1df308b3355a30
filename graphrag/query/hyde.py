"""HyDE: retrieve with the embedding of a passage the LLM imagines answering the question (BM25,
under a hybrid first stage, reads the question's words, not the passage's guesses)."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag import prompts
from graphrag.query.base import Method, Retrieval
from graphrag.query.registry import register


@dataclass
class HydeSettings:
    """``[query.hyde]``."""

    max_tokens: int = 160
    """Tokens of the hypothetical passage, at most (DRIFT's primer writes the same passage)."""


@register("hyde", settings=HydeSettings, order=20)
class HyDE(Method):
    async def aretrieve_ranked(self, question: str) -> Retrieval:
        cap = self.options.max_tokens
        passage = await self.llm.achat(prompts.hypothetical_passage(question), max_tokens=cap)
        vector = self.embedder.embed_one(passage.text.strip() or question)
        return self.ranked_text_units(vector, question)
