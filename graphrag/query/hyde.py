"""HyDE: retrieve with the embedding of a passage the LLM imagines answering the question.

Under ``query.first_stage = "hybrid"`` the passage's embedding is fused with BM25 on the
*question's* words, not the passage's: the passage's names, dates and numbers are the model's
guesses, which an embedding averages away (HyDE's premise, Gao et al. 2022) but BM25 would
match word for word; the question's words are the only ones known to be true. So hybrid HyDE
and hybrid naive share their lexical half and differ by the dense query alone.
"""

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
        passage = await self.llm.achat(
            prompts.hypothetical_passage(question), max_tokens=self.options.max_tokens
        )
        return self.ranked_text_units(
            self.embedder.embed_one(passage.text.strip() or question), question
        )
