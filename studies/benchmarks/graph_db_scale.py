"""The graph database at scale: a synthetic index loaded into LadybugDB beside the in-memory
igraph default, with load time, memory, disk and query latency.

Run: nice -n 19 .venv/bin/python -m studies.benchmarks.graph_db_scale [--edges 10000,1000000]
     [--queries 20]

The graph is ``graph_scale.synthetic_graph`` (fixed seed: planted communities, heavy-tailed
degrees, 16-hex ids), made into an index: each entity mentioned in two text units, ten text
units a document, no communities. Each engine runs in a fresh interpreter, so its peak RSS is
its own (base: interpreter, imports and the tables, before the engine starts):

- ``igraph``: the default graph store, built in memory from the tables' edge list.
- ``ladybug``: ``open_graph_db(path).load(index)``, the same call ``graphrag graph export``
  makes: every table bulk-loaded with ``COPY ... FROM`` an Arrow table (no query per row);
  then the same index loaded again (nothing changes: the idempotency check's cost); the
  database file's size on disk.
- ``ladybug store``: the ``query.graph_store = "ladybug"`` graph store (the methods' graph in
  an in-memory database) built from the same edge list.

Queries, on entities drawn with a fixed seed: the neighbourhood (the entities sharing an edge),
the 2-hop neighbourhood (distinct entities within two edges), and PPR-equivalent seeds: the
database has no PageRank, so its edges are read into igraph once (``PPR graph s``) and each
query runs PRPACK there, as the in-memory default does; ``same top-10`` compares each query's
ten best entities with the igraph default's. Loads are timed in wall and CPU seconds, queries
in CPU time (median of the queries): on a shared machine the wall clock mostly measures the
wait for a core. Prints one row per (size, engine) as measured; nothing is asserted.

The children run with OMP_NUM_THREADS=1 unless it is set: on a shared machine igraph's
OpenMP threads spin for a core they do not get, and PRPACK took 0.61 s a query at 10k edges
against 0.007 s with one thread (load 15 on 2 cores), which measured the contention, not the
engines.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from studies.benchmarks.graph_scale import synthetic_graph

ENGINES = ("igraph", "ladybug", "ladybug store")
DAMPING = 0.5
UNITS_PER_DOCUMENT = 10


def synthetic_index(edges: int) -> SimpleNamespace:
    """Return an index-shaped object (the tables ``GraphDatabase.load`` reads) around the
    synthetic graph of ``edges`` edges."""
    entities, relationships = synthetic_graph(edges)
    ends = pd.concat([relationships["source_id"], relationships["target_id"]])
    degree = ends.value_counts()
    entities = entities.assign(
        degree=degree.reindex(entities["id"]).fillna(0).astype(int).to_numpy(),
        frequency=[len(u) for u in entities["text_unit_ids"]],
        human_readable_id=range(len(entities)),
    )
    relationships = relationships.assign(
        text_unit_ids=[
            [u]
            for u in entities["text_unit_ids"]
            .str[0]
            .sample(len(relationships), replace=True, random_state=7)
        ]
    )
    unit_ids = sorted(
        {u for units in entities["text_unit_ids"] for u in units}, key=lambda u: int(u[1:])
    )
    units = pd.DataFrame(
        {
            "id": unit_ids,
            "text": [
                f"The text of synthetic unit {u}, which mentions two entities." for u in unit_ids
            ],
            "n_tokens": 12,
            "human_readable_id": range(len(unit_ids)),
            "document_ids": [[f"d{int(u[1:]) // UNITS_PER_DOCUMENT}"] for u in unit_ids],
        }
    )
    documents = pd.DataFrame({"id": sorted({d[0] for d in units["document_ids"]})})
    documents = documents.assign(
        title="A synthetic document", human_readable_id=range(len(documents))
    )
    communities = pd.DataFrame(columns=["id", "community", "level", "parent", "entity_ids", "size"])
    reports = pd.DataFrame(columns=["community", "title", "summary", "rank"])
    return SimpleNamespace(
        entities=entities,
        relationships=relationships,
        text_units=units,
        documents=documents,
        communities=communities,
        community_reports=reports,
    )


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _timed(function: Any, *args: Any) -> tuple[Any, tuple[float, float]]:
    """Return ``function(*args)`` and its (wall, CPU) seconds (CPU: every thread of ours)."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = function(*args)
    return value, (time.perf_counter() - wall, time.process_time() - cpu)


def _ms(timings: list[tuple[float, float]]) -> float:
    """Return the median CPU milliseconds of ``timings``."""
    return 1000 * statistics.median(cpu for _, cpu in timings)


