"""The chat client of the workbench: one path for every call to the model, with retries.

A question's way to the model and back: a method calls :meth:`ChatLLM.achat` (or
:meth:`ChatLLM.ajson` / :meth:`ChatLLM.atext` for a checked reply, see
graphrag/llm/replies.py), which sends an ``openai`` request through the
:class:`~graphrag.llm.transport.RecordingTransport` (cache hit, or one bounded live call that is
stored), with retries on transport errors; the usage of every call is counted in the open
:func:`~graphrag.llm.usage.track_usage` scopes. The blocking :meth:`ChatLLM.chat` and
:meth:`ChatLLM.json` run the same coroutines (graphrag/llm/coroutines.py).

The names callers use are importable from here: the cache's errors and the coroutine and
usage helpers are re-exported.
"""

from __future__ import annotations

import asyncio
import math
import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from graphrag.llm import replies as llm_attempts
from graphrag.llm.cache import (
    CacheMissError,
    LLMError,
    ResponseCache,
    UnrecordableRequestError,
    canonical_json,
)
from graphrag.llm.coroutines import gather_with_progress, run_sync
from graphrag.llm.embedded.server import EmbeddedServer, EmbeddedServerError
from graphrag.llm.replies import JSONOutputError, parse_json_output
from graphrag.llm.stream import STOPPED_HEADER, StopRuleFactory, stopping
from graphrag.llm.transport import CACHE_KEY_HEADER, EMBEDDED_HOST, LiveEndpoint, RecordingTransport
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import Settings

__all__ = [
    "CacheMissError",
    "ChatLLM",
    "Completion",
    "JSONOutputError",
    "LLMError",
    "ResponseCache",
    "UnrecordableRequestError",
    "Usage",
    "canonical_json",
    "gather_with_progress",
    "parse_json_output",
    "run_sync",
    "track_usage",
]

# The base URL the openai client is given for the embedded model (transport.EMBEDDED_HOST),
# which the transport replaces with the embedded server's real address when, and only when, a
# request misses the cache.
EMBEDDED_PLACEHOLDER_URL = f"http://{EMBEDDED_HOST}/v1"
# Seconds before the first retry of a failed call (llm.max_retries); doubled per retry, up to
# RETRY_BACKOFF_MAX.
RETRY_BACKOFF = 1.0
RETRY_BACKOFF_MAX = 30.0


@dataclass
class Completion:
    """The model's reply to one request, with its usage and where it is recorded."""

    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    cache_key: str | None = None  # where the reply is recorded (None when the cache is off)
    stopped_early: str | None = None  # why a stop rule ended the reply (graphrag/llm/stream.py)
    # The first reply token's most likely alternatives, token -> log-probability, when the
    # request asked for ``top_logprobs`` and the endpoint gave them (``expected_grade`` reads a
    # rating's distribution from them).
    first_token_logprobs: dict[str, float] = field(default_factory=dict)


# First-token alternatives a grade asks for: every digit of a 0-5 or 1-5 scale is among them.
GRADE_ALTERNATIVES = 10


def grade_request(messages: list[dict[str, str]]) -> dict[str, Any]:
    """Return the :meth:`ChatLLM.achat` arguments of a one-digit grade (a judge's rating, a
    report's relevance): one greedy token with its alternatives, read by ``expected_grade``."""
    return {
        "messages": messages,
        "max_tokens": 1,
        "temperature": 0.0,
        "top_logprobs": GRADE_ALTERNATIVES,
    }


def expected_grade(completion: Completion, scale: tuple[int, ...]) -> float:
    """Return the mean of the digits of ``scale`` under the probabilities the model gave them
    as its first token (G-Eval's weighting: a graded judgment, not the one digit a small
    model replies to nearly everything); the replied digit when the endpoint gave none."""
    digits = {str(d): d for d in scale}
    weights = {
        digits[token.strip()]: math.exp(logprob)
        for token, logprob in completion.first_token_logprobs.items()
        if token.strip() in digits
    }
    if weights:
        total = math.fsum(weights.values())
        return math.fsum(d * w for d, w in weights.items()) / total
    text = completion.text.strip()
    if text[:1] in digits:
        return float(digits[text[:1]])
    raise ValueError(f"the reply {text[:40]!r} is not a grade {scale[0]}-{scale[-1]}")


def error_summary(err: BaseException, limit: int = 300) -> str:
    """Return how a failure is recorded in a row or a list of failures: the exception's
    type and its message on one line, cut to ``limit`` characters."""
    return f"{type(err).__name__}: {' '.join(str(err).split())[:limit]}"


