"""The chat client of the workbench: one path for every call, JSON output, retries.

A question's way to the model and back: a method calls :meth:`ChatLLM.achat` (or
:meth:`ChatLLM.ajson` for structured output), which sends an ``openai`` request through the
:class:`~graphrag.llm_cache.RecordingTransport` (cache hit, or one bounded live call that is
stored), with retries on transport errors; the usage of every call is counted in the open
:func:`~graphrag.usage.track_usage` scopes. The blocking :meth:`ChatLLM.chat` and
:meth:`ChatLLM.json` run the same coroutines.

A JSON reply that fails validation is kept (marked ``invalid``) but never ends a call: the
next run replays the failed attempt and asks again with another ``seed`` (see
:meth:`ChatLLM.ajson`), so a replay reaches the attempt that succeeded.

Over 400 lines on purpose: the call path and the JSON attempts (widening a cut reply, repair
rounds bounded by the context, seeded re-attempts across runs) stay together, because every
request an attempt sends must be exactly the one a later replay looks up.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import re
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import jsonschema
import openai
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from graphrag import tokens
from graphrag.config import Settings
from graphrag.llm_cache import (
    CACHE_KEY_HEADER,
    CacheMissError,
    LiveEndpoint,
    LLMError,
    RecordingTransport,
    ResponseCache,
    UnrecordableRequestError,
    canonical_json,
)
from graphrag.llm_stream import STOP_HEADER, STOP_RULES, STOPPED_HEADER
from graphrag.usage import Usage, track_usage

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

T = TypeVar("T")
# The base URL the openai client is given for the embedded model: a name that can never
# resolve (.invalid is reserved for that), which the transport replaces with the embedded
# server's real address when, and only when, a request misses the cache.
EMBEDDED_PLACEHOLDER_URL = "http://embedded-llm.invalid/v1"


class JSONOutputError(LLMError):
    """The model's output stayed invalid against the schema after every repair round."""


# --------------------------------------------------------------------------- chat


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    cache_key: str | None = None  # where the reply is recorded (None when the cache is off)
    stopped_early: str | None = None  # why a stop rule ended the reply (graphrag/llm_stream.py)


def _retryable(err: BaseException) -> bool:
    if isinstance(err, openai.APIConnectionError):
        from graphrag.local_llm import EmbeddedServerError

        return not isinstance(err.__cause__, LLMError | EmbeddedServerError)
    if isinstance(err, openai.APIStatusError):
        return err.status_code == 429 or err.status_code >= 500
    return isinstance(err, openai.APITimeoutError)


def _unwrap(err: BaseException, base_url: str) -> BaseException:
    """Return the error to show the user: cache refusals, a dead embedded server and
    unreachable endpoints by name."""
    from graphrag.local_llm import EmbeddedServerError

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


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def parse_json_output(text: str, schema: dict[str, Any]) -> Any:
    """Return the JSON value in ``text`` if it validates against ``schema``; raise ValueError."""
    match = _FENCE.match(text)
    raw = match.group(1) if match else text.strip()
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg} at character {err.pos})") from err
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "the top level"
        raise ValueError(f"schema violation at {where}: {err.message[:200]}") from err
    return value


class _FailedAttempt(Exception):  # noqa: N818 - internal signal, not an error for users
    """One :meth:`ChatLLM.ajson` attempt ended invalid; ``live`` if it asked the model."""

    def __init__(self, error: str, live: bool) -> None:
        super().__init__(error)
        self.error, self.live = error, live


def _completion(raw: Any, usage: Usage) -> Completion:
    response = raw.parse()
    choice = response.choices[0]
    key = raw.headers.get(CACHE_KEY_HEADER)
    return Completion(choice.message.content or "", choice.finish_reason, usage, key)


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


