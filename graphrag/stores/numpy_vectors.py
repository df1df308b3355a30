"""The default vector store: one row matrix in memory, searched by brute force."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from graphrag.stores.protocols import backend
from graphrag.text.embeddings import EmbeddingError


def check_dimensions(dimensions: int, query: np.ndarray) -> None:
    """Raise if ``query`` is not of the stored vectors' ``dimensions`` (another embedder's)."""
    if dimensions and dimensions != len(query):
        raise EmbeddingError(
            f"the index's vectors have {dimensions} dimensions and the question's "
            f"{len(query)}: the index was embedded by another model (its index.json names "
            "it, embedding_model); index again, or set [embeddings] back to that model"
        )


@backend("vector", "numpy")
class NumpyVectorStore:
    """Vectors by id; the score is the dot product (the embedder's vectors are unit length)."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self._ids = list(ids)
        self._matrix = np.asarray(matrix, dtype=np.float32)
        self._row = {i: r for r, i in enumerate(self._ids)}

    def ids(self) -> list[str]:
        return list(self._ids)

    def _dot(self, query: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
        matrix = self._matrix[rows]
        check_dimensions(matrix.shape[1] if len(matrix) else 0, query)
        return matrix @ query

    def top_k(
        self, query: np.ndarray, k: int, among: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        ids = self._ids if among is None else list(among)
        if not ids:
            return []
        rows = slice(None) if among is None else np.array([self._row[i] for i in ids])
        scores = self._dot(query, rows)
        return [(ids[r], float(scores[r])) for r in np.argsort(-scores, kind="stable")[:k]]

    def scores(self, query: np.ndarray) -> pd.Series:
        scores = self._dot(query, slice(None)) if self._ids else np.zeros(0, dtype=np.float32)
        return pd.Series(scores, index=pd.Index(self._ids, dtype=object))
