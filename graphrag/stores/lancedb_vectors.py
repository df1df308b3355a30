"""A vector store in LanceDB: each set of vectors one table, named by kind and a hash of its ids
and vectors (so a later load writes nothing), in the index folder or at a URI. Search is exact,
as numpy's; a row's stored position breaks ties (docs/storage.md)."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pandas as pd
import pyarrow as pa

from graphrag.stores.numpy_vectors import check_dimensions
from graphrag.stores.protocols import backend


class VectorStoreError(RuntimeError):
    """A vector database that cannot be reached or written; the message names its location."""


def table_name(kind: str, ids: list[str], matrix: np.ndarray) -> str:
    """Return ``kind`` and a hash of the ids and vectors: the name of their table."""
    digest = hashlib.sha256("\n".join(ids).encode())
    digest.update(str(matrix.shape).encode())
    digest.update(np.ascontiguousarray(matrix, dtype=np.float32).data)
    return f"{kind}_{digest.hexdigest()[:16]}"


def ranked(hits: list[tuple[str, float, int]], k: int) -> list[tuple[str, float]]:
    """Return the ``k`` best of (id, score, tie order) hits, best first, ties in that order."""
    hits.sort(key=lambda hit: (-hit[1], hit[2]))
    return [(i, s) for i, s, _ in hits[:k]]


@backend("vector", "lancedb")
class LanceVectorStore:
    """Vectors by id in a LanceDB table; the score is the dot product, as numpy's."""

    persists = True  # IndexStores gives it a location and a table kind

    def __init__(
        self,
        ids: list[str],
        matrix: np.ndarray,
        location: str | Path | None = None,
        table: str = "vectors",
    ) -> None:
        self._ids = list(ids)
        matrix = np.asarray(matrix, dtype=np.float32)
        self.dimensions = matrix.shape[1] if matrix.ndim == 2 else 0
        if location is None:  # nowhere to keep it: a folder that lives as long as the store
            self._folder = tempfile.TemporaryDirectory(prefix="graphrag-lancedb-")
            location = self._folder.name
        self.location, self.name = str(location), table_name(table, self._ids, matrix)
        self.table = self._open(matrix) if self._ids else None

    @classmethod
    def stored(cls, ids: list[str], location: str | Path, name: str) -> LanceVectorStore:
        """Return the store over the table ``name`` already at ``location`` (nothing read
        into memory but ``ids``)."""
        store = cls.__new__(cls)
        store._ids, store.location, store.name = list(ids), str(location), name
        store.table = store._open(None)
        store.dimensions = store.table.schema.field("vector").type.list_size
        return store

    def _open(self, matrix: np.ndarray | None) -> Any:
        try:
            db = lancedb.connect(self.location)
            try:
                return db.open_table(self.name)
            except ValueError:  # not there yet: written once, found by every later load
                if matrix is None:
                    raise
                rows = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), self.dimensions)
                data = {"id": self._ids, "row": pa.array(range(len(self._ids)), pa.int32())}
                table = pa.table({**data, "vector": rows})
                return db.create_table(self.name, table, exist_ok=True)  # a racing load made it
        except (OSError, RuntimeError, ValueError) as err:
            raise VectorStoreError(
                f"the LanceDB vector store at {self.location!r} cannot be opened or written "
                f'({err}); set query.vector_store to "lancedb" (a folder in the index) or '
                '"lancedb:<folder or URI>" that this process can write'
            ) from err

    def _search(self, query: np.ndarray, limit: int, where: str | None = None) -> pa.Table:
        check_dimensions(self.dimensions, query)
        search = self.table.search(np.asarray(query, dtype=np.float32)).distance_type("dot")
        if where is not None:
            search = search.where(where, prefilter=True)
        return search.select(["id", "row", "_distance"]).limit(limit).to_arrow()

    def ids(self) -> list[str]:
        return list(self._ids)

    def top_k(
        self, query: np.ndarray, k: int, among: Sequence[str] | None = None
    ) -> list[tuple[str, float]]:
        if self.table is None or k <= 0 or (among is not None and not len(among)):
            return []
        where, order = None, None
        if among is not None:
            order = {i: p for p, i in enumerate(among)}
            where = "id IN (" + ", ".join("'" + i.replace("'", "''") + "'" for i in order) + ")"
        limit = k
        while True:  # fetch past k until the k-th score's ties are all in
            found = self._search(query, limit, where)
            scores = 1.0 - found["_distance"].to_numpy()  # the "dot" distance is 1 - dot
            if len(found) < limit or scores[-1] < scores[k - 1]:
                break
            limit *= 2
        ids, rows = found["id"].to_pylist(), found["row"].to_pylist()
        ties = rows if order is None else [order[i] for i in ids]
        return ranked(list(zip(ids, scores.tolist(), ties, strict=True)), k)

    def scores(self, query: np.ndarray) -> pd.Series:
        index = pd.Index(self._ids, dtype=object)
        if self.table is None:
            return pd.Series(np.zeros(0, dtype=np.float32), index=index)
        found = self._search(query, len(self._ids))
        scores = np.zeros(len(self._ids), dtype=np.float32)
        scores[found["row"].to_numpy()] = 1.0 - found["_distance"].to_numpy()
        return pd.Series(scores, index=index)
