"""RAGAS metrics driven by our own LLM endpoint and local embedder; no OpenAI key, no network.

ragas gets an ``openai.AsyncOpenAI`` whose transport is our recorded cache, so its calls are
recorded, replayed and counted like every other. A failed metric is NaN with its error kept.
Faithfulness whose prompt would not fit the judge's window is judged in windows that fit
(:class:`WindowedFaithfulness`); a statement is supported when any window supports it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any

from graphrag.llm.cache import CacheMissError
from graphrag.llm.client import ChatLLM, error_summary
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import Settings
from graphrag.text import tokens
from graphrag.text.embeddings import Embedder

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry from an offline tool

METRICS = ("faithfulness", "answer_relevancy", "context_recall")
# Judge calls per answer for each metric, as ragas 0.4 makes them.
JUDGE_CALLS = {"faithfulness": 2, "answer_relevancy": 1, "context_recall": 1}
# tokens of instructor's own wording around the schema it puts in a system message
INSTRUCTOR_WORDING_TOKENS = 64


@dataclass
class JudgeResult:
    value: float
    error: str | None
    usage: Usage


def _embeddings_class() -> type:
    # ragas (and the langchain it loads) takes seconds to import: only a RAGAS metric needs it
    from ragas.embeddings.base import BaseRagasEmbedding

    class LocalEmbeddings(BaseRagasEmbedding):
        """ragas embeddings over the workbench's local sentence-transformers embedder."""

        def __init__(self, embedder: Embedder) -> None:
            super().__init__()
            self.embedder = embedder

        def embed_text(self, text: str, **kwargs: Any) -> list[float]:
            return self.embedder.embed_one(text).tolist()

        async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
            return self.embed_text(text)

        def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            return self.embedder.embed(list(texts)).tolist()

        async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
            return self.embed_texts(texts)

    return LocalEmbeddings


def _windowed_faithfulness_class() -> type:
    # ragas is imported only when faithfulness is scored (seconds to import)
    from ragas.metrics.collections import Faithfulness
    from ragas.metrics.collections.faithfulness.util import NLIStatementInput, NLIStatementOutput
    from ragas.metrics.result import MetricResult

    class WindowedFaithfulness(Faithfulness):
        """ragas faithfulness whose verdict prompt never exceeds ``window`` tokens (None:
        unknown, ragas's own path) with ``reply_tokens`` left for the reply."""

        def __init__(self, llm: Any, window: int | None, reply_tokens: int) -> None:
            super().__init__(llm=llm)
            self.window = window
            self.reply_tokens = reply_tokens
            schema = json.dumps(NLIStatementOutput.model_json_schema(), indent=2)
            self.system_tokens = tokens.count_tokens(schema) + INSTRUCTOR_WORDING_TOKENS

        def prompt_tokens(self, context: str, statements: list[str]) -> int:
            """Return the tokens of a verdict request (schema system message + ragas's prompt)."""
            data = NLIStatementInput(context=context, statements=statements)
            text = self.nli_statement_prompt.to_string(data)
            return tokens.message_tokens([{"content": text}]) + self.system_tokens

        def fits(self, context: str, statements: list[str]) -> bool:
            if self.window is None:
                return True
            return self.prompt_tokens(context, statements) + self.reply_tokens <= self.window

        def windows(self, contexts: list[str], statements: list[str]) -> list[str]:
            """Return the contexts joined into as few texts as fit the window, in order; a
            context too long alone is cut into pieces that fit."""
            room = self.window - self.reply_tokens - self.prompt_tokens("", statements)
            if room < 64:
                raise ValueError(
                    f"the judge's window ({self.window} tokens: setting llm.context_tokens, "
                    f"else embedded.ctx_size / embedded.parallel) has no room for a context "
                    f"beside {len(statements)} statements and llm.max_tokens "
                    f"({self.reply_tokens}) for the reply"
                )
            step = int(room * 0.8)  # JSON escaping in the prompt costs a few tokens more
            pieces: list[str] = []
            for context in contexts:
                ids = tokens.encode(context)
                pieces.extend(tokens.decode(ids[i : i + step]) for i in range(0, len(ids), step))
            texts: list[str] = []
            for piece in pieces:
                joined = f"{texts[-1]}\n{piece}" if texts else piece
                if texts and self.fits(joined, statements):
                    texts[-1] = joined
                else:
                    texts.append(piece)
            return texts

        async def ascore(
            self, user_input: str, response: str, retrieved_contexts: list[str]
        ) -> Any:
            if not response or not retrieved_contexts:
                return await super().ascore(user_input, response, retrieved_contexts)
            joined = "\n".join(retrieved_contexts)
            statements = await self._create_statements(user_input, response)
            if not statements:
                return MetricResult(value=float("nan"))
            if self.fits(joined, statements):
                verdicts = await self._create_verdicts(statements, joined)
                return MetricResult(value=float(self._compute_score(verdicts)))
            supported = [0] * len(statements)
            for text in self.windows(retrieved_contexts, statements):
                verdicts = await self._create_verdicts(statements, text)
                for position, verdict in _matched_verdicts(statements, verdicts.statements):
                    supported[position] = max(supported[position], int(verdict))
            return MetricResult(value=sum(supported) / len(statements))

    return WindowedFaithfulness