def _retryable(err: BaseException) -> bool:
    if isinstance(err, openai.APIConnectionError):
        return not isinstance(err.__cause__, LLMError | EmbeddedServerError)
    if isinstance(err, openai.APIStatusError):
        return err.status_code == 429 or err.status_code >= 500
    return isinstance(err, openai.APITimeoutError)


def _unwrap(err: BaseException, base_url: str) -> BaseException:
    """Return the error to show the user: cache refusals, a dead embedded server and
    unreachable endpoints by name."""
    if isinstance(err.__cause__, LLMError | EmbeddedServerError):
        return err.__cause__
    if isinstance(err, openai.APIConnectionError):
        return LLMError(
            f"LLM endpoint {base_url} is unreachable ({err.__cause__ or err}); "
            "check llm.base_url or start the server"
        )
    if isinstance(err, openai.APIStatusError):
        return LLMError(f"LLM endpoint {base_url} answered {err.status_code}: {err.message}")
    return err


def _completion(raw: Any, usage: Usage) -> Completion:
    response = raw.parse()
    choice = response.choices[0]
    key = raw.headers.get(CACHE_KEY_HEADER)
    tokens = (choice.logprobs.content or []) if choice.logprobs else []
    first = {t.token: t.logprob for t in tokens[0].top_logprobs} if tokens else {}
    return Completion(
        choice.message.content or "", choice.finish_reason, usage, key, first_token_logprobs=first
    )


async def _streamed_completion(raw: Any, usage: Usage) -> Completion:
    """Return the completion of a streamed reply (the transport has already read it whole)."""
    parts, finish = [], None
    async for chunk in raw.parse():
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    headers = raw.headers
    return Completion(
        "".join(parts), finish, usage, headers.get(CACHE_KEY_HEADER), headers.get(STOPPED_HEADER)
    )