def _cut_reply(text: str, room: int) -> str:
    """Return ``text`` cut to ``room`` tokens with a visible mark; untouched if it fits."""
    mark = " …[cut]"
    if tokens.count_tokens(text) <= room:
        return text
    return tokens.truncate(text, max(room - tokens.count_tokens(mark), 0)) + mark


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
            from graphrag.local_llm import EmbeddedServer

            self.server = EmbeddedServer(settings)
            self.base_url = EMBEDDED_PLACEHOLDER_URL
            resolver = upstream or self.server.ensure_running
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
            wait=wait_exponential(multiplier=llm.retry_backoff, min=llm.retry_backoff, max=30),
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
        stop_rule: str | None = None,
    ) -> Completion:
        """Return the model's reply to ``messages`` (from the cache when recorded).

        ``stop_rule`` names a rule of graphrag/llm_stream.py (e.g. "records"): the reply is
        streamed and ended where the rule says (a repetition loop), and recorded as ended.
        """
        params = self._params(messages, max_tokens, temperature, response_format, seed)
        if stop_rule and stop_rule not in STOP_RULES:
            raise ValueError(f"unknown stop rule {stop_rule!r} (known: {', '.join(STOP_RULES)})")
        if stop_rule:
            params |= {
                "stream": True,
                "stream_options": {"include_usage": True},
                "extra_headers": {STOP_HEADER: stop_rule},
            }
        try:
            with track_usage() as usage:
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

    def _json_request(
        self, messages: list[dict[str, str]], schema: dict[str, Any], name: str
    ) -> tuple[list[dict[str, str]], dict[str, Any] | None]:
        mode = self.settings.llm.json_mode
        if mode == "json_schema":
            return messages, {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        instruction = (
            "Reply with one JSON value only, no prose, valid against this JSON "
            f"schema:\n{canonical_json(schema)}"
        )
        first, rest = messages[0], messages[1:]
        if first["role"] == "system":
            messages = [
                {"role": "system", "content": f"{first['content']}\n\n{instruction}"},
                *rest,
            ]
        else:
            messages = [{"role": "system", "content": instruction}, *messages]
        return messages, ({"type": "json_object"} if mode == "json_object" else None)

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
    ) -> Any:
        """Return the model's reply parsed as JSON valid against ``schema``.

        One attempt is :meth:`_json_attempt` (widening and repair rounds). A failed attempt
        is never final across runs: the next run replays it from the cache (free) and asks
        again with ``seed + 1``, and so on, one new attempt per run, so the recorded failure
        is not replayed forever at temperature 0 and a replay reaches the attempt that
        succeeded. The first attempt's requests are exactly those of a call without retries.
        """
        messages, response_format = self._json_request(messages, schema, name)
        return await self._attempts(
            name,
            lambda seed: self._json_attempt(
                messages, schema, name, max_tokens, response_format, seed
            ),
        )

    async def atext(
        self, messages: list[dict[str, str]], *, name: str = "text", max_tokens: int | None = None
    ) -> str:
        """Return the model's plain-text reply, stripped; an empty reply or one cut off at
        ``max_tokens`` is a failed attempt, handled as in :meth:`ajson`."""

        async def attempt(seed: int) -> str:
            try:
                with track_usage() as usage:
                    completion = await self.achat(messages, max_tokens=max_tokens, seed=seed)
            except CacheMissError as miss:
                miss.first_call_of_attempt = True
                raise
            text = completion.text.strip()
            if text and completion.finish_reason != "length":
                return text
            error = "the reply was cut off at max_tokens" if text else "the reply is empty"
            live = usage.calls > usage.cache_hits
            if completion.cache_key and live:
                self.cache.annotate(completion.cache_key, invalid=error)
            raise _FailedAttempt(error, live)

        return await self._attempts(name, attempt)

    async def _attempts(self, name: str, attempt: Callable[[int], Awaitable[T]]) -> T:
        """Return the result of the first attempt that succeeds, one new attempt per run.

        Attempt n asks with ``llm.seed + n``. Attempts already in the cache are replayed (free)
        until one succeeds; after a live attempt fails the call fails, naming the seed the next
        run will use. In replay mode a recorded failure with no later attempt is reproduced.
        """
        seed = self.settings.llm.seed
        last_failure: JSONOutputError | None = None
        while True:
            try:
                return await attempt(seed)
            except _FailedAttempt as failed:
                final = JSONOutputError(
                    f"{name}: the model's reply stayed invalid (attempt "
                    f"{seed - self.settings.llm.seed + 1}, seed {seed}): {failed.error}; the "
                    f"next run asks again with seed {seed + 1}"
                )
                if failed.live or self.cache.mode == "off":
                    raise final from None
                last_failure = final
            except CacheMissError as miss:
                if last_failure is None or not miss.first_call_of_attempt:
                    raise
                # Replay holds the failed attempts but no later one: the recorded run ended
                # in this failure, so replay reproduces it.
                self.cache.misses.remove(str(miss))
                raise last_failure from None
            seed += 1

    async def _json_attempt(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        name: str,
        max_tokens: int | None,
        response_format: dict[str, Any] | None,
        seed: int,
    ) -> Any:
        """Return the parsed reply of one attempt; raise :class:`_FailedAttempt` if invalid.

        A reply cut off at ``max_tokens`` is asked again once with twice the room (the same
        prompt, so only a truncated reply costs more). An invalid reply is shown back to the
        model with the validation error (a new prompt, so the cache records the repair too)
        up to ``llm.json_repair_rounds`` times. With a known context size, the re-asked room
        and the bad reply shown in a repair are cut so that prompt + reply fit in it.
        """
        limit = self.context_limit()
        budget = max_tokens or self.settings.llm.max_tokens
        widened, live, first = False, False, True
        error = ""
        rounds = 0
        while rounds <= self.settings.llm.json_repair_rounds:
            if limit is not None:
                budget = min(budget, max(limit - tokens.message_tokens(messages), 1))
            try:
                with track_usage() as usage:
                    completion = await self.achat(
                        messages, max_tokens=budget, response_format=response_format, seed=seed
                    )
            except CacheMissError as miss:
                miss.first_call_of_attempt = first
                raise
            first = False
            live = live or usage.calls > usage.cache_hits
            try:
                return parse_json_output(completion.text, schema)
            except ValueError as err:
                error = str(err)
                if completion.cache_key and usage.calls > usage.cache_hits:
                    # Marked when recorded, so replaying the committed cache rewrites nothing.
                    self.cache.annotate(completion.cache_key, invalid=error)
                if completion.finish_reason == "length" and not widened:
                    room = 2 * budget
                    if limit is not None:
                        room = min(room, limit - tokens.message_tokens(messages))
                    widened = True
                    if room > budget:
                        budget = room
                        continue
                if completion.finish_reason == "length":
                    error += " (the reply was cut off at max_tokens: be shorter)"
                rounds += 1
                request = (
                    f"That reply is invalid: {error}. Reply again with the corrected JSON only."
                )
                shown = completion.text
                if limit is not None:
                    fixed = tokens.message_tokens(
                        [*messages, {"content": request}, {"content": ""}]
                    )
                    shown = _cut_reply(shown, limit - budget - fixed)
                messages = [
                    *messages,
                    {"role": "assistant", "content": shown},
                    {"role": "user", "content": request},
                ]
        rounds_done = self.settings.llm.json_repair_rounds
        raise _FailedAttempt(f"JSON still invalid after {rounds_done} repair rounds: {error}", live)

    def json(self, messages: list[dict[str, str]], schema: dict[str, Any], **options: Any) -> Any:
        """Blocking :meth:`ajson` (same options)."""
        return run_sync(self.ajson(messages, schema, **options))

    def close(self) -> None:
        """Stop the embedded server if this client started it."""
        if self.server is not None:
            self.server.stop()


