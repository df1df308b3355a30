"""A Neo4j server as an index's graph database (docs/graph-databases.md), by the official driver:
login from $NEO4J_USERNAME and $NEO4J_PASSWORD, database from $NEO4J_DATABASE; rows written in
batches (``UNWIND $rows``); a read-only run is a READ transaction."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from graphrag.stores.graph_db import (
    GraphDatabase,
    GraphDatabaseError,
    GraphQueryError,
    GraphQueryTimeout,
    Params,
    Rows,
    graph_engine,
)
from graphrag.stores.graph_schema import ENDS, KEY, NODES, RELATIONSHIPS, columns_of, plain

BATCH = 5000


def _records(rows: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    return [
        {c: list(v) if isinstance(v, tuple) else v for c, v in zip(columns, values, strict=True)}
        for values in zip(*([plain(v) for v in rows[c]] for c in columns), strict=True)
    ]


@graph_engine("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
class Neo4jGraphDB(GraphDatabase):
    """An index's graph on a Neo4j server."""

    engine = "neo4j"

    def __init__(self, target: str, read_only: bool = False) -> None:
        import neo4j  # noqa: PLC0415 - about 0.5 s to import; only a bolt:// target needs it

        self.neo4j, self.target, self.read_only = neo4j, target, read_only
        user = os.environ.get("NEO4J_USERNAME") or os.environ.get("NEO4J_USER") or "neo4j"
        password = os.environ.get("NEO4J_PASSWORD", "")
        self.database = os.environ.get("NEO4J_DATABASE") or None
        try:
            self.driver = neo4j.GraphDatabase.driver(target, auth=(user, password))
            self.driver.verify_connectivity()
        except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError, ValueError) as err:
            raise GraphDatabaseError(
                f"cannot reach the Neo4j server at {target} as user {user!r} ($NEO4J_USERNAME, "
                f"$NEO4J_PASSWORD): {err}"
            ) from err

    def close(self) -> None:
        self.driver.close()

    def run(self, query: str, params: Params = None, timeout_s=None, read_only=True) -> Rows:
        neo4j = self.neo4j
        mode = neo4j.READ_ACCESS if read_only or self.read_only else neo4j.WRITE_ACCESS
        try:
            with self.driver.session(database=self.database, default_access_mode=mode) as session:
                result = session.run(neo4j.Query(query, timeout=timeout_s), params or {})
                return [record.data() for record in result]
        except neo4j.exceptions.Neo4jError as err:
            if "TimedOut" in (err.code or ""):
                raise GraphQueryTimeout(f"Neo4j stopped the query at its timeout: {err}") from err
            raise GraphQueryError(f"Neo4j refused the query: {err}") from err

    def explain(self, query: str, params: Params = None) -> None:
        self.run(f"EXPLAIN {query}", params, read_only=False)  # planned, never run

    def _write(self, query: str, rows: list[dict[str, Any]]) -> None:
        for start in range(0, len(rows), BATCH):
            self.run(query, {"rows": rows[start : start + BATCH]}, read_only=False)

    def _ensure_schema(self) -> None:
        for label in NODES:
            self.run(
                f"CREATE CONSTRAINT {label.lower()}_{KEY} IF NOT EXISTS FOR (n:{label}) "
                f"REQUIRE n.{KEY} IS UNIQUE",
                read_only=False,
            )

    def _insert(self, name: str, rows: pd.DataFrame) -> None:
        if name in NODES:
            self._write(
                f"UNWIND $rows AS row CREATE (n:{name}) SET n = row",
                _records(rows, list(NODES[name])),
            )
            return
        source, target, props = RELATIONSHIPS[name]
        records = [
            {"source": r["source"], "target": r["target"], "props": {p: r[p] for p in props}}
            for r in _records(rows, list(columns_of(name)))
        ]
        self._write(
            f"UNWIND $rows AS row MATCH (a:{source} {{{KEY}: row.source}}) "
            f"MATCH (b:{target} {{{KEY}: row.target}}) "
            f"CREATE (a)-[n:{name}]->(b) SET n = row.props",
            records,
        )

    def _update(self, name: str, rows: pd.DataFrame) -> None:
        self._write(
            f"UNWIND $rows AS row MATCH (n:{name} {{{KEY}: row.{KEY}}}) SET n = row",
            _records(rows, list(NODES[name])),
        )

    def _delete(self, name: str, rows: pd.DataFrame) -> None:
        if name in NODES:
            query = f"UNWIND $rows AS row MATCH (n:{name} {{{KEY}: row.{KEY}}}) DETACH DELETE n"
            self._write(query, _records(rows, [KEY]))
            return
        source, target, props = RELATIONSHIPS[name]
        keyed = KEY in props
        where = f" WHERE n.{KEY} = row.{KEY}" if keyed else ""
        self._write(
            f"UNWIND $rows AS row MATCH (a:{source} {{{KEY}: row.source}})-[n:{name}]->"
            f"(b:{target} {{{KEY}: row.target}}){where} DELETE n",
            _records(rows, [*ENDS, *([KEY] if keyed else [])]),
        )
