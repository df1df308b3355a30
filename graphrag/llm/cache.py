"""The recorded LLM cache: one JSON file per reply under the hash of what decides the reply
(:func:`request_key`: the model's identity, the request body and the stop rule), read and
written by graphrag/llm/transport.py (which says what is recorded). A refusal or a cut reply
that a full window caused is not served to a larger window (:func:`window_bound`). The folder
names its key scheme in ``cache_format.json``; a folder keyed by an older scheme is refused.
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

from graphrag.llm.coroutines import TaskCollector

# the replay misses of the work inside ``collect_misses()`` (one judge score at a time)
_TASK_MISSES: TaskCollector[str] = TaskCollector("task_misses")
collect_misses = _TASK_MISSES.collecting


class LLMError(RuntimeError):
    """A chat call failed for good; the message says which endpoint or prompt."""


class CacheMissError(LLMError):
    """Replay mode met a request that is not in the recorded cache."""

    first_call_of_attempt = False  # set by ChatLLM: the miss was the first call of an attempt


class UnrecordableRequestError(LLMError):
    """The cache can neither record nor replay this request (not a chat call)."""


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


# The key scheme: 1 hashed the request body alone; 2 adds the model's identity and stop rule.
CACHE_FORMAT = 2
FORMAT_FILE = "cache_format.json"


def request_key(
    body: dict[str, Any], identity: dict[str, Any], stop: dict[str, Any] | None = None
) -> str:
    """Return the content address of a chat request: everything that decides its reply, i.e.
    who answers (``identity``, graphrag/llm/identity.py), the body as sent (streaming fields
    left out: they change how the reply travels, not what it is) and the stop rule that may
    end a streamed reply early (``stop``, its spec; None for none)."""
    keyed = {"format": CACHE_FORMAT, "model": identity, "request": body, "stop": stop}
    return hashlib.sha256(canonical_json(keyed).encode("utf-8")).hexdigest()


class CacheFormatError(LLMError):
    """The cache folder holds records keyed by an older scheme; the message says what to do."""


def folder_format(root: Path) -> int | None:
    """Return the key scheme of the cache folder ``root``: its ``cache_format.json``, else 1
    when it holds records, else None (an empty or new folder)."""
    marker = Path(root) / FORMAT_FILE
    if marker.is_file():
        return int(json.loads(marker.read_text(encoding="utf-8"))["format"])
    has_records = next(Path(root).glob("??/*.json"), None) is not None
    return 1 if has_records else None


class ResponseCache:
    """Chat responses on disk under ``root/ab/abcdef….json``. Modes: ``on`` reads and writes,
    ``off`` neither, ``replay`` reads only (a miss is raised and also kept in ``misses``)."""

    def __init__(self, root: Path, mode: str = "on", window: int | None = None) -> None:
        if mode not in ("on", "off", "replay"):
            raise ValueError(f"cache mode {mode!r}: expected on, off or replay")
        self.root = Path(root)
        self.mode = mode
        found = folder_format(self.root) if mode != "off" else None
        if found not in (None, CACHE_FORMAT):
            raise CacheFormatError(
                f"the LLM cache {self.root} holds records keyed by format {found}, which this "
                f"workbench no longer reads (format {CACHE_FORMAT} adds the model's identity and "
                "the stop rule to the key): point the setting cache.path at a new folder and "
                "record again, or re-key this one with the workbench of commit a08b5045 "
                "(python -m graphrag cache migrate), the last that could"
            )
        # tokens per request on the live endpoint, None if unknown (see window_bound)
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
        """Store ``record`` whole or not at all, even with other processes writing the cache."""
        if self.mode != "on":
            return
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        marker = self.root / FORMAT_FILE  # the folder's key scheme, marked with its first record
        if not marker.is_file():
            marker.write_text(json.dumps({"format": CACHE_FORMAT}) + "\n", encoding="utf-8")
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
        """Return the lock that lets one process at a time ask the model for ``key`` (in
        ``.locks/``; not thread-local: a task takes it in a worker thread, releases it later)."""
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
        _TASK_MISSES.add(message)
        return CacheMissError(message)

    def async_lock(self, key: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()  # asyncio locks belong to one event loop
        with self._guard:
            return self._async_locks.setdefault(loop, {}).setdefault(key, asyncio.Lock())


def window_bound(record: dict[str, Any]) -> int | None:
    """Return the window (tokens per request) that decided ``record``'s fate, or None: a
    refusal's ``n_ctx``, or prompt + reply of a reply cut before its ``max_tokens``."""
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
