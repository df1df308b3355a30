"""The recorded LLM cache, in the HTTP transport under the ``openai`` client.

The cache sits in the transport rather than in a wrapper around our own calls, so that any
library handed our client (ragas, for evaluation) is recorded, replayed, bounded in
concurrency and counted exactly like our own calls. A response is stored under the hash of
the request body (model, messages and every parameter), one JSON file per response, so the
committed cache grows by whole files and diffs stay readable.

Only chat completions can be recorded; in ``on`` and ``replay`` modes any other request is
refused (:class:`UnrecordableRequestError`) rather than sent past the cache, so "replay never
calls a model" holds for every request of every library given our client. A streamed chat
request is read whole by the transport (or ended early by its stop rule, see
graphrag/llm/stream.py), recorded as a completion and answered as a short event stream. A
refusal that depends only on the request and the server's window (llama.cpp's "prompt
exceeds the context size") is recorded too, so a replay fails that item exactly as the live
run did. Such a refusal, and a reply the server cut because its window was full (not at
``max_tokens``), is the fate of a window, not of the request: with a larger window than the
one that bound it (``ResponseCache.window``) it is not served, and is asked again.

Over 400 lines because the cache, its transport and the storing of a reply are one job that
must agree on every request's key; split, each part would re-state the others' rules.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import platform
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from filelock import FileLock

from graphrag.llm.stream import (
    STOPPED_HEADER,
    event_stream,
    keyed_body,
    read_stream,
    stop_rule,
)
from graphrag.llm.usage import count_call

CHAT_PATH_SUFFIX = "/chat/completions"
CACHE_KEY_HEADER = "x-graphrag-cache-key"
CACHE_HIT_HEADER = "x-graphrag-cache-hit"
SLOT_POLL_SECONDS = 0.02  # how often a request waiting for a free slot looks again


class LLMError(RuntimeError):
    """A chat call failed for good; the message says which endpoint or prompt."""


class CacheMissError(LLMError):
    """Replay mode met a request that is not in the recorded cache."""

    first_call_of_attempt = False  # set by ChatLLM: the miss was the first call of an attempt


class UnrecordableRequestError(LLMError):
    """The cache can neither record nor replay this request (not a chat call, or streamed)."""


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

    def __init__(self, root: Path, mode: str = "on", window: int | None = None) -> None:
        if mode not in ("on", "off", "replay"):
            raise ValueError(f"cache mode {mode!r}: expected on, off or replay")
        self.root = Path(root)
        self.mode = mode
        # Tokens one request may use on the live endpoint (prompt + reply), None if unknown:
        # a record bound by a smaller window is not served (see window_bound).
        self.window = window
        self.misses: list[str] = []
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

    def serves(self, record: dict[str, Any]) -> bool:
        """Return whether ``record`` answers its request on today's endpoint: not when the
        server's window bound it and today's window is larger."""
        bound = window_bound(record)
        return bound is None or self.window is None or self.window <= bound

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

    def records(self, schema_name: str | None = None) -> list[dict[str, Any]]:
        """Return the stored records (request, response, seconds), in key order; with
        ``schema_name``, only the JSON calls whose response format names that schema (e.g.
        ``"graph_extraction"``): what the benchmarks and tests read the recorded cache for.
        Recorded refusals (a prompt too long for the server) are left out: they hold no reply."""
        found = []
        for file in sorted(self.root.glob("*/*.json")):
            record = json.loads(file.read_text(encoding="utf-8"))
            if record.get("status", 200) != 200:  # a recorded refusal holds no reply
                continue
            response_format = record["request"].get("response_format") or {}
            named = response_format.get("json_schema", {}).get("name")
            if schema_name is None or named == schema_name:
                found.append(record)
        return found

    def async_lock(self, key: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # asyncio locks belong to one event loop
        with self._guard:
            return self._async_locks.setdefault(loop, {}).setdefault(key, asyncio.Lock())


def _chat_body(request: httpx.Request, mode: str) -> dict[str, Any] | None:
    """Return the body of a recordable chat request; None for one that bypasses the cache.

    Only ``off`` mode lets other requests through: in ``on`` mode they would go unrecorded
    (a re-run would call the model again) and in ``replay`` mode they would call a model.
    """
    if request.method == "POST" and request.url.path.endswith(CHAT_PATH_SUFFIX):
        return json.loads(request.content or b"{}")
    if mode == "off":
        return None
    raise UnrecordableRequestError(
        f"the recorded LLM cache (mode {mode!r}) cannot serve {request.method} "
        f"{request.url.path}: only chat completions are recorded and replayed; use "
        "cache.mode = 'off' for other requests"
    )


def _cached_response(
    request: httpx.Request, key: str, record: dict[str, Any], hit: bool, streamed: bool
) -> httpx.Response:
    """Return a recorded reply as the request asked for it: JSON, or an event stream."""
    headers = {CACHE_KEY_HEADER: key, CACHE_HIT_HEADER: "1" if hit else "0"}
    if record.get("status", 200) != 200:  # a recorded refusal: replayed as the server said it
        return httpx.Response(
            record["status"], json=record["response"], headers=headers, request=request
        )
    if record.get("stopped_early"):
        headers[STOPPED_HEADER] = record["stopped_early"]
    if not streamed:
        return httpx.Response(200, json=record["response"], headers=headers, request=request)
    headers["content-type"] = "text/event-stream"
    return httpx.Response(
        200, content=event_stream(record["response"]), headers=headers, request=request
    )


class LiveEndpoint:
    """Where live requests go: a fixed URL, or the embedded server started on first need.

    ``recover`` is the embedded server's restart hook: when a request cannot reach the server
    (it crashed or was killed), the server is restarted once and the request re-sent, so a
    long run carries on and keeps what it finished.
    """

    def __init__(
        self,
        resolve: Callable[[], str] | None,
        recover: Callable[[], str] | None = None,
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
        base = self._recover().rstrip("/")
        with self._lock:
            self._base = base
        return True


class RecordingTransport(httpx.AsyncBaseTransport):
    """The one transport under every client the workbench hands out (ours and ragas's).

    A cache hit is answered from disk; a miss (in ``on`` mode) is sent to the live endpoint
    once, whatever the number of identical requests in flight (per-request locks in this
    process and across processes), bounded by ``llm.concurrency``, and stored. The bound is
    a thread semaphore polled from asyncio, so it holds across every event loop and thread
    of the process that uses this transport (``run_sync`` runs a loop per call).
    """

    def __init__(self, cache: ResponseCache, upstream: LiveEndpoint, concurrency: int) -> None:
        self.cache = cache
        self.upstream = upstream
        self.slots = threading.BoundedSemaphore(concurrency)
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
        sent = _chat_body(request, self.cache.mode)
        if sent is None:
            response = await self._open(request)
            await response.aread()
            return response
        streamed = bool(sent.get("stream"))
        body = keyed_body(sent)
        key = request_key(body)
        async with self.cache.async_lock(key):
            hit = _hit(self.cache, key, request, streamed)
            if hit is not None:
                return hit
            if self.cache.mode == "replay":
                raise self.cache.miss(body)
            with _process_lock(self.cache, key) as lock:
                if lock is not None:
                    await asyncio.to_thread(lock.acquire)
                hit = _hit(self.cache, key, request, streamed)  # another process recorded it
                if hit is not None:
                    return hit
                rule = stop_rule(body) if streamed else None
                while not self.slots.acquire(blocking=False):
                    await asyncio.sleep(SLOT_POLL_SECONDS)
                stopped = None
                try:
                    started = time.monotonic()
                    response = await self._open(request)
                    if streamed and response.status_code == 200:
                        completion, stopped = await read_stream(response, body, rule)
                        response = httpx.Response(200, json=completion, request=request)
                    else:
                        await response.aread()
                    seconds = time.monotonic() - started
                finally:
                    self.slots.release()
                return _store(self.cache, key, body, request, response, seconds, streamed, stopped)

    async def _open(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` to the live endpoint; return its response, body still unread."""
        live = await asyncio.to_thread(self.upstream.rewrite, request)
        try:
            return await self.inner.handle_async_request(live)
        except httpx.TransportError as err:
            if not await asyncio.to_thread(self.upstream.recover, err):
                raise
            live = await asyncio.to_thread(self.upstream.rewrite, request)
            return await self.inner.handle_async_request(live)


def _hit(
    cache: ResponseCache, key: str, request: httpx.Request, streamed: bool
) -> httpx.Response | None:
    record = cache.get(key)
    if record is None or not cache.serves(record):
        return None
    count_call(record, hit=True, waited=0.0)
    return _cached_response(request, key, record, hit=True, streamed=streamed)


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
    streamed: bool = False,
    stopped: str | None = None,
) -> httpx.Response:
    if response.status_code != 200:
        if _refused_for_good(response):
            record = _record(body, response.json(), seconds, request, status=response.status_code)
            cache.put(key, record)
            count_call(record, hit=False, waited=seconds)
            return _cached_response(request, key, record, hit=False, streamed=streamed)
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
    extra = {"stopped_early": stopped} if stopped else {}
    record = _record(body, payload, seconds, request, **extra)
    cache.put(key, record)
    count_call(record, hit=False, waited=seconds)
    return _cached_response(request, key, record, hit=False, streamed=streamed)


