"""Every chat call of the workbench: the recorded cache, JSON output, retries, usage accounting.

The cache sits in the HTTP transport under the ``openai`` client rather than in a wrapper
around it, so that any library handed our client (ragas, for evaluation) is recorded,
replayed, bounded in concurrency and counted exactly like our own calls. A response is
stored under the hash of the request body (model, messages and every parameter), one JSON
file per response, so the committed cache grows by whole files and diffs stay readable.

Only non-streaming chat completions can be recorded; in ``on`` and ``replay`` modes any other
request is refused (:class:`UnrecordableRequestError`) rather than sent past the cache, so
"replay never calls a model" holds for every request of every library given our client.
A JSON reply that fails validation is kept (marked ``invalid``) but never ends a call: the
next run replays the failed attempt and asks again with another ``seed`` (see
:meth:`ChatLLM.ajson`), so a replay reaches the attempt that succeeded.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import os
import re
import secrets
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import jsonschema
import openai
from filelock import FileLock
from tenacity import (
    AsyncRetrying,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from graphrag import tokens
from graphrag.config import Settings

T = TypeVar("T")
CHAT_PATH_SUFFIX = "/chat/completions"
CACHE_KEY_HEADER = "x-graphrag-cache-key"
CACHE_HIT_HEADER = "x-graphrag-cache-hit"
MESSAGE_OVERHEAD_TOKENS = 8  # chat template tokens around each message (role, start, end)
EMBEDDED_PLACEHOLDER_URL = "http://embedded-llm.invalid/v1"


class LLMError(RuntimeError):
    """A chat call failed for good; the message says which endpoint or prompt."""


class CacheMissError(LLMError):
    """Replay mode met a request that is not in the recorded cache."""

    first_call_of_attempt = False  # set by ChatLLM: the miss was the first call of an attempt


class JSONOutputError(LLMError):
    """The model's output stayed invalid against the schema after every repair round."""


class UnrecordableRequestError(LLMError):
    """The cache can neither record nor replay this request (not a chat call, or streamed)."""


# --------------------------------------------------------------------------- usage


