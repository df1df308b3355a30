"""The index as the query side reads it: its tables, loaded through an index store (default:
the parquet folder, graphrag/stores/parquet_folder.py), and its GraphML export."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.merge import build_graph
from graphrag.index.graph.resolve import Resolution
from graphrag.stores.parquet_folder import MANIFEST, IndexLoadError, ParquetIndexStore
from graphrag.stores.protocols import IndexStore, backend_of

__all__ = ["GRAPHML", "MANIFEST", "Index", "IndexLoadError", "load_index", "write_index"]

GRAPHML = "graph.graphml"


@dataclass
class Index:
    """The tables of one index, as loaded from its store."""

    path: Path
    documents: pd.DataFrame
    text_units: pd.DataFrame
    entities: pd.DataFrame
    relationships: pd.DataFrame
    communities: pd.DataFrame
    community_reports: pd.DataFrame
    errors: pd.DataFrame
    dropped: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)
    store: IndexStore | None = field(default=None, repr=False, compare=False)
    """Where its tables and artifacts are kept (None: built in memory, artifacts not kept)."""
    _resolution: Resolution | None = field(default=None, init=False, repr=False, compare=False)

    def graph(self) -> nx.Graph:
        return build_graph(self.entities, self.relationships)

    def resolution(self) -> Resolution:
        """Return the canonical-entity map (docs/entity-resolution.md): deterministic and
        LLM-free, so it is computed on load, once, and follows a replaced entities table."""
        cached = self._resolution
        if cached is None or cached.entities is not self.entities:
            cached = self._resolution = Resolution.of(self.entities, self.relationships)
        return cached


def _graphml_graph(tables: dict[str, pd.DataFrame]) -> nx.Graph:
    """Return the graph with only scalar attributes (GraphML has no lists), community included."""
    graph = build_graph(tables[S.ENTITIES], tables[S.RELATIONSHIPS])
    communities = tables[S.COMMUNITIES]
    for level in sorted(communities[S.LEVEL].unique()):
        for row in communities[communities[S.LEVEL] == level].itertuples(index=False):
            for node in getattr(row, S.ENTITY_IDS):
                if node in graph:
                    graph.nodes[node][f"community_level_{level}"] = int(getattr(row, S.COMMUNITY))
    degree = dict(zip(tables[S.ENTITIES][S.ID], tables[S.ENTITIES][S.DEGREE], strict=True))
    for node, data in graph.nodes(data=True):
        data[S.DEGREE] = int(degree.get(node, 0))
    return graph


def write_index(
    tables: dict[str, pd.DataFrame], out: str | Path, manifest: dict[str, Any], backend: str = ""
) -> Path:
    """Write the index (its tables, the manifest and the GraphML export) to the index store
    ``backend`` (default: the parquet folder) at ``out``; return ``out``."""
    store = backend_of("index", backend or None)(Path(out))
    if isinstance(store, ParquetIndexStore):
        store.files[GRAPHML] = lambda path: nx.write_graphml(_graphml_graph(tables), path)
    store.write_tables(tables, manifest)
    return Path(out)


def load_index(path: str | Path, backend: str = "") -> Index:
    """Return the index stored at ``path`` in the index store ``backend`` (default: the
    parquet folder); a clear error names what is missing or corrupt."""
    store = backend_of("index", backend or None)(Path(path))
    tables, manifest = store.read_tables()
    return Index(path=Path(path), manifest=manifest, store=store, **tables)