def _record(
    body: dict[str, Any], response: Any, seconds: float, request: httpx.Request, **extra: Any
) -> dict[str, Any]:
    """Return the cache record of one live call: the request, what came back, when, and on
    which machine (its ``seconds`` are that machine's, see :func:`recording_host`)."""
    return {
        "request": body,
        "response": response,
        "seconds": round(seconds, 3),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": recording_host(request.url.host),
        **extra,
    }


# The host of the base URL the client is given for the embedded model: a name that can never
# resolve (.invalid is reserved for that); the transport sends a request that misses the cache
# to the embedded server's real address instead (graphrag/llm/client.py).
EMBEDDED_HOST = "embedded-llm.invalid"


def recording_host(endpoint_host: str) -> str:
    """Return what answered a call: this machine's CPU and cores for a server on this
    machine (the embedded one, whose requests carry :data:`EMBEDDED_HOST`), else the
    endpoint's host name. Model seconds recorded on different machines are not comparable,
    and sessions here change machines."""
    if endpoint_host not in ("127.0.0.1", "localhost", "::1", EMBEDDED_HOST):
        return f"endpoint {endpoint_host}"
    return f"{_cpu_name()}, {os.cpu_count()} cores"


@functools.cache
def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


# llama.cpp's refusal of a prompt longer than a slot's context: the same request is refused
# again on every run, so it is recorded like a reply and a replay meets the same error (the
# caller counts it as that item's failure) instead of a cache miss.
REFUSALS_RECORDED = frozenset({"exceed_context_size_error"})


def window_bound(record: dict[str, Any]) -> int | None:
    """Return the window (tokens per request) that decided ``record``'s fate, or None.

    A recorded refusal names it (llama.cpp's ``n_ctx``); a reply cut off (finish "length")
    before its ``max_tokens`` ended where the window was full, at prompt + reply tokens.
    """
    response = record.get("response") or {}
    if record.get("status", 200) != 200:
        n_ctx = (response.get("error") or {}).get("n_ctx")
        return int(n_ctx) if n_ctx else None
    if record.get("stopped_early"):
        return None
    try:
        finish = response["choices"][0].get("finish_reason")
        usage = response["usage"]
        used = int(usage["prompt_tokens"]) + int(usage["completion_tokens"])
        reply = int(usage["completion_tokens"])
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    max_tokens = record.get("request", {}).get("max_tokens")
    if finish == "length" and (max_tokens is None or reply < int(max_tokens)):
        return used
    return None


def _refused_for_good(response: httpx.Response) -> bool:
    """Return whether ``response`` is a refusal that depends only on the request."""
    if response.status_code != 400:
        return False
    try:
        error = response.json().get("error") or {}
    except ValueError:
        return False
    return isinstance(error, dict) and error.get("type") in REFUSALS_RECORDED
