"""RAGAS faithfulness and context recall whose prompts fit the judge's slot: when ragas's own
prompt fits, its own single call (so a recorded judgement replays); otherwise the contexts are
judged in windows that fit (statements in batches when they alone overflow), a statement
counting when any window supports it. RAGAS context precision (and its reference-free form,
context utilization) judges the first ``CONTEXT_PRECISION_DEPTH`` contexts one call each, a
context too long for the slot cut to the part that fits.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from graphrag.text import tokens

# tokens of instructor's own wording around the schema it puts in a system message
INSTRUCTOR_WORDING_TOKENS = 64
# the fewest tokens of context a window must hold beside the rest of its prompt
MIN_CONTEXT_ROOM = 64
# JSON escaping in the prompt costs a few tokens more than the text's own
ESCAPE_MARGIN = 0.8
# Contexts context precision judges, in the order the method showed them: one judge call each
# (ragas judges every context; a method here shows ~10-30, each call ~10-30 s on 2 cores), so
# the score is average precision at 5. Not a setting: another value replays nothing.
CONTEXT_PRECISION_DEPTH = 5


class Slot:
    """The judge's window: a prompt of ``prompt(context, …)`` must leave ``reply_tokens``
    (``window`` None: unknown, every prompt fits)."""

    def __init__(self, window: int | None, reply_tokens: int, output_model: Any) -> None:
        self.window = window
        self.reply_tokens = reply_tokens
        schema = json.dumps(output_model.model_json_schema(), indent=2)
        self.system_tokens = tokens.count_tokens(schema) + INSTRUCTOR_WORDING_TOKENS

    def tokens(self, prompt: str) -> int:
        """Return the tokens of a request (schema system message + ``prompt``)."""
        return tokens.message_tokens([{"content": prompt}]) + self.system_tokens

    def fits(self, prompt: str) -> bool:
        return self.window is None or self.tokens(prompt) + self.reply_tokens <= self.window

    def room(self, empty_prompt: str) -> int:
        """Return the tokens left for a context beside ``empty_prompt`` (its context empty)."""
        return self.window - self.reply_tokens - self.tokens(empty_prompt)

    def windows(self, contexts: list[str], prompt: Callable[[str], str], what: str) -> list[str]:
        """Return ``contexts`` joined into as few texts as fit ``prompt(text)``, in order; a
        context too long alone is cut into pieces that fit. ``what``: what else the prompt
        holds, for the error when nothing fits."""
        room = self.room(prompt(""))
        if room < MIN_CONTEXT_ROOM:
            raise ValueError(
                f"the judge's window ({self.window} tokens: setting llm.context_tokens, "
                f"else embedded.ctx_size / embedded.parallel) has no room for a context "
                f"beside {what} and llm.max_tokens ({self.reply_tokens}) for the reply"
            )
        step = int(room * ESCAPE_MARGIN)
        pieces: list[str] = []
        for context in contexts:
            ids = tokens.encode(context)
            pieces.extend(tokens.decode(ids[i : i + step]) for i in range(0, len(ids), step))
        texts: list[str] = []
        for piece in pieces:
            joined = f"{texts[-1]}\n{piece}" if texts else piece
            if texts and self.fits(prompt(joined)):
                texts[-1] = joined
            else:
                texts.append(piece)
        return texts


def statement_batches(slot: Slot, statements: list[str], prompt: Callable) -> list[list[str]]:
    """Return ``statements`` whole when a window still has room for context beside them, else
    in consecutive batches each leaving at least half the free room for context."""
    if slot.window is None or slot.room(prompt("", statements)) >= MIN_CONTEXT_ROOM:
        return [statements]
    budget = slot.room(prompt("", [])) // 2  # statement tokens a batch may take
    base = slot.tokens(prompt("", []))
    batches: list[list[str]] = []
    for statement in statements:
        batch = [*batches[-1], statement] if batches else [statement]
        if batches and slot.tokens(prompt("", batch)) - base <= budget:
            batches[-1] = batch
        else:
            batches.append([statement])
    return batches


def normalized(text: str) -> str:
    return " ".join(str(text).lower().split())


def matched(statements: list[str], answers: list[tuple[str, int]]) -> list[tuple[int, int]]:
    """Return (statement position, verdict) for one window's (statement, verdict) answers:
    by position when the judge answered every statement, else by the statement's text
    (an answer naming no statement of the list is left out)."""
    if len(answers) == len(statements):
        return [(i, int(v)) for i, (_, v) in enumerate(answers)]
    where = {normalized(s): i for i, s in enumerate(statements)}
    found = ((where.get(normalized(s)), v) for s, v in answers)
    return [(i, int(v)) for i, v in found if i is not None]


def windowed_classes(window: int | None, reply_tokens: int) -> dict[str, type]:
    """Return the ragas metric classes that judge in windows of the judge's slot (ragas is
    imported only when a judged metric is scored: seconds to import)."""
    from ragas.metrics.collections import (
        ContextPrecision,
        ContextRecall,
        ContextUtilization,
        Faithfulness,
    )
    from ragas.metrics.collections.context_precision.util import (
        ContextPrecisionInput,
        ContextPrecisionOutput,
    )
    from ragas.metrics.collections.context_recall.util import (
        ContextRecallInput,
        ContextRecallOutput,
    )
    from ragas.metrics.collections.faithfulness.util import NLIStatementInput, NLIStatementOutput
    from ragas.metrics.result import MetricResult

    class WindowedFaithfulness(Faithfulness):
        """ragas faithfulness whose verdict prompts fit the judge's slot."""

        def __init__(self, llm: Any) -> None:
            super().__init__(llm=llm)
            self.slot = Slot(window, reply_tokens, NLIStatementOutput)

        def verdict_prompt(self, context: str, statements: list[str]) -> str:
            data = NLIStatementInput(context=context, statements=statements)
            return self.nli_statement_prompt.to_string(data)

        async def ascore(
            self, user_input: str, response: str, retrieved_contexts: list[str]
        ) -> Any:
            if not response or not retrieved_contexts:
                return await super().ascore(user_input, response, retrieved_contexts)
            joined = "\n".join(retrieved_contexts)
            statements = await self._create_statements(user_input, response)
            if not statements:
                return MetricResult(value=float("nan"))
            if self.slot.fits(self.verdict_prompt(joined, statements)):
                verdicts = await self._create_verdicts(statements, joined)
                return MetricResult(value=float(self._compute_score(verdicts)))
            supported = [0] * len(statements)
            start = 0
            for batch in statement_batches(self.slot, statements, self.verdict_prompt):
                what = f"{len(batch)} statement(s)"
                for text in self.slot.windows(
                    retrieved_contexts, lambda c, b=batch: self.verdict_prompt(c, b), what
                ):
                    verdicts = await self._create_verdicts(batch, text)
                    answers = [(a.statement, a.verdict) for a in verdicts.statements]
                    for position, verdict in matched(batch, answers):
                        supported[start + position] = max(supported[start + position], verdict)
                start += len(batch)
            return MetricResult(value=sum(supported) / len(statements))

    class WindowedContextRecall(ContextRecall):
        """ragas context recall whose classification prompts fit the judge's slot: the
        reference's statements are classified against each window; a statement is
        attributed when any window attributes it (statements are the first window's that
        has any, matched in the others by position or text)."""

        def __init__(self, llm: Any) -> None:
            super().__init__(llm=llm)
            self.slot = Slot(window, reply_tokens, ContextRecallOutput)

        def recall_prompt(self, question: str, context: str, reference: str) -> str:
            data = ContextRecallInput(question=question, context=context, answer=reference)
            return self.prompt.to_string(data)

        async def ascore(
            self, user_input: str, retrieved_contexts: list[str], reference: str
        ) -> Any:
            joined = "\n".join(retrieved_contexts or [])
            if (
                not user_input
                or not reference
                or not retrieved_contexts
                or self.slot.fits(self.recall_prompt(user_input, joined, reference))
            ):
                return await super().ascore(user_input, retrieved_contexts, reference)
            statements: list[str] = []
            attributed: list[int] = []
            texts = self.slot.windows(
                retrieved_contexts,
                lambda c: self.recall_prompt(user_input, c, reference),
                "the question and the reference",
            )
            for text in texts:
                result = await self.llm.agenerate(
                    self.recall_prompt(user_input, text, reference), ContextRecallOutput
                )
                answers = [(c.statement, c.attributed) for c in result.classifications]
                if not statements:
                    statements = [s for s, _ in answers]
                    attributed = [0] * len(statements)
                for position, verdict in matched(statements, answers):
                    attributed[position] = max(attributed[position], int(bool(verdict)))
            if not statements:
                return MetricResult(value=float("nan"))
            return MetricResult(value=sum(attributed) / len(statements))

    def ranked(base: type) -> type:
        class Ranked(base):
            """ragas context precision over the first ``CONTEXT_PRECISION_DEPTH`` contexts,
            each cut to what fits the judge's slot beside the question and the answer."""

            def __init__(self, llm: Any) -> None:
                super().__init__(llm=llm)
                self.slot = Slot(window, reply_tokens, ContextPrecisionOutput)

            def fitted(self, question: str, answer: str, contexts: list[str]) -> list[str]:
                def prompt(context: str) -> str:
                    data = ContextPrecisionInput(question=question, context=context, answer=answer)
                    return self.prompt.to_string(data)

                what = "the question and the answer"
                return [
                    c if self.slot.fits(prompt(c)) else self.slot.windows([c], prompt, what)[0]
                    for c in contexts[:CONTEXT_PRECISION_DEPTH]
                ]

        return Ranked

    class WindowedContextPrecision(ranked(ContextPrecision)):
        async def ascore(
            self, user_input: str, reference: str, retrieved_contexts: list[str]
        ) -> Any:
            contexts = self.fitted(user_input, reference, retrieved_contexts or [])
            return await super().ascore(user_input, reference, contexts)

    class WindowedContextUtilization(ranked(ContextUtilization)):
        async def ascore(
            self, user_input: str, response: str, retrieved_contexts: list[str]
        ) -> Any:
            contexts = self.fitted(user_input, response, retrieved_contexts or [])
            return await super().ascore(user_input, response, contexts)

    return {
        "faithfulness": WindowedFaithfulness,
        "context_recall": WindowedContextRecall,
        "context_precision": WindowedContextPrecision,
        "context_utilization": WindowedContextUtilization,
    }