class ChatLLM:
    """The one chat client of the workbench, for any OpenAI-compatible endpoint.

    With an empty ``llm.base_url`` the embedded llama.cpp server is used, and it is started
    only when a request misses the cache, so replayed work never needs a model.
    """

    def __init__(
        self,
        settings: Settings,
        cache: ResponseCache | None = None,
        upstream: Callable[[], str] | None = None,
    ) -> None:
        self.settings = settings
        self.model = settings.llm.model
        self.cache = cache or ResponseCache(
            settings.resolve_path(settings.cache.path), settings.cache.mode
        )
        self.server = None
        if settings.llm.base_url:
            self.base_url = settings.llm.base_url
            resolver = upstream
        else:
            self.server = EmbeddedServer(settings)
            self.base_url = EMBEDDED_PLACEHOLDER_URL
            resolver = upstream or self.server.ensure_running
        if self.cache.window is None:
            self.cache.window = self.context_limit()
        recover = self.server.recover if self.server is not None and upstream is None else None
        self._upstream = LiveEndpoint(resolver, recover)
        self._api_key = self._read_key()
        self._async: dict[int, tuple[Any, openai.AsyncOpenAI]] = {}
        # One transport, shared by every client this object hands out, so that
        # llm.concurrency bounds all of them together (threads and event loops included).
        self._transport = RecordingTransport(self.cache, self._upstream, settings.llm.concurrency)

    def _read_key(self) -> str:
        return os.environ.get(self.settings.llm.api_key_env) or "sk-no-key-required"

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.settings.llm.timeout, connect=10.0)

    def async_client(self, max_retries: int = 0) -> openai.AsyncOpenAI:
        """Return an ``openai.AsyncOpenAI`` for the running loop, through the recorded cache."""
        loop = asyncio.get_running_loop()
        cached = self._async.get(max_retries)
        if cached is None or cached[0]() is not loop:
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=max_retries,
                timeout=self._timeout(),
                http_client=httpx.AsyncClient(transport=self._transport, timeout=self._timeout()),
            )
            self._async[max_retries] = (weakref.ref(loop), client)
        return self._async[max_retries][1]

    def _params(
        self,
        messages: list[dict[str, str]],
        max_tokens: int | None,
        temperature: float | None,
        response_format: dict[str, Any] | None,
        seed: int | None = None,
    ) -> dict:
        llm = self.settings.llm
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": llm.temperature if temperature is None else temperature,
            "max_tokens": max_tokens or llm.max_tokens,
            "seed": llm.seed if seed is None else seed,
        }
        if response_format is not None:
            params["response_format"] = response_format
        return params

    def _retrying(self) -> AsyncRetrying:
        llm = self.settings.llm
        return AsyncRetrying(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(llm.max_retries + 1),
            wait=wait_exponential(
                multiplier=RETRY_BACKOFF, min=RETRY_BACKOFF, max=RETRY_BACKOFF_MAX
            ),
            reraise=True,
        )

    async def achat(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
        stop_rule: StopRuleFactory | None = None,
        top_logprobs: int | None = None,
        frequency_penalty: float | None = None,
    ) -> Completion:
        """Return the model's reply to ``messages`` (from the cache when recorded).

        ``stop_rule`` makes the caller's stop rule from the request body (e.g. the indexing's
        ``RecordStop.for_request``): the reply is streamed and ended where the rule says (a
        repetition loop), and recorded as ended (graphrag/llm/stream.py). The rule is not sent
        and not part of the cache key.
        ``top_logprobs``: also ask for that many alternatives per token (OpenAI's
        ``logprobs``); the first token's are in ``Completion.first_token_logprobs``.
        ``frequency_penalty``: OpenAI's (query/loops.py re-asks a looping answer with it).
        """
        params = self._params(messages, max_tokens, temperature, response_format, seed)
        if top_logprobs:
            params |= {"logprobs": True, "top_logprobs": top_logprobs}
        # sent only when asked, so every key recorded without them stays as it was
        if frequency_penalty is not None:
            params["frequency_penalty"] = frequency_penalty
        if stop_rule:
            params |= {"stream": True, "stream_options": {"include_usage": True}}
        try:
            with track_usage() as usage, stopping(stop_rule):
                async for attempt in self._retrying():
                    with attempt:
                        raw = await self.async_client().chat.completions.with_raw_response.create(
                            **params
                        )
                        if stop_rule:
                            return await _streamed_completion(raw, usage)
        except openai.OpenAIError as err:
            raise _unwrap(err, self.base_url) from err
        return _completion(raw, usage)

    def chat(self, messages: list[dict[str, str]], **options: Any) -> Completion:
        """Blocking :meth:`achat` (same options), for scripts and notebooks: the same call
        path and the same concurrency limit."""
        return run_sync(self.achat(messages, **options))

    def context_limit(self) -> int | None:
        """Return the tokens one request may use in all (prompt + reply), None if unknown.

        ``llm.context_tokens`` when set; else the embedded server's per-slot context
        (``embedded.ctx_size / embedded.parallel``); another endpoint's limit is unknown.
        """
        if self.settings.llm.context_tokens:
            return self.settings.llm.context_tokens
        if self.server is not None:
            return self.settings.embedded.ctx_size // self.settings.embedded.parallel
        return None

    async def ajson(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        *,
        name: str = "output",
        max_tokens: int | None = None,
        stop_rule: StopRuleFactory | None = None,
    ) -> Any:
        """Return the model's reply parsed as JSON valid against ``schema``.

        One attempt widens a cut reply and runs repair rounds; a failed attempt is never
        final across runs: the next run replays it from the cache (free) and asks again with
        ``seed + 1``, and so on, one new attempt per run, so the recorded failure is not
        replayed forever at temperature 0 and a replay reaches the attempt that succeeded.
        The first attempt's requests are exactly those of a call without retries.
        (graphrag/llm/replies.py)

        ``stop_rule``: as in :meth:`achat` (a rule that closes the JSON it keeps, e.g. the
        reports' ``ReportCopyStop.for_request``).
        """
        return await llm_attempts.json_reply(self, messages, schema, name, max_tokens, stop_rule)

    async def atext(
        self,
        messages: list[dict[str, str]],
        *,
        name: str = "text",
        max_tokens: int | None = None,
        parse: Callable[[str], Any] | None = None,
    ) -> Any:
        """Return the model's plain-text reply, stripped, or ``parse`` of it; an empty reply,
        one cut off at ``max_tokens`` or one ``parse`` rejects (ValueError) is a failed
        attempt, handled as in :meth:`ajson`."""
        return await llm_attempts.text_reply(self, messages, name, max_tokens, parse)

    def json(self, messages: list[dict[str, str]], schema: dict[str, Any], **options: Any) -> Any:
        """Blocking :meth:`ajson` (same options)."""
        return run_sync(self.ajson(messages, schema, **options))

    def close(self) -> None:
        """Stop the embedded server if this client started it."""
        if self.server is not None:
            self.server.stop()
