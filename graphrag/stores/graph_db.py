"""A Cypher graph database holding an index (docs/graph-databases.md): one interface for the
embedded LadybugDB (a file path) and a Neo4j server (a ``bolt://`` or ``neo4j://`` URL).

Loading (only what changed is written), the schema a Text-to-Cypher prompt shows and the
counts are written once here, over the few primitives each engine implements.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag.stores.graph_schema import (
    EXAMPLE_ORDER,
    KEY,
    NODES,
    RELATIONSHIPS,
    STRING,
    changes,
    columns_of,
    graph_rows,
    key_of,
)

CATEGORICAL = 12  # a string property with at most this many values lists them all
EXAMPLES = 3
EXAMPLE_CHARS = 80
URL = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
Params = dict[str, Any] | None
Rows = list[dict[str, Any]]


class GraphDatabaseError(RuntimeError):
    """A graph database that cannot be opened or reached; the message names the path or URL."""


class GraphQueryError(ValueError):
    """A query the engine refused or stopped at its timeout; the message keeps the engine's."""


class GraphQueryTimeout(GraphQueryError):
    """A query stopped because it ran past its timeout."""


def default_graph_db_path(index: str | Path) -> Path:
    """Return where ``graph export`` keeps an index folder's LadybugDB database by default:
    beside it (``output/x`` -> ``output/x.lbug``), since writing an index replaces its folder."""
    index = Path(index)
    return index.parent / f"{index.name}.lbug"


class GraphDatabase:
    """The engine-neutral part. An engine implements ``run(query, params, timeout_s,
    read_only)`` (rows as dicts; a read-only run refuses writes, one past ``timeout_s`` raises
    GraphQueryTimeout), ``explain(query)`` (plan, never run), ``close()``, and the loading
    primitives ``_ensure_schema()``, ``_insert``, ``_update``, ``_delete(name, rows)``."""

    engine = ""
    target = ""

    def _read(self, name: str) -> pd.DataFrame:
        """Return every row of label or relationship type ``name`` (its ``columns_of``)."""
        columns = columns_of(name)
        rows = self.run(f"{match(name)} RETURN {', '.join(returned(name))}", read_only=True)
        return pd.DataFrame(rows, columns=list(columns), dtype=object)

    def __enter__(self) -> GraphDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load(self, index: Any) -> dict[str, dict[str, int]]:
        """Make the database hold ``index`` (new rows added, changed updated, gone removed, the
        rest untouched); return the rows added, updated and removed per label and type."""
        self._ensure_schema()
        plan = {n: changes(self._read(n), rows, key_of(n)) for n, rows in graph_rows(index).items()}
        for name in RELATIONSHIPS:  # an edge whose values changed is written anew
            gone = pd.concat([plan[name].removed, plan[name].replaced], ignore_index=True)
            if len(gone):
                self._delete(name, gone)
        for name in NODES:
            if len(plan[name].removed):
                self._delete(name, plan[name].removed)
            if len(plan[name].updated):
                self._update(name, plan[name].updated)
            if len(plan[name].added):
                self._insert(name, plan[name].added)
        for name in RELATIONSHIPS:
            new = pd.concat([plan[name].added, plan[name].updated], ignore_index=True)
            if len(new):
                self._insert(name, new)
        return {name: change.counts() for name, change in plan.items()}

    def counts(self) -> dict[str, int]:
        """Return the nodes and edges of every kind, and all of them whatever their label."""
        found = {"nodes": self._count("MATCH (n) RETURN count(n) AS n")}
        found["edges"] = self._count("MATCH ()-[r]->() RETURN count(r) AS n")
        return found | {
            n: self._count(f"{match(n)} RETURN count(*) AS n") for n in [*NODES, *RELATIONSHIPS]
        }

    def _count(self, query: str) -> int:
        return int(self.run(query)[0]["n"])

    def schema(self) -> dict[str, Any]:
        """Return each label and relationship type with its count and properties (type, and
        example values, or all ``values`` of a string with few): ``graph_schema.describe``."""

        def about(name: str) -> dict[str, Any]:
            count = self._count(f"{match(name)} RETURN count(*) AS n")
            return {"count": count, "properties": self._properties(name)}

        nodes = {label: about(label) for label in NODES}
        relationships = {
            kind: {"from": source, "to": target, **about(kind)}
            for kind, (source, target, _) in RELATIONSHIPS.items()
        }
        return {"engine": self.engine, "nodes": nodes, "relationships": relationships}

    def _properties(self, name: str) -> dict[str, dict[str, Any]]:
        declared = NODES.get(name) or RELATIONSHIPS[name][2]
        found: dict[str, dict[str, Any]] = {}
        for prop, kind in declared.items():
            about: dict[str, Any] = {"type": kind}
            value = f"n.{prop}"
            if kind == STRING and prop != KEY:
                query = f"{match(name)} WHERE {value} IS NOT NULL RETURN {value} AS v, "
                rows = self.run(query + f"count(*) AS c ORDER BY c DESC, v LIMIT {CATEGORICAL + 1}")
                if len(rows) <= CATEGORICAL and all(len(r["v"]) <= EXAMPLE_CHARS for r in rows):
                    about["values"] = [r["v"] for r in rows]
                    found[prop] = about
                    continue
            order = EXAMPLE_ORDER.get(name, "n.id")
            query = f"{match(name)} WHERE {value} IS NOT NULL RETURN {value} AS v ORDER BY {order}"
            rows = self.run(f"{query} LIMIT {EXAMPLES * 10}")
            about["examples"] = list(dict.fromkeys(_short(r["v"]) for r in rows))[:EXAMPLES]
            found[prop] = about
        return found


def _short(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value[:EXAMPLES])
    if isinstance(value, str) and len(value) > EXAMPLE_CHARS:
        return value[: EXAMPLE_CHARS - 3] + "..."
    return value


def match(name: str) -> str:
    """Return the MATCH binding every node of label ``name``, or edge of that type, as ``n``."""
    if name in NODES:
        return f"MATCH (n:{name})"
    source, target, _ = RELATIONSHIPS[name]
    return f"MATCH (a:{source})-[n:{name}]->(b:{target})"


def returned(name: str) -> list[str]:
    """Return the RETURN items giving a row of ``name`` in ``columns_of(name)``'s order."""
    ends = [] if name in NODES else ["a.id AS source", "b.id AS target"]
    props = NODES.get(name) or RELATIONSHIPS[name][2]
    return ends + [f"n.{p} AS {p}" for p in props]


ENGINES: dict[str, Callable[..., GraphDatabase]] = {}  # URL scheme ("" for a path) -> engine


def graph_engine(*schemes: str) -> Callable[[type], type]:
    """Register a GraphDatabase class for targets of these URL schemes (``""``: a file path)."""

    def add(cls: type) -> type:
        for scheme in schemes:
            ENGINES[scheme] = cls
        return cls

    return add


def open_graph_db(target: str | Path, read_only: bool = False) -> GraphDatabase:
    """Return the graph database at ``target``: a path opens (or creates) a LadybugDB one, a
    ``bolt://``/``neo4j://`` URL a Neo4j server (login from $NEO4J_USERNAME, $NEO4J_PASSWORD)."""
    text = str(target)
    scheme = found.group(1).lower() if (found := URL.match(text)) else ""
    if scheme not in ENGINES:
        known = ", ".join(f"{s}://" for s in sorted(ENGINES) if s)
        raise GraphDatabaseError(
            f"graph database {text!r}: no engine for {scheme}:// URLs (give a file path for "
            f"LadybugDB, or one of {known} for Neo4j)"
        )
    return ENGINES[scheme](text, read_only=read_only)
