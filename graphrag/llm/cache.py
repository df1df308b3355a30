"""The recorded LLM cache: replies on disk under the hash of their request.

The cache is read and written by the HTTP transport under the ``openai`` client
(graphrag/llm/transport.py), so that any library handed our client (ragas, for evaluation)
is recorded, replayed, bounded in concurrency and counted exactly like our own calls. A
response is stored under the hash of the request body (model, messages and every
parameter; :func:`request_key`), one JSON file per response, so the committed cache grows by
whole files and diffs stay readable.

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
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import threading
import weakref
from pathlib import Path
from typing import Any

from filelock import FileLock


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
