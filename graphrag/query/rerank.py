"""The rerank stage: method ``X+rerank`` is ``X`` whose first-stage ranking the answering model
reorders listwise (RankGPT), in the same token budget. Why the model: no cross-encoder ships
its weights in a PyPI package; they are all fetched from a model hub at run time."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.query.base import Cost, Method, Retrieval, drop_step, note_failure
from graphrag.settings import Settings, SettingsError
from graphrag.settings.query import add_method_settings
from graphrag.text import tokens
from graphrag.text.tokens import message_tokens

STAGE = "rerank"
SUFFIX = "+" + STAGE  # "naive+rerank": naive's retrieval, reranked
# Each candidate as the reranker reads it, at most; not a setting (another value replays nothing)
PASSAGE_TOKENS = 300
TOKENS_PER_NUMBER = 3  # "12, " in the reply


@dataclass
class RerankSettings:
    """``[query.rerank]``: the stage of every method asked for as "<method>+rerank"."""

    # 20 of MuSiQue's paragraphs (~110 tokens) are ~2.5k prompt tokens, about a minute here
    top_n: int = 20
    """First-stage text units the model reorders (one call reading each's first 300 tokens);
    the context is then filled from the new order in the method's own budget."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        if self.top_n < 1:
            raise SettingsError(f"setting {name}.top_n must be at least 1")


add_method_settings(STAGE, RerankSettings)


def parse_order(reply: str, n: int) -> list[int]:
    """Return the 0-based order the reply names (1 to n; out of range and repeats ignored), the
    unnamed candidates after, in first-stage order; ValueError if it names none."""
    named = [int(m) - 1 for m in re.findall(r"\d+", reply) if 1 <= int(m) <= n]
    named = list(dict.fromkeys(named))
    if not named:
        raise ValueError(f"the reply names none of the passages 1 to {n}: {reply[:80]!r}")
    return named + [i for i in range(n) if i not in set(named)]


class Reranked(Method):
    """``inner``'s retrieval with its chunk ranking reordered by the model; it answers as
    ``inner`` does, its name ``<inner>+rerank``."""

    options: RerankSettings

    def __init__(self, inner: Method) -> None:
        settings = inner.settings
        stage = settings.query.methods[STAGE]
        super().__init__(inner.index, settings, inner.llm, inner.embedder, inner.stores, stage)
        self.inner = inner
        self.name = inner.name + SUFFIX

    async def model_order(self, question: str, units: list[str]) -> list[int]:
        """Return the model's order of ``units`` (first-stage order when its reply stays
        unusable, named in the answer's failures)."""
        shown = [tokens.truncate(self.stores.unit_text[u], PASSAGE_TOKENS) for u in units]
        passages = "\n\n".join(
            f"[{n}] {prompts.fence_document(prompts.neutralize_citations(text))}"
            for n, text in enumerate(shown, start=1)
        )
        try:
            return await self.llm.atext(
                prompts.rerank(question, passages, len(units)),
                name="rerank",
                max_tokens=TOKENS_PER_NUMBER * len(units) + 8,
                parse=lambda reply: parse_order(reply, len(units)),
            )
        except Exception as err:  # noqa: BLE001 - the first-stage order stands
            drop_step("rerank (the first-stage order was kept)", err)
            return list(range(len(units)))

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        retrieval = await self.inner.aretrieve_ranked(question)
        candidates = retrieval.candidates
        if not candidates:
            note_failure(f"rerank: {self.inner.name} ranks no text units; its context is kept")
            return retrieval
        top = candidates[: self.options.top_n]
        order = await self.model_order(question, top)
        reordered = [top[i] for i in order] + candidates[len(top) :]
        return self.chunk_retrieval(reordered, question)

    async def awrite(self, question: str, retrieval: Retrieval, short_answer: bool) -> str:
        return await self.inner.awrite(question, retrieval, short_answer)


def planned_rerank_cost(settings: Settings, index: Index, questions: list[str]) -> Cost:
    """Return the cost of one rerank call: its prompt per question, ``top_n`` passages of mean
    length (at most PASSAGE_TOKENS) and a reply naming every one."""
    n = min(settings.query.methods[STAGE].top_n, len(index.text_units))
    if not questions or n < 1:
        return 0.0, 0.0, 0.0
    lengths = index.text_units[S.N_TOKENS].clip(upper=PASSAGE_TOKENS)
    per_passage = float(lengths.mean()) + 4  # "[n] " and the blank line
    frame = sum(message_tokens(prompts.rerank(q, "", n)) for q in questions) / len(questions)
    return 1.0, frame + n * per_passage, float(TOKENS_PER_NUMBER * n)