def _matched_verdicts(statements: list[str], answers: list[Any]) -> list[tuple[int, int]]:
    """Return (statement position, verdict) for a window's verdicts: by position when the
    judge answered every statement, else by the statement's text."""
    if len(answers) == len(statements):
        return [(i, a.verdict) for i, a in enumerate(answers)]
    where = {" ".join(s.lower().split()): i for i, s in enumerate(statements)}
    found = ((where.get(" ".join(a.statement.lower().split())), a.verdict) for a in answers)
    return [(i, v) for i, v in found if i is not None]


class Judge:
    """Build the ragas metrics once per event loop and score one answer at a time."""

    def __init__(
        self, settings: Settings, llm: ChatLLM, embedder: Embedder, metrics: list[str]
    ) -> None:
        unknown = [m for m in metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"unknown RAGAS metric(s) {unknown}; known: {', '.join(METRICS)}")
        self.settings = settings
        self.llm = llm
        self.embedder = embedder
        self.names = list(metrics)
        self._metrics: dict[str, Any] | None = None
        self._client: Any = None

    def _build(self) -> dict[str, Any]:
        # A replay miss stays a miss: retrying it would only wait out the client's backoff.
        replay = self.settings.cache.mode == "replay"
        client = self.llm.async_client(max_retries=0 if replay else self.settings.llm.max_retries)
        if self._metrics is not None and client is self._client:
            return self._metrics
        # ragas is imported only when a RAGAS metric is scored (seconds to import)
        from ragas.llms import llm_factory
        from ragas.metrics.collections import AnswerRelevancy, ContextRecall

        judge = llm_factory(
            self.llm.model,  # the judge's model ([judge]), by default the answering model's
            provider="openai",
            client=client,
            temperature=0.0,
            top_p=1.0,
            max_tokens=self.settings.llm.max_tokens,
            seed=self.settings.llm.seed,
        )
        embeddings = _embeddings_class()(self.embedder)
        builders = {
            "faithfulness": lambda: _windowed_faithfulness_class()(
                judge, self.llm.context_limit(), self.settings.llm.max_tokens
            ),
            "answer_relevancy": lambda: AnswerRelevancy(
                llm=judge,
                embeddings=embeddings,
                strictness=self.settings.eval.answer_relevancy_strictness,
            ),
            "context_recall": lambda: ContextRecall(llm=judge),
        }
        self._metrics = {name: builders[name]() for name in self.names}
        self._client = client
        return self._metrics

    async def score(
        self, metric: str, question: str, answer: str, contexts: list[str], reference: str
    ) -> JudgeResult:
        """Return one metric's value for one answer, or NaN with the reason."""
        scorer = self._build()[metric]
        misses_before = len(self.llm.cache.misses)
        value, error = math.nan, None
        with track_usage() as usage:
            try:
                if not contexts and metric != "answer_relevancy":
                    raise ValueError("the method gave no context to judge")
                if metric == "faithfulness":
                    result = await scorer.ascore(
                        user_input=question, response=answer, retrieved_contexts=contexts
                    )
                elif metric == "answer_relevancy":
                    result = await scorer.ascore(user_input=question, response=answer)
                else:
                    result = await scorer.ascore(
                        user_input=question, retrieved_contexts=contexts, reference=reference
                    )
                value = float(result.value)
                if math.isnan(value):
                    error = "no verdict: the judge returned nothing to score"
            except CacheMissError:
                raise
            except Exception as err:  # noqa: BLE001 - kept as this item's failure
                error = error_summary(err)
        if len(self.llm.cache.misses) > misses_before:
            # ragas may swallow the transport's exception; replay must still fail loudly.
            raise CacheMissError(self.llm.cache.misses[-1])
        return JudgeResult(value, error, usage)
