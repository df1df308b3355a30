"""LadybugDB (the maintained fork of Kùzu), the embedded Cypher database: an index's graph in one
file, and the ``ladybug`` graph store (methods' graphs in memory). Rows are written in bulk
from Arrow tables; a read-only run is a ``READ ONLY`` transaction."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ladybug as lb
import networkx as nx
import pandas as pd
import pyarrow as pa

from graphrag.stores.graph_db import (
    GraphDatabase,
    GraphDatabaseError,
    GraphQueryError,
    GraphQueryTimeout,
    Params,
    Rows,
    graph_engine,
    match,
    returned,
)
from graphrag.stores.graph_schema import (
    ENDS,
    FLOAT,
    INT,
    KEY,
    NODES,
    RELATIONSHIPS,
    STRING,
    STRINGS,
    columns_of,
    plain,
)
from graphrag.stores.igraph_graph import IGraphStore
from graphrag.stores.protocols import Edge, backend

ARROW = {STRING: pa.string(), INT: pa.int64(), FLOAT: pa.float64(), STRINGS: pa.list_(pa.string())}
FILE_NAME = "graph.lbug"  # the database inside a folder given as the target


def _ddl() -> list[str]:
    """Return the statements creating every node and relationship table of the schema."""
    statements = []
    for label, props in NODES.items():
        listed = ", ".join(f"{p} {t}" for p, t in props.items())
        statements.append(f"CREATE NODE TABLE IF NOT EXISTS {label}({listed}, PRIMARY KEY({KEY}))")
    for kind, (source, target, props) in RELATIONSHIPS.items():
        listed = "".join(f", {p} {t}" for p, t in props.items())
        statements.append(
            f"CREATE REL TABLE IF NOT EXISTS {kind}(FROM {source} TO {target}{listed})"
        )
    return statements


def _arrow(rows: pd.DataFrame, columns: dict[str, str], prefix: str = "") -> pa.Table:
    """Return ``rows`` as an Arrow table of the schema's types (``prefix`` before each name:
    ``LOAD FROM`` makes the columns variables, which must not shadow a keyword)."""
    return pa.table(
        {
            prefix + c: pa.array([plain(v) for v in rows[c]], type=ARROW[t])
            if t != STRINGS
            else pa.array([list(v or []) for v in rows[c]], type=ARROW[t])
            for c, t in columns.items()
        }
    )


def _values(column: pa.ChunkedArray) -> Any:
    """Return a column read back as plain values (None where null), fast when none is."""
    if column.null_count:
        return column.to_pylist()
    return column.to_numpy(zero_copy_only=False).astype(object)


def _database_path(target: str) -> Path:
    """Return the database file of ``target``: the file itself, or ``graph.lbug`` in a
    folder (one that exists, or a new path without a suffix)."""
    path = Path(target).expanduser()
    return path / FILE_NAME if path.is_dir() or (not path.suffix and not path.exists()) else path


@graph_engine("")
class LadybugGraphDB(GraphDatabase):
    """An index's graph in a LadybugDB file (created on first load)."""

    engine = "ladybug"

    def __init__(self, target: str, read_only: bool = False) -> None:
        self.path = _database_path(target)
        self.target = str(self.path)
        if read_only and not self.path.exists():
            raise GraphDatabaseError(
                f"no LadybugDB database at {self.path}; export one with `graphrag graph export "
                f"--index <index folder> --db {self.path}`"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = lb.Database(str(self.path), read_only=read_only)
            self.conn = lb.Connection(self.db)
        except (OSError, RuntimeError) as err:
            raise GraphDatabaseError(
                f"cannot open the LadybugDB database {self.path}: {err}"
            ) from err

    def close(self) -> None:
        self.conn.close()
        self.db.close()

    def _execute(self, query: str, params: Params = None) -> Rows:
        try:
            result = self.conn.execute(query, params or {})
        except RuntimeError as err:
            text = str(err)
            if text.startswith("Interrupted"):
                raise GraphQueryTimeout(
                    f"LadybugDB stopped the query at its timeout: {text}"
                ) from err
            raise GraphQueryError(f"LadybugDB refused the query: {text}") from err
        if isinstance(result, list):  # several statements: all ran; the last one's rows
            result = result[-1]
        return result.rows_as_dict().get_all()

    def run(self, query: str, params: Params = None, timeout_s=None, read_only=True) -> Rows:
        self.conn.set_query_timeout(max(1, round(timeout_s * 1000)) if timeout_s else 0)
        try:
            if not read_only:
                return self._execute(query, params)
            self._execute("BEGIN TRANSACTION READ ONLY")
            try:
                return self._execute(query, params)
            finally:
                self._end_transaction()
        finally:
            self.conn.set_query_timeout(0)

    def _end_transaction(self) -> None:
        try:
            self.conn.execute("ROLLBACK")  # nothing to keep; a failed query already ended it
        except RuntimeError:
            pass

    def explain(self, query: str, params: Params = None) -> None:
        self._execute(f"EXPLAIN {query}", params)

    def _ensure_schema(self) -> None:
        for statement in _ddl():
            self._execute(statement)

    def _read(self, name: str) -> pd.DataFrame:
        query = f"{match(name)} RETURN {', '.join(returned(name))}"
        table = self.conn.execute(query).get_as_arrow()
        return pd.DataFrame({c: _values(table.column(c)) for c in table.column_names}, dtype=object)

    def _insert(self, name: str, rows: pd.DataFrame) -> None:
        self._execute(f"COPY {name} FROM $rows", {"rows": _arrow(rows, columns_of(name))})

    def _update(self, name: str, rows: pd.DataFrame) -> None:
        props = [p for p in NODES[name] if p != KEY]
        sets = ", ".join(f"n.{p} = v_{p}" for p in props)
        table = _arrow(rows, NODES[name], prefix="v_")
        self._execute(
            f"LOAD FROM $rows MATCH (n:{name} {{{KEY}: v_{KEY}}}) SET {sets}", {"rows": table}
        )

    def _delete(self, name: str, rows: pd.DataFrame) -> None:
        if name in NODES:
            table = _arrow(rows, {KEY: STRING}, prefix="v_")
            query = f"LOAD FROM $rows MATCH (n:{name} {{{KEY}: v_{KEY}}}) DETACH DELETE n"
        else:
            source, target, props = RELATIONSHIPS[name]
            keyed = KEY in props
            table = _arrow(rows, {e: STRING for e in (*ENDS, *([KEY] if keyed else []))}, "v_")
            where = f" WHERE n.{KEY} = v_{KEY}" if keyed else ""
            query = (
                f"LOAD FROM $rows MATCH (a:{source} {{{KEY}: v_source}})-[n:{name}]->"
                f"(b:{target} {{{KEY}: v_target}}){where} DELETE n"
            )
        self._execute(query, {"rows": table})


@backend("graph", "ladybug")
class LadybugGraphStore:
    """A method's graph in an in-memory LadybugDB, answered by Cypher; PageRank by igraph over the
    edges read back (the engine has none). Orders are kept, so it answers as the igraph store."""

    def __init__(self, nodes: list[str], edges: list[Edge]) -> None:
        names = list(dict.fromkeys([*nodes, *(n for a, b, _ in edges for n in (a, b))]))
        position = {n: i for i, n in enumerate(names)}
        self.conn = lb.Connection(lb.Database())
        self.conn.execute("CREATE NODE TABLE Node(id STRING, pos INT64, PRIMARY KEY(id))")
        self.conn.execute("CREATE REL TABLE Edge(FROM Node TO Node, weight DOUBLE, pos INT64)")
        node_rows = pa.table({"id": pa.array(names, pa.string()), "pos": range(len(names))})
        self.conn.execute("COPY Node FROM $rows", {"rows": node_rows})
        ends = [sorted((a, b), key=position.__getitem__) for a, b, _ in edges]  # as igraph
        if len(edges):
            sources, targets = (
                pa.array(list(side), pa.string()) for side in zip(*ends, strict=True)
            )
            weights = pa.array([float(w) for _, _, w in edges], pa.float64())
            rows = {"from": sources, "to": targets, "weight": weights, "pos": range(len(edges))}
            self.conn.execute("COPY Edge FROM $rows", {"rows": pa.table(rows)})
        self._walker: IGraphStore | None = None

    def _rows(self, query: str, params: Params = None) -> list[list[Any]]:
        return self.conn.execute(query, params or {}).get_all()

    def nodes(self) -> list[str]:
        return [r[0] for r in self._rows("MATCH (n:Node) RETURN n.id ORDER BY n.pos")]

    def neighbours(self, node: str) -> list[str]:
        query = "MATCH (a:Node {id: $id})-[:Edge]-(b:Node) RETURN b.id ORDER BY b.pos"
        return [r[0] for r in self._rows(query, {"id": node})]

    def _edges(self, where: str = "", params: Params = None) -> list[Edge]:
        match = f"MATCH (a:Node)-[e:Edge]->(b:Node) {where}"
        return [
            (a, b, w)
            for a, b, w in self._rows(f"{match} RETURN a.id, b.id, e.weight ORDER BY e.pos", params)
        ]

    def edges_among(self, nodes: Iterable[str]) -> list[Edge]:
        among = list(dict.fromkeys(nodes))
        return self._edges("WHERE a.id IN $among AND b.id IN $among", {"among": among})

    def personalized_pagerank(self, seeds: dict[str, float], damping: float) -> dict[str, float]:
        if self._walker is None:
            self._walker = IGraphStore(self.nodes(), self._edges())
        return self._walker.personalized_pagerank(seeds, damping)

    def to_networkx(self) -> nx.Graph:
        return IGraphStore(self.nodes(), self._edges()).to_networkx()
