"""Who answers a chat request, as the recorded cache keys it (graphrag/llm/cache.py).

A model's name is not its identity: the embedded server serves any GGUF under the default
alias, and an endpoint serves whatever it was started with. So a recorded reply is keyed by

- the embedded model: the sha256 of its weights file (the default weights' pin, else the
  file's hash, computed once per file version and remembered beside it);
- an endpoint: its host and the model the server reports for the configured name
  (``GET /models``: the id and, when the server says, the path it loaded). What a server
  reported is remembered in the cache (``identities.json``), so a replay, which never calls
  the endpoint, keys its requests as the recording did.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from filelock import FileLock

from graphrag.llm.embedded.weights import DEFAULT_WEIGHTS, graphrag_home
from graphrag.text.digests import file_sha256

IDENTITIES_FILE = "identities.json"  # in the cache folder: what each endpoint reported
# Fields of a ``GET /models`` entry that name what the server loaded (vLLM's ``root`` is the
# weights' path; llama.cpp's ``meta`` has their size and parameter count).
REPORTED_FIELDS = ("id", "root", "meta")
MODELS_TIMEOUT = 10.0


def embedded_identity(model_file: str) -> dict[str, str]:
    """Return the identity of the embedded model serving ``model_file`` ("": the default)."""
    book = graphrag_home() / "hashes.json"
    digest = file_sha256(Path(model_file), book) if model_file else DEFAULT_WEIGHTS.sha256
    return {"weights_sha256": digest}


def endpoint_host(base_url: str) -> str:
    """Return the host (and port) of ``base_url``, lower-cased: what keys an endpoint."""
    return urlsplit(base_url).netloc.lower()


def reported_model(base_url: str, model: str, api_key: str) -> dict[str, Any] | None:
    """Return what the endpoint's ``GET /models`` says of ``model`` (the entry with that id,
    or the only one served), None when it does not answer or does not list it."""
    url = base_url.rstrip("/") + "/models"
    try:
        response = httpx.get(
            url, headers={"Authorization": f"Bearer {api_key}"}, timeout=MODELS_TIMEOUT
        )
        entries = (response.json().get("data") or []) if response.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    named = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    if not named:
        return None
    return {k: named[0][k] for k in REPORTED_FIELDS if named[0].get(k) not in (None, "", {})}


class EndpointIdentity:
    """The identity of ``model`` at ``base_url``: asked of the server once per process (never
    in replay), remembered in the cache folder's ``identities.json`` for replays; a server
    that reports nothing is known by its host and the configured name."""

    def __init__(self, base_url: str, model: str, api_key: str, book: Path, ask: bool) -> None:
        self.base_url, self.model, self.api_key = base_url, model, api_key
        self.book = Path(book)
        self.ask = ask
        self._value: dict[str, Any] | None = None
        self._lock = threading.Lock()

    @property
    def entry(self) -> str:
        return f"{endpoint_host(self.base_url)} {self.model}"

    def __call__(self) -> dict[str, Any]:
        with self._lock:
            if self._value is None:
                self._value = self._resolve()
            return self._value

    def _resolve(self) -> dict[str, Any]:
        base = {"endpoint": endpoint_host(self.base_url), "model": self.model}
        reported = reported_model(self.base_url, self.model, self.api_key) if self.ask else None
        remembered = self._remembered()
        if reported is None:
            return remembered or base
        identity = {**base, "reported": reported}
        if identity != remembered:
            self._remember(identity)
        return identity

    def _remembered(self) -> dict[str, Any] | None:
        if not self.book.is_file():
            return None
        return json.loads(self.book.read_text(encoding="utf-8")).get(self.entry)

    def _remember(self, identity: dict[str, Any]) -> None:
        self.book.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(self.book.with_suffix(".lock")):
            known = json.loads(self.book.read_text()) if self.book.is_file() else {}
            known[self.entry] = identity
            self.book.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
