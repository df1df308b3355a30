"""The chat client of the workbench: every call to the model, through the recording transport
(graphrag/llm/transport.py), with retries; checked replies in graphrag/llm/replies.py. The
cache's errors and the coroutine and usage helpers are re-exported for callers.
"""

from __future__ import annotations

import asyncio
import functools
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
from graphrag.llm.cache import CacheMissError, LLMError, ResponseCache, request_key
from graphrag.llm.coroutines import run_sync
from graphrag.llm.embedded.server import EmbeddedServer, EmbeddedServerError
from graphrag.llm.identity import IDENTITIES_FILE, EndpointIdentity, embedded_identity
from graphrag.llm.replies import SEED, TEMPERATURE, parse_json_output
from graphrag.llm.stream import STOPPED_HEADER, StopRuleFactory, stopping
from graphrag.llm.transport import CACHE_KEY_HEADER, EMBEDDED_HOST, LiveEndpoint, RecordingTransport
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import Settings

__all__ = [
    "CacheMissError",
    "ChatLLM",
    "Completion",
    "LLMError",
    "ResponseCache",
    "parse_json_output",
    "run_sync",
    "track_usage",
]

# The embedded model's base URL until a request misses the cache (transport.EMBEDDED_HOST)
EMBEDDED_PLACEHOLDER_URL = f"http://{EMBEDDED_HOST}/v1"
# Seconds before the first retry of a failed call, doubled per retry up to RETRY_BACKOFF_MAX
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
    # the first reply token's alternatives, token -> log-probability, when asked (top_logprobs)
    first_token_logprobs: dict[str, float] = field(default_factory=dict)


# First-token alternatives a grade asks for: every digit of a 0-5 or 1-5 scale is among them.
GRADE_ALTERNATIVES = 10


def grade_request(messages: list[dict[str, str]]) -> dict[str, Any]:
    """Return the :meth:`ChatLLM.achat` arguments of a one-digit grade: one greedy token with
    its alternatives, read by ``expected_grade``."""
    return dict(messages=messages, max_tokens=1, temperature=0.0, top_logprobs=GRADE_ALTERNATIVES)


def expected_grade(completion: Completion, scale: tuple[int, ...]) -> float:
    """Return the mean of the digits of ``scale`` weighted by their first-token probabilities
    (G-Eval's weighting); the replied digit when the endpoint gave none."""
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
    """Return a failure as recorded in a row: its type and one-line message, cut to ``limit``."""
    return f"{type(err).__name__}: {' '.join(str(err).split())[:limit]}"


def retryable(err: BaseException) -> bool:
    """Return whether a failed call is worth sending again (connection, timeout, 429, 5xx)."""
    if isinstance(err, openai.APIConnectionError):
        return not isinstance(err.__cause__, LLMError | EmbeddedServerError)
    if isinstance(err, openai.APIStatusError):
        return err.status_code == 429 or err.status_code >= 500
    return isinstance(err, openai.APITimeoutError)


def retry_policy(max_retries: int) -> dict[str, Any]:
    """Return tenacity's arguments for a model call (chat or embeddings): a failure worth
    sending again (:func:`retryable`) is, up to ``max_retries`` times, after a doubling wait."""
    wait = wait_exponential(multiplier=RETRY_BACKOFF, min=RETRY_BACKOFF, max=RETRY_BACKOFF_MAX)
    retry = retry_if_exception(retryable)
    return dict(retry=retry, stop=stop_after_attempt(max_retries + 1), wait=wait, reraise=True)


