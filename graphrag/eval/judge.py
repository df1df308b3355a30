"""RAGAS metrics driven by our own LLM endpoint and local embedder; no OpenAI key, no network.

ragas gets an ``openai.AsyncOpenAI`` whose HTTP transport is our recorded cache, so its judge
calls are recorded, replayed, bounded and counted like every other call. A metric that fails
(a small model's output that ragas cannot parse, an empty context) is a NaN with its error
kept beside it, never a zero and never dropped.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from graphrag.config import Settings
from graphrag.embeddings import Embedder
from graphrag.llm import ChatLLM
from graphrag.llm_cache import CacheMissError
from graphrag.usage import Usage, track_usage

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no telemetry from an offline tool

METRICS = ("faithfulness", "answer_relevancy", "context_recall")
# Judge calls per answer for each metric, as ragas 0.4 makes them (answer relevancy makes
# one per ``strictness``; with a deterministic cached judge, more would repeat one prompt).
JUDGE_CALLS = {"faithfulness": 2, "answer_relevancy": 1, "context_recall": 1}


@dataclass
class JudgeResult:
    value: float
    error: str | None
    usage: Usage


def _embeddings_class() -> type:
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
        from ragas.llms import llm_factory
        from ragas.metrics.collections import AnswerRelevancy, ContextRecall, Faithfulness

        judge = llm_factory(
            self.settings.llm.model,
            provider="openai",
            client=client,
            temperature=0.0,
            top_p=1.0,
            max_tokens=self.settings.llm.max_tokens,
            seed=self.settings.llm.seed,
        )
        embeddings = _embeddings_class()(self.embedder)
        builders = {
            "faithfulness": lambda: Faithfulness(llm=judge),
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
                error = f"{type(err).__name__}: {' '.join(str(err).split())[:300]}"
        if len(self.llm.cache.misses) > misses_before:
            # ragas may swallow the transport's exception; replay must still fail loudly.
            raise CacheMissError(self.llm.cache.misses[-1])
        return JudgeResult(value, error, usage)