@dataclass
class Usage:
    """What a piece of work cost in LLM traffic.

    ``prompt_tokens``/``completion_tokens``/``model_seconds`` are what the endpoint reported
    when each response was produced, so a replayed run still reports what it cost to make;
    ``seconds`` is the time this run actually waited on the endpoint.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0

    def add(self, other: Usage) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


_usage_scopes: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar(
    "graphrag_usage_scopes", default=()
)


@contextmanager
def track_usage() -> Iterator[Usage]:
    """Yield a Usage that counts every LLM call made inside the block (tasks included)."""
    usage = Usage()
    token = _usage_scopes.set(_usage_scopes.get() + (usage,))
    try:
        yield usage
    finally:
        _usage_scopes.reset(token)


def _count(record: dict[str, Any], hit: bool, waited: float) -> None:
    reported = record["response"].get("usage") or {}
    one = Usage(
        calls=1,
        cache_hits=int(hit),
        prompt_tokens=int(reported.get("prompt_tokens") or 0),
        completion_tokens=int(reported.get("completion_tokens") or 0),
        seconds=waited,
        model_seconds=float(record.get("seconds") or 0.0),
    )
    for scope in _usage_scopes.get():
        scope.add(one)


# --------------------------------------------------------------------------- cache


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(body: dict[str, Any]) -> str:
    """Return the content address of a chat request body."""
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


class ResponseCache:
    """Chat responses on disk, one JSON file per request hash, under ``root/ab/abcdef….json``.

    Modes: ``on`` reads and writes, ``off`` neither, ``replay`` reads only and turns a miss
    into :class:`CacheMissError`. Misses seen in replay are also kept in ``misses`` so a
    caller whose library swallows exceptions (ragas) can still fail loudly.
    """

    def __init__(self, root: Path, mode: str = "on") -> None:
        if mode not in ("on", "off", "replay"):
            raise ValueError(f"cache mode {mode!r}: expected on, off or replay")
        self.root = Path(root)
        self.mode = mode
        self.misses: list[str] = []
        self._thread_locks: dict[str, threading.Lock] = {}
        self._async_locks: weakref.WeakKeyDictionary[Any, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )
        self._guard = threading.Lock()

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        if self.mode == "off":
            return None
        path = self.path_for(key)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except ValueError as err:
            raise LLMError(
                f"cache entry {path} is corrupt ({err}); delete it to re-record"
            ) from err

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` whole or not at all, even with other processes writing the cache.

        The temporary name is unique per process, thread and call (a thread id alone repeats
        across processes), the data is fsynced before the rename, and ``os.replace`` is atomic.
        """
        if self.mode != "on":
            return
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        unique = f"{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}"
        tmp = path.parent / f".{key}.{unique}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as file:
                file.write(json.dumps(record, ensure_ascii=False, indent=1))
                file.flush()
                os.fsync(file.fileno())
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    def annotate(self, key: str, **fields: Any) -> None:
        """Add ``fields`` to the stored record of ``key`` (e.g. why its reply was invalid)."""
        record = self.get(key) if self.mode == "on" else None
        if record is not None and any(record.get(k) != v for k, v in fields.items()):
            self.put(key, {**record, **fields})

    def process_lock(self, key: str) -> FileLock:
        """Return the lock that lets one process at a time ask the model for ``key``.

        Lock files live in ``.locks/`` beside the shards (ignored by git); the lock is not
        thread-local, so an asyncio task may take it in a worker thread and release it later.
        """
        folder = self.root / ".locks"
        folder.mkdir(parents=True, exist_ok=True)
        return FileLock(folder / f"{key}.lock", thread_local=False)

    def miss(self, body: dict[str, Any]) -> CacheMissError:
        """Record a replay miss and return the error that names its prompt."""
        messages = body.get("messages") or []
        last = messages[-1].get("content", "") if messages else ""
        text = last if isinstance(last, str) else json.dumps(last)
        excerpt = " ".join(text.split())[:300]
        message = (
            f"replay cache miss in {self.root} for model {body.get('model')!r}: the prompt "
            f"ending {excerpt!r} was never recorded. Run with GRAPHRAG_CACHE=on to record it."
        )
        self.misses.append(message)
        return CacheMissError(message)

    def thread_lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._thread_locks.setdefault(key, threading.Lock())

    def async_lock(self, key: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # asyncio locks belong to one event loop
        with self._guard:
            return self._async_locks.setdefault(loop, {}).setdefault(key, asyncio.Lock())

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0


def _chat_body(request: httpx.Request, mode: str) -> dict[str, Any] | None:
    """Return the body of a recordable chat request; None for one that bypasses the cache.

    Only ``off`` mode lets other requests through: in ``on`` mode they would go unrecorded
    (a re-run would call the model again) and in ``replay`` mode they would call a model.
    """
    is_chat = request.method == "POST" and request.url.path.endswith(CHAT_PATH_SUFFIX)
    body = json.loads(request.content or b"{}") if is_chat else {}
    if is_chat and not body.get("stream"):
        return body
    if mode == "off":
        return None
    what = "a streaming chat request" if is_chat else f"{request.method} {request.url.path}"
    raise UnrecordableRequestError(
        f"the recorded LLM cache (mode {mode!r}) cannot serve {what}: only non-streaming "
        "chat completions are recorded and replayed; use stream=False, or cache.mode = 'off'"
    )


def _cached_response(
    request: httpx.Request, key: str, response: dict[str, Any], hit: bool
) -> httpx.Response:
    headers = {CACHE_KEY_HEADER: key, CACHE_HIT_HEADER: "1" if hit else "0"}
    return httpx.Response(200, json=response, headers=headers, request=request)


def _record(body: dict[str, Any], response: dict[str, Any], seconds: float) -> dict[str, Any]:
    return {
        "request": body,
        "response": response,
        "seconds": round(seconds, 3),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class _Upstream:
    """Where live requests go: a fixed URL, or the embedded server started on first need.

    ``recover`` is the embedded server's restart hook: when a request cannot reach the server
    (it crashed or was killed), the server is restarted once and the request re-sent, so a
    long run carries on and keeps what it finished.
    """

    def __init__(
        self,
        resolve: Callable[[], str] | None,
        recover: Callable[[str | None], str] | None = None,
    ) -> None:
        self._resolve = resolve
        self._recover = recover
        self._base: str | None = None
        self._lock = threading.Lock()

    def rewrite(self, request: httpx.Request) -> httpx.Request:
        if self._resolve is None:
            return request
        with self._lock:
            if self._base is None:
                self._base = self._resolve().rstrip("/")
            base = self._base
        suffix = request.url.path.split("/v1", 1)[-1]
        url = httpx.URL(base + suffix, params=request.url.params)
        headers = request.headers.copy()
        headers["host"] = url.netloc.decode()
        return httpx.Request(
            request.method,
            url,
            headers=headers,
            content=request.content,
            extensions=request.extensions,
        )

    def recover(self, err: Exception) -> bool:
        """Return True when the request that failed with ``err`` is worth sending again."""
        if self._recover is None or isinstance(err, httpx.TimeoutException):
            return False
        with self._lock:
            failed = self._base
        base = self._recover(failed).rstrip("/")
        with self._lock:
            self._base = base
        return True


class RecordingTransport(httpx.BaseTransport):
    """A sync httpx transport: cache hits answered from disk, live calls bounded and stored."""

    def __init__(self, cache: ResponseCache, upstream: _Upstream, concurrency: int) -> None:
        self.cache = cache
        self.upstream = upstream
        self.inner = httpx.HTTPTransport()
        self.slots = threading.BoundedSemaphore(concurrency)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = _chat_body(request, self.cache.mode)
        if body is None:
            return self._send(request)
        key = request_key(body)
        with self.cache.thread_lock(key):
            hit = _hit(self.cache, key, request)
            if hit is not None:
                return hit
            if self.cache.mode == "replay":
                raise self.cache.miss(body)
            with _process_lock(self.cache, key) as lock:
                if lock is not None:
                    lock.acquire()
                hit = _hit(self.cache, key, request)  # another process may have recorded it
                if hit is not None:
                    return hit
                with self.slots:
                    started = time.monotonic()
                    response = self._send(request)
                    seconds = time.monotonic() - started
                return _store(self.cache, key, body, request, response, seconds)

    def _send(self, request: httpx.Request) -> httpx.Response:
        try:
            response = self.inner.handle_request(self.upstream.rewrite(request))
        except httpx.TransportError as err:
            if not self.upstream.recover(err):
                raise
            response = self.inner.handle_request(self.upstream.rewrite(request))
        response.read()
        return response


class AsyncRecordingTransport(httpx.AsyncBaseTransport):
    """The asyncio twin of :class:`RecordingTransport`."""

    def __init__(self, cache: ResponseCache, upstream: _Upstream, concurrency: int) -> None:
        self.cache = cache
        self.upstream = upstream
        self.concurrency = concurrency
        self._slots: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()
        self._inners: weakref.WeakKeyDictionary[Any, httpx.AsyncHTTPTransport] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def inner(self) -> httpx.AsyncHTTPTransport:
        """The connection pool of the running loop: a kept-alive connection belongs to the loop
        that opened it, and each ``run_sync`` runs a new loop."""
        loop = asyncio.get_running_loop()
        inner = self._inners.get(loop)
        if inner is None:
            inner = self._inners[loop] = httpx.AsyncHTTPTransport()
        return inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = _chat_body(request, self.cache.mode)
        if body is None:
            return await self._send(request)
        key = request_key(body)
        async with self.cache.async_lock(key):
            hit = _hit(self.cache, key, request)
            if hit is not None:
                return hit
            if self.cache.mode == "replay":
                raise self.cache.miss(body)
            with _process_lock(self.cache, key) as lock:
                if lock is not None:
                    await asyncio.to_thread(lock.acquire)
                hit = _hit(self.cache, key, request)  # another process may have recorded it
                if hit is not None:
                    return hit
                loop = asyncio.get_running_loop()
                slots = self._slots.setdefault(loop, asyncio.Semaphore(self.concurrency))
                async with slots:
                    started = time.monotonic()
                    response = await self._send(request)
                    seconds = time.monotonic() - started
                return _store(self.cache, key, body, request, response, seconds)

    async def _send(self, request: httpx.Request) -> httpx.Response:
        live = await asyncio.to_thread(self.upstream.rewrite, request)
        try:
            response = await self.inner.handle_async_request(live)
        except httpx.TransportError as err:
            if not await asyncio.to_thread(self.upstream.recover, err):
                raise
            live = await asyncio.to_thread(self.upstream.rewrite, request)
            response = await self.inner.handle_async_request(live)
        await response.aread()
        return response


def _hit(cache: ResponseCache, key: str, request: httpx.Request) -> httpx.Response | None:
    record = cache.get(key)
    if record is None:
        return None
    _count(record, hit=True, waited=0.0)
    return _cached_response(request, key, record["response"], hit=True)


@contextmanager
def _process_lock(cache: ResponseCache, key: str) -> Iterator[FileLock | None]:
    """Yield the cross-process lock of ``key`` for the caller to acquire (None when the cache
    does not record, so nothing is shared), and release it on exit if it was taken."""
    lock = cache.process_lock(key) if cache.mode == "on" else None
    try:
        yield lock
    finally:
        if lock is not None and lock.is_locked:
            lock.release()


def _store(
    cache: ResponseCache,
    key: str,
    body: dict[str, Any],
    request: httpx.Request,
    response: httpx.Response,
    seconds: float,
) -> httpx.Response:
    if response.status_code != 200:
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            content=response.content,
            request=request,
        )
    try:
        payload = response.json()
        if not payload["choices"][0]["message"]:
            raise ValueError("no message in the first choice")
    except (ValueError, KeyError, IndexError, TypeError) as err:
        # A garbled 200 (empty, cut or not a completion) is the endpoint's fault and may be
        # transient: answered as a 502, so it is retried and never recorded.
        return httpx.Response(
            502,
            json={"error": {"message": f"the endpoint's 200 reply is not a completion ({err})"}},
            request=request,
        )
    record = _record(body, payload, seconds)
    cache.put(key, record)
    _count(record, hit=False, waited=seconds)
    return _cached_response(request, key, record["response"], hit=False)


# --------------------------------------------------------------------------- chat


@dataclass
class Completion:
    text: str
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    cache_key: str | None = None  # where the reply is recorded (None when the cache is off)


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


def _prompt_tokens(messages: list[dict[str, str]]) -> int:
    """Return an upper estimate of the prompt tokens of ``messages`` (template included)."""
    return sum(
        tokens.count_tokens(str(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in messages
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
        self._upstream = _Upstream(resolver, recover)
        self._api_key = self._read_key()
        self._sync: openai.OpenAI | None = None
        self._async: dict[int, tuple[Any, openai.AsyncOpenAI]] = {}
        # One transport per kind, shared by every client this object hands out, so that
        # llm.concurrency bounds all of them together (threads included).
        self._sync_transport = RecordingTransport(
            self.cache, self._upstream, settings.llm.concurrency
        )
        self._async_transport = AsyncRecordingTransport(
            self.cache, self._upstream, settings.llm.concurrency
        )

    def _read_key(self) -> str:
        import os

        return os.environ.get(self.settings.llm.api_key_env) or "sk-no-key-required"

    def _timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.settings.llm.timeout, connect=10.0)

    def sync_client(self, max_retries: int = 0) -> openai.OpenAI:
        """Return an ``openai.OpenAI`` whose traffic goes through the recorded cache."""
        if self._sync is None or max_retries:
            client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=max_retries,
                timeout=self._timeout(),
                http_client=httpx.Client(transport=self._sync_transport, timeout=self._timeout()),
            )
            if max_retries:
                return client
            self._sync = client
        return self._sync

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
                http_client=httpx.AsyncClient(
                    transport=self._async_transport, timeout=self._timeout()
                ),
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

    def _retrying(self, kind: type) -> Any:
        llm = self.settings.llm
        return kind(
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
    ) -> Completion:
        """Return the model's reply to ``messages`` (from the cache when recorded)."""
        params = self._params(messages, max_tokens, temperature, response_format, seed)
        try:
            with track_usage() as usage:
                async for attempt in self._retrying(AsyncRetrying):
                    with attempt:
                        raw = await self.async_client().chat.completions.with_raw_response.create(
                            **params
                        )
        except openai.OpenAIError as err:
            raise _unwrap(err, self.base_url) from err
        return _completion(raw, usage)

    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        response_format: dict[str, Any] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """Blocking :meth:`achat`, for scripts and notebooks."""
        params = self._params(messages, max_tokens, temperature, response_format, seed)
        try:
            with track_usage() as usage:
                for attempt in self._retrying(Retrying):
                    with attempt:
                        raw = self.sync_client().chat.completions.with_raw_response.create(**params)
        except openai.OpenAIError as err:
            raise _unwrap(err, self.base_url) from err
        return _completion(raw, usage)

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
                budget = min(budget, max(limit - _prompt_tokens(messages), 1))
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
                        room = min(room, limit - _prompt_tokens(messages))
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
                    fixed = _prompt_tokens([*messages, {"content": request}, {"content": ""}])
                    shown = _cut_reply(shown, limit - budget - fixed)
                messages = [
                    *messages,
                    {"role": "assistant", "content": shown},
                    {"role": "user", "content": request},
                ]
        rounds_done = self.settings.llm.json_repair_rounds
        raise _FailedAttempt(f"JSON still invalid after {rounds_done} repair rounds: {error}", live)

    def json(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        *,
        name: str = "output",
        max_tokens: int | None = None,
    ) -> Any:
        """Blocking :meth:`ajson`."""
        return run_sync(self.ajson(messages, schema, name=name, max_tokens=max_tokens))

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