def _unwrap(err: BaseException, base_url: str) -> BaseException:
    """Return the error to show the user: cache and server errors as they are, endpoints named."""
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
    """The one chat client of the workbench, for any OpenAI-compatible endpoint; with an empty
    ``llm.base_url``, the embedded server, started only when a request misses the cache."""

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
        self._api_key = os.environ.get(settings.llm.api_key_env) or "sk-no-key-required"
        self._async: dict[int, tuple[Any, openai.AsyncOpenAI]] = {}
        if self.server is not None:
            self.identity: Callable[[], dict[str, Any]] = functools.cache(
                functools.partial(embedded_identity, settings.embedded.model_file)
            )
        else:
            book = self.cache.root / IDENTITIES_FILE
            ask = self.cache.mode != "replay"  # a replay never calls the endpoint
            self.identity = EndpointIdentity(self.base_url, self.model, self._api_key, book, ask)
        # one transport under every client handed out: llm.concurrency bounds them together
        self._transport = RecordingTransport(
            self.cache, self._upstream, settings.llm.concurrency, self.identity
        )

    def cache_key(self, body: dict[str, Any], stop: StopRuleFactory | None = None) -> str:
        """Return the cache key of the request ``body`` (unstreamed) sent by this client,
        under the stop rule ``stop`` if any."""
        return request_key(body, self.identity(), stop.spec if stop else None)

    def request_body(
        self,
        messages: list[dict[str, str]],
        max_tokens: int | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Return the body :meth:`achat` sends for these arguments (before its optional
        fields: logprobs, penalties, streaming), as the cache keys it."""
        llm = self.settings.llm
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": TEMPERATURE if temperature is None else temperature,
            "max_tokens": max_tokens or llm.max_tokens,
            "seed": SEED if seed is None else seed,
        }
        if response_format is not None:
            params["response_format"] = response_format
        return params

    def recorded(
        self, body: dict[str, Any], stop: StopRuleFactory | None = None
    ) -> dict[str, Any] | None:
        """Return the cache's record that would answer ``body`` (under ``stop``), or None:
        what a dry run asks of every request it can build."""
        record = self.cache.get(self.cache_key(body, stop))
        return record if record is not None and self.cache.serves(record) else None

    def async_client(self, max_retries: int = 0) -> openai.AsyncOpenAI:
        """Return an ``openai.AsyncOpenAI`` for the running loop, through the recorded cache."""
        loop = asyncio.get_running_loop()
        cached = self._async.get(max_retries)
        if cached is None or cached[0]() is not loop:
            timeout = httpx.Timeout(self.settings.llm.timeout, connect=10.0)
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=max_retries,
                timeout=timeout,
                http_client=httpx.AsyncClient(transport=self._transport, timeout=timeout),
            )
            self._async[max_retries] = (weakref.ref(loop), client)
        return self._async[max_retries][1]

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
        """Return the model's reply to ``messages`` (from the cache when recorded); a
        ``stop_rule`` streams it and ends it where the rule says (graphrag/llm/stream.py)."""
        params = self.request_body(messages, max_tokens, temperature, seed, response_format)
        if top_logprobs:
            params |= {"logprobs": True, "top_logprobs": top_logprobs}
        # sent only when asked, so every key recorded without them stays as it was
        if frequency_penalty is not None:
            params["frequency_penalty"] = frequency_penalty
        if stop_rule:
            params |= {"stream": True, "stream_options": {"include_usage": True}}
        create = self.async_client().chat.completions.with_raw_response.create
        try:
            with track_usage() as usage, stopping(stop_rule):
                async for attempt in AsyncRetrying(**retry_policy(self.settings.llm.max_retries)):
                    with attempt:
                        raw = await create(**params)
                        if stop_rule:
                            return await _streamed_completion(raw, usage)
        except openai.OpenAIError as err:
            raise _unwrap(err, self.base_url) from err
        return _completion(raw, usage)

    def chat(self, messages: list[dict[str, str]], **options: Any) -> Completion:
        """Blocking :meth:`achat` (same options), for scripts and notebooks."""
        return run_sync(self.achat(messages, **options))

    def context_limit(self) -> int | None:
        """Return the tokens one request may use (prompt + reply): ``llm.context_tokens``, else
        the embedded server's per-slot context; None for another endpoint."""
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
        """Return the model's reply parsed as JSON valid against ``schema``, repaired and
        re-attempted with another seed on the next run (graphrag/llm/replies.py);
        ``stop_rule`` as in :meth:`achat`."""
        return await llm_attempts.json_reply(self, messages, schema, name, max_tokens, stop_rule)

    async def atext(
        self,
        messages: list[dict[str, str]],
        *,
        name: str = "text",
        max_tokens: int | None = None,
        parse: Callable[[str], Any] | None = None,
    ) -> Any:
        """Return the model's plain-text reply, stripped, or ``parse`` of it; an empty or cut
        reply, or one ``parse`` rejects (ValueError), is a failed attempt as in :meth:`ajson`."""
        return await llm_attempts.text_reply(self, messages, name, max_tokens, parse)

    def json(self, messages: list[dict[str, str]], schema: dict[str, Any], **options: Any) -> Any:
        """Blocking :meth:`ajson` (same options)."""
        return run_sync(self.ajson(messages, schema, **options))

    def close(self) -> None:
        """Stop the embedded server if this client started it."""
        if self.server is not None:
            self.server.stop()