# --------------------------------------------------------------------------- running


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, even inside Jupyter's running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    result: dict[str, Any] = {}
    # The worker thread runs in a copy of this context, so usage scopes opened by the caller
    # (track_usage) still count the calls made on the worker's loop.
    context = contextvars.copy_context()

    def worker() -> None:
        try:
            result["value"] = context.run(asyncio.run, coro)  # type: ignore[arg-type]
        except BaseException as err:  # noqa: BLE001 - handed back to the caller's thread
            result["error"] = err

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


async def gather_with_progress(
    coros: Iterable[Awaitable[T]], desc: str, disable: bool = False
) -> list[T]:
    """Await all ``coros`` concurrently (the transport bounds live calls) with a progress bar.

    Results come back in input order; exceptions are returned in place, not raised, so one
    failed item never loses the others' finished work.
    """
    from tqdm import tqdm

    coros = list(coros)
    results: list[Any] = [None] * len(coros)

    async def run(i: int, coro: Awaitable[T]) -> None:
        try:
            results[i] = await coro
        except Exception as err:  # noqa: BLE001 - reported by the caller per item
            results[i] = err
        bar.update(1)

    with tqdm(total=len(coros), desc=desc, disable=disable, leave=False) as bar:
        await asyncio.gather(*(run(i, c) for i, c in enumerate(coros)))
    return results
