"""The HTTP transport under every ``openai`` client the workbench hands out: a chat request is
answered from the recorded cache (graphrag/llm/cache.py) or sent once live and recorded under
its key (the identity of the model answering, graphrag/llm/identity.py, its body and its stop
rule). Other requests are refused in ``on`` and ``replay`` modes. A streamed
request is read whole here (or ended by a stop rule, graphrag/llm/stream.py); a refusal that
depends only on the request is recorded too, so a replay fails that item alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import platform
import threading
import time
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx

from graphrag.llm.cache import ResponseCache, UnrecordableRequestError, request_key
from graphrag.llm.stream import (
    STOPPED_HEADER,
    event_stream,
    keyed_body,
    read_stream,
    stop_rule,
    stop_spec,
)
from graphrag.llm.usage import count_call

CHAT_PATH_SUFFIX = "/chat/completions"
CACHE_KEY_HEADER = "x-graphrag-cache-key"
CACHE_HIT_HEADER = "x-graphrag-cache-hit"
SLOT_POLL_SECONDS = 0.02  # how often a request waiting for a free slot looks again


def _chat_body(request: httpx.Request, mode: str) -> dict[str, Any] | None:
    """Return the body of a recordable chat request; None for one that bypasses the cache
    (only in ``off`` mode: in ``on`` it would go unrecorded, in ``replay`` call a model)."""
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
    if record.get("stopped_early"):
        headers[STOPPED_HEADER] = record["stopped_early"]
    status = record.get("status", 200)  # a recorded refusal is replayed as the server said it
    if status != 200 or not streamed:
        return httpx.Response(status, json=record["response"], headers=headers, request=request)
    headers["content-type"] = "text/event-stream"
    content = event_stream(record["response"])
    return httpx.Response(200, content=content, headers=headers, request=request)


class LiveEndpoint:
    """Where live requests go: a fixed URL, or the embedded server started on first need;
    ``recover`` restarts a server a request could not reach, and the request is re-sent."""

    def __init__(
        self, resolve: Callable[[], str] | None, recover: Callable[[], str] | None = None
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
    """The one transport under every client handed out (ours and ragas's). A miss is sent once
    however many identical requests are in flight (locks per key, in and across processes);
    ``llm.concurrency`` is a thread semaphore, so it bounds every loop and thread. ``identity``
    returns who answers (asked once, maybe of the endpoint, so off the event loop)."""

    def __init__(
        self,
        cache: ResponseCache,
        upstream: LiveEndpoint,
        concurrency: int,
        identity: Callable[[], dict[str, Any]],
    ) -> None:
        self.cache = cache
        self.upstream = upstream
        self.identity = identity
        self._identity: dict[str, Any] | None = None  # once resolved, for every request
        self.slots = threading.BoundedSemaphore(concurrency)
        self._inners: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # loop -> pool

    @property
    def inner(self) -> httpx.AsyncHTTPTransport:
        """The connection pool of the running loop (a connection belongs to its loop)."""
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
        if self._identity is None:  # may ask the endpoint: once, off the event loop
            self._identity = await asyncio.to_thread(self.identity)
        keyed = {"identity": self._identity, "stop": stop_spec(sent)}
        key = request_key(body, keyed["identity"], keyed["stop"])
        async with self.cache.async_lock(key):
            if (hit := self._hit(key, request, streamed)) is not None:
                return hit
            if self.cache.mode == "replay":
                raise self.cache.miss(body)
            lock = self.cache.process_lock(key) if self.cache.mode == "on" else None
            try:
                if lock is not None:
                    await asyncio.to_thread(lock.acquire)
                if (hit := self._hit(key, request, streamed)) is not None:  # another process's
                    return hit
                rule = stop_rule(body) if streamed else None
                while not self.slots.acquire(blocking=False):
                    await asyncio.sleep(SLOT_POLL_SECONDS)
                try:
                    started = time.monotonic()
                    response = await self._open(request)
                    if streamed and response.status_code == 200:
                        completion, stopped = await read_stream(response, body, rule)
                        response = httpx.Response(200, json=completion, request=request)
                        keyed |= {"stopped_early": stopped} if stopped else {}
                    else:
                        await response.aread()
                    seconds = time.monotonic() - started
                finally:
                    self.slots.release()
                return self._store(key, body, request, response, seconds, streamed, keyed)
            finally:
                if lock is not None and lock.is_locked:
                    lock.release()

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

    def _hit(self, key: str, request: httpx.Request, streamed: bool) -> httpx.Response | None:
        record = self.cache.get(key)
        if record is None or not self.cache.serves(record):
            return None
        count_call(record, hit=True, waited=0.0)
        return _cached_response(request, key, record, hit=True, streamed=streamed)

    def _store(
        self,
        key: str,
        body: dict[str, Any],
        request: httpx.Request,
        response: httpx.Response,
        seconds: float,
        streamed: bool,
        keyed: dict[str, Any],
    ) -> httpx.Response:
        """Record a live reply, or a refusal for good, and answer with it; pass other
        failures on unrecorded (to be retried). ``keyed``: who answered and the stop rule
        (with the body, what the key hashes) and why the rule stopped the reply."""
        if response.status_code != 200:
            if not _refused_for_good(response):
                return httpx.Response(
                    response.status_code, headers=response.headers, content=response.content,
                    request=request,
                )  # fmt: skip
            payload, keyed = response.json(), {**keyed, "status": response.status_code}
            keyed.pop("stopped_early", None)
        else:
            try:
                payload = response.json()
                if not payload["choices"][0]["message"]:
                    raise ValueError("no message in the first choice")
            except (ValueError, KeyError, IndexError, TypeError) as err:
                # A garbled 200 (empty, cut or not a completion) is the endpoint's fault and
                # may be transient: answered as a 502, so it is retried and never recorded.
                message = f"the endpoint's 200 reply is not a completion ({err})"
                return httpx.Response(502, json={"error": {"message": message}}, request=request)
        record = {
            "request": body,
            "response": payload,
            "seconds": round(seconds, 3),
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "host": recording_host(request.url.host),
            **keyed,
        }
        self.cache.put(key, record)
        count_call(record, hit=False, waited=seconds)
        return _cached_response(request, key, record, hit=False, streamed=streamed)


ENDPOINT_PREFIX = "endpoint "  # a record's host when an endpoint, not this machine, answered
# The embedded model's host until a miss sends a request to the server's real address
EMBEDDED_HOST = "embedded-llm.invalid"


def recording_host(endpoint_host: str) -> str:
    """Return what answered a call: this machine's CPU and cores for a local server, else the
    endpoint's host (model seconds from different machines are not comparable)."""
    if endpoint_host not in ("127.0.0.1", "localhost", "::1", EMBEDDED_HOST):
        return f"{ENDPOINT_PREFIX}{endpoint_host}"
    return f"{cpu_name()}, {os.cpu_count()} cores"


@functools.cache
def cpu_name() -> str:
    """Return this machine's CPU model."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


# llama.cpp's refusal of a prompt longer than a slot: the same on every run, so recorded
REFUSALS_RECORDED = frozenset({"exceed_context_size_error"})


def _refused_for_good(response: httpx.Response) -> bool:
    """Return whether ``response`` is a refusal that depends only on the request."""
    if response.status_code != 400:
        return False
    try:
        error = response.json().get("error") or {}
    except ValueError:
        return False
    return isinstance(error, dict) and error.get("type") in REFUSALS_RECORDED
