"""RAGAS metrics driven by our own LLM endpoint and local embedder; no OpenAI key, no network.

ragas gets an ``openai.AsyncOpenAI`` whose transport is our recorded cache, so its calls are
recorded, replayed and counted like every other. A failed metric is NaN with its error kept;
in replay a judge call never recorded makes it NaN with ``"not recorded"``.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from graphrag.llm import progress as lines_of
from graphrag.llm.cache import CacheMissError, collect_misses
from graphrag.llm.client import SEED, ChatLLM, error_summary
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import Settings
from graphrag.text.embeddings import Embedder
from workbench.eval.judge_windows import CONTEXT_PRECISION_DEPTH, windowed_classes

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry from an offline tool

# RAGAS context precision (against the reference) and its reference-free form (against the
# answer): judged when asked for, not by default (one call per context judged)
RANKING_METRICS = ("context_precision", "context_utilization")
# Every RAGAS metric the judge scores, with its judge calls per answer as ragas 0.4 makes them
# (context precision: at most)
JUDGE_CALLS = {"faithfulness": 2, "answer_relevancy": 1, "context_recall": 1}
JUDGE_CALLS |= dict.fromkeys(RANKING_METRICS, CONTEXT_PRECISION_DEPTH)
# a judgement's status (judge controls, pairwise judge); NOT_RECORDED is also a metric's error:
# a replay could not make the judgement, one of its calls is not in the cache
SCORED, JUDGE_FAILED, NOT_RECORDED = "scored", "judge failed", "not recorded"
# the error of a judgement left out by the seeded judge sample (eval.judge_sample)
NOT_SAMPLED = "not in the judge sample"
# the metrics judged on the seeded sample only (minutes of prompt reading per judgement)
SAMPLED_METRICS = ("faithfulness", "context_recall", *RANKING_METRICS)


@dataclass
class JudgeResult:
    value: float
    error: str | None
    usage: Usage

    @property
    def not_recorded(self) -> bool:
        return self.error == NOT_RECORDED


# Questions RAGAS answer relevancy generates back from each answer (one judge call each):
# RAGAS's default, never changed (docs/defaults-provenance.md)
ANSWER_RELEVANCY_STRICTNESS = 1


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


class Judge:
    """Build the ragas metrics once per event loop and score one answer at a time."""

    def __init__(
        self, settings: Settings, llm: ChatLLM, embedder: Embedder, metrics: list[str]
    ) -> None:
        unknown = [m for m in metrics if m not in JUDGE_CALLS]
        if unknown:
            known = ", ".join(JUDGE_CALLS)
            raise ValueError(f"unknown RAGAS metric(s) {unknown}; known: {known}")
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
        from ragas.metrics.collections import AnswerRelevancy

        judge = llm_factory(
            self.llm.model,  # the judge's model ([judge]), by default the answering model's
            provider="openai",
            client=client,
            temperature=0.0,
            top_p=1.0,
            max_tokens=self.settings.llm.max_tokens,
            seed=SEED,
        )
        embeddings = _embeddings_class()(self.embedder)
        windowed = windowed_classes(self.llm.context_limit(), self.settings.llm.max_tokens)
        builders = {
            "faithfulness": lambda: windowed["faithfulness"](judge),
            "answer_relevancy": lambda: AnswerRelevancy(
                llm=judge,
                embeddings=embeddings,
                strictness=ANSWER_RELEVANCY_STRICTNESS,
            ),
            **{m: partial(windowed[m], judge) for m in ("context_recall", *RANKING_METRICS)},
        }
        self._metrics = {name: builders[name]() for name in self.names}
        self._client = client
        return self._metrics

    async def score(
        self, metric: str, question: str, answer: str, contexts: list[str], reference: str
    ) -> JudgeResult:
        """Return one metric's value for one answer, or NaN with the reason (``NOT_RECORDED``
        when a replay met a judge call the cache does not hold)."""
        scorer = self._build()[metric]
        value, error = math.nan, None
        arguments = {
            "faithfulness": {"response": answer, "retrieved_contexts": contexts},
            "answer_relevancy": {"response": answer},
            "context_recall": {"retrieved_contexts": contexts, "reference": reference},
            "context_precision": {"retrieved_contexts": contexts, "reference": reference},
            "context_utilization": {"retrieved_contexts": contexts, "response": answer},
        }[metric]
        with track_usage() as usage, collect_misses() as misses:
            try:
                if not contexts and metric != "answer_relevancy":
                    raise ValueError("the method gave no context to judge")
                value = float((await scorer.ascore(user_input=question, **arguments)).value)
                if math.isnan(value):
                    error = "no verdict: the judge returned nothing to score"
            except CacheMissError:
                pass  # counted in misses below
            except Exception as err:  # noqa: BLE001 - kept as this item's failure
                error = error_summary(err)
        if misses:
            # this task's own misses (ragas may swallow the transport's exception)
            return JudgeResult(math.nan, NOT_RECORDED, usage)
        return JudgeResult(value, error, usage)


async def gather_counted(jobs: list[Callable[[], Awaitable]], in_flight: int) -> list:
    """Return the results of ``jobs`` (coroutine functions), at most ``in_flight`` running at
    once, each counted on the run's progress line as it ends."""
    gate = asyncio.Semaphore(max(1, in_flight))
    lines_of.expect(len(jobs))

    async def one(job: Callable[[], Awaitable]) -> object:
        async with gate:
            result = await job()
        lines_of.advance()
        return result

    return list(await asyncio.gather(*(one(job) for job in jobs)))