def child(edges: int, engine: str, queries: int) -> dict:
    """Return the figures of ``engine`` on the index of ``edges`` edges."""
    from graphrag.stores import open_graph_db
    from graphrag.stores.igraph_graph import IGraphStore
    from graphrag.stores.ladybug_graph import LadybugGraphStore

    index = synthetic_index(edges)
    ids = list(index.entities["id"])
    rel = index.relationships
    edge_list = list(zip(rel["source_id"], rel["target_id"], rel["weight"], strict=True))
    rng = np.random.default_rng(11)
    picked = [ids[i] for i in rng.choice(len(ids), queries)]
    seeds = [
        dict(zip((ids[i] for i in rng.choice(len(ids), 5)), rng.uniform(0.2, 1, 5), strict=True))
        for _ in range(queries)
    ]
    figures: dict[str, Any] = {"nodes": len(ids), "base_mib": _rss_mib()}
    folder = tempfile.mkdtemp(prefix="graph_db_scale_")
    if engine == "ladybug":
        db = open_graph_db(Path(folder) / "graph.lbug")
        changed, figures["load_s"] = _timed(db.load, index)
        figures["rows"] = sum(c["added"] for c in changed.values())
        again, figures["reload_s"] = _timed(db.load, index)
        figures["reload_changes"] = sum(n for c in again.values() for n in c.values())
        figures["disk_mib"] = sum(f.stat().st_size for f in Path(folder).iterdir()) / 2**20
        one = "MATCH (e:Entity {id: $id})-[:RELATED]-(n:Entity) RETURN n.id AS id"
        two = (
            "MATCH (e:Entity {id: $id})-[:RELATED*1..2]-(n:Entity) "
            "WHERE n.id <> $id RETURN DISTINCT n.id AS id"
        )
        hop1 = lambda node: db.run(one, {"id": node})  # noqa: E731
        hop2 = lambda node: db.run(two, {"id": node})  # noqa: E731

        def walker() -> IGraphStore:
            read = db.conn.execute(
                "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id, b.id, r.weight"
            ).get_as_arrow()
            nodes = db.conn.execute("MATCH (e:Entity) RETURN e.id").get_as_arrow()
            columns = [read.column(i).to_pylist() for i in range(3)]
            return IGraphStore(nodes.column(0).to_pylist(), list(zip(*columns, strict=True)))

    else:
        factory = IGraphStore if engine == "igraph" else LadybugGraphStore
        store, figures["load_s"] = _timed(factory, ids, edge_list)
        hop1 = store.neighbours
        if engine == "igraph":
            vertex = {n: v for v, n in enumerate(store.nodes())}
            names = store.nodes()

            def hop2(node: str) -> list[str]:
                found = store.graph.neighborhood(vertex[node], order=2, mindist=1)
                return [names[v] for v in found]

            walker = lambda: store  # noqa: E731
        else:

            def hop2(node: str) -> set[str]:
                near = store.neighbours(node)
                return ({m for n in near for m in store.neighbours(n)} | set(near)) - {node}

            def walker() -> Any:
                store.personalized_pagerank({}, DAMPING)  # builds its igraph walker once
                return store

    figures["hop1_ms"] = _ms([_timed(hop1, n)[1] for n in picked])
    figures["hop2_ms"] = _ms([_timed(hop2, n)[1] for n in picked])
    figures["hop2_size"] = statistics.median(len(hop2(n)) for n in picked)
    walk, figures["ppr_graph_s"] = _timed(walker)
    scores, spent = [], []
    for seed in seeds:
        score, timing = _timed(walk.personalized_pagerank, seed, DAMPING)
        scores.append(score)
        spent.append(timing)
    figures["ppr_query_ms"] = _ms(spent)
    figures["top10"] = [sorted(s, key=lambda n, s=s: (-s[n], n))[:10] for s in scores]
    figures["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return figures


def run(edges: int, engine: str, queries: int) -> dict:
    command = [sys.executable, "-m", "studies.benchmarks.graph_db_scale", "--child", engine]
    command += ["--edges", str(edges), "--queries", str(queries)]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def _pair(timing: list[float]) -> str:
    return f"{timing[0]:.1f} ({timing[1]:.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", default="10000,1000000")
    parser.add_argument("--queries", type=int, default=20, help="queries timed per size")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.edges), args.child, args.queries)))
        return
    load = os.getloadavg()
    cores = os.cpu_count()
    threads = os.environ.get("OMP_NUM_THREADS", "1")
    print(
        f"load average at start: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min); {cores} cores; "
        f"OMP_NUM_THREADS={threads}"
    )
    print(
        "| edges | nodes | engine | load s wall (CPU) | reload s wall (CPU), changes | disk MiB "
        "| base MiB | peak MiB | 1-hop CPU ms | 2-hop CPU ms (size) | PPR graph s wall (CPU) "
        "| PPR per query CPU ms | same top-10 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for edges in (int(e) for e in args.edges.split(",")):
        default = None
        for engine in ENGINES:
            r = run(edges, engine, args.queries)
            default = default or r
            same = sum(a == b for a, b in zip(default["top10"], r["top10"], strict=True))
            reload = f"{_pair(r['reload_s'])}, {r['reload_changes']}" if "reload_s" in r else "-"
            disk = f"{r['disk_mib']:.0f}" if "disk_mib" in r else "-"
            print(
                f"| {edges:,} | {r['nodes']:,} | {engine} | {_pair(r['load_s'])} | {reload} "
                f"| {disk} "
                f"| {r['base_mib']:.0f} | {r['peak_mib']:.0f} | {r['hop1_ms']:.2f} "
                f"| {r['hop2_ms']:.2f} ({r['hop2_size']:.0f}) | {_pair(r['ppr_graph_s'])} "
                f"| {r['ppr_query_ms']:.1f} | {same}/{len(r['top10'])} |",
                flush=True,
            )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min)")


if __name__ == "__main__":
    main()
