"""The index on disk: one parquet file per table, a GraphML export, and ``index.json``.

The folder is readable with pandas alone; ``index.json`` records the settings, models and
run summary the index was built with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import pandas as pd
import pyarrow

from graphrag.index import schemas as S

MANIFEST = "index.json"
GRAPHML = "graph.graphml"
REQUIRED = tuple(t for t in S.TABLES if t != "errors")  # an index may have no errors table


class IndexLoadError(RuntimeError):
    """The index folder is missing, incomplete or corrupt; the message names the file."""


@dataclass
class Index:
    """The tables of one index, as loaded from its folder."""

    path: Path
    documents: pd.DataFrame
    text_units: pd.DataFrame
    entities: pd.DataFrame
    relationships: pd.DataFrame
    communities: pd.DataFrame
    community_reports: pd.DataFrame
    errors: pd.DataFrame
    manifest: dict[str, Any] = field(default_factory=dict)

    def graph(self) -> nx.Graph:
        from graphrag.index.graph import build_graph

        return build_graph(self.entities, self.relationships)


def _graphml_graph(tables: dict[str, pd.DataFrame]) -> nx.Graph:
    """Return the graph with only scalar attributes (GraphML has no lists), community included."""
    from graphrag.index.graph import build_graph

    graph = build_graph(tables["entities"], tables["relationships"])
    communities = tables["communities"]
    for level in sorted(communities[S.LEVEL].unique()):
        for row in communities[communities[S.LEVEL] == level].itertuples(index=False):
            for node in getattr(row, S.ENTITY_IDS):
                if node in graph:
                    graph.nodes[node][f"community_level_{level}"] = int(getattr(row, S.COMMUNITY))
    degree = dict(zip(tables["entities"][S.ID], tables["entities"][S.DEGREE], strict=True))
    for node, data in graph.nodes(data=True):
        data["degree"] = int(degree.get(node, 0))
    return graph


def write_index(tables: dict[str, pd.DataFrame], out: str | Path, manifest: dict[str, Any]) -> Path:
    """Write every table as parquet, the GraphML export and the manifest; return the folder."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in S.TABLES:
        frame = tables.get(name)
        if frame is None:
            frame = pd.DataFrame(columns=S.ERROR_COLUMNS if name == "errors" else [])
        frame.to_parquet(out / f"{name}.parquet", index=False)
    nx.write_graphml(_graphml_graph(tables), out / GRAPHML)
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n")
    return out


def load_index(path: str | Path) -> Index:
    """Return the index stored in ``path``; a clear error names what is missing or corrupt."""
    path = Path(path)
    if not path.is_dir():
        raise IndexLoadError(
            f"index folder {path} does not exist; build one with "
            f"`python -m graphrag index --input <corpus> --out {path}`"
        )
    tables: dict[str, pd.DataFrame] = {}
    for name in S.TABLES:
        file = path / f"{name}.parquet"
        if not file.is_file():
            if name in REQUIRED:
                raise IndexLoadError(
                    f"index {path} is incomplete: {file.name} is missing "
                    "(was indexing interrupted? re-run it, the cache resumes)"
                )
            tables[name] = pd.DataFrame(columns=S.ERROR_COLUMNS)
            continue
        try:
            tables[name] = pd.read_parquet(file)
        except (pyarrow.ArrowException, OSError, ValueError) as err:
            raise IndexLoadError(f"index table {file} is corrupt ({err}); re-run indexing") from err
    manifest_file = path / MANIFEST
    try:
        manifest = json.loads(manifest_file.read_text())
    except FileNotFoundError:
        manifest = {}
    except ValueError as err:
        raise IndexLoadError(f"{manifest_file} is corrupt ({err}); re-run indexing") from err
    for name, needed in (
        ("entities", [S.ID, S.TITLE, S.DESCRIPTION]),
        ("text_units", [S.ID, S.TEXT]),
        ("community_reports", [S.COMMUNITY, S.LEVEL, S.FULL_CONTENT]),
    ):
        missing = [c for c in needed if c not in tables[name].columns]
        if missing:
            raise IndexLoadError(
                f"index table {path / (name + '.parquet')} lacks columns "
                f"{missing}; it was not written by this workbench"
            )
    return Index(path=path, manifest=manifest, **tables)
