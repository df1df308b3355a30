"""The graph engine before and after: networkx against igraph, on the graph stage and PPR.

Run: .venv/bin/python -m studies.benchmarks.graph_engine [--edges 10000,100000,1000000]
     [--queries 5]

For each size the synthetic extracted-looking graph of ``graph_scale.py`` (fixed seed) goes
through the index's graph stage twice, each engine in a fresh interpreter:

- ``networkx`` (before, the code until #59): build a networkx graph from the tables, read the
  degrees off it, hierarchical Leiden (graspologic) over the networkx graph, the communities
  table; PPR per query is ``nx.pagerank`` with a personalization.
- ``igraph`` (after): list the edges from the tables (``entity_edges``), degrees from an igraph
  graph, the same Leiden over the edge list, the same table; PPR per query is igraph's PRPACK
  (``IGraphStore.personalized_pagerank``) on a graph store built once.

Each PPR query seeds 5 random entities (weights 0.2-1.0) with damping 0.5, as ``ppr`` does.
Prints one row per (size, engine), each as soon as it is measured; nothing is asserted. The
last two columns compare the igraph run with the networkx one: the same communities, and
how many queries' top-10 PageRank nodes are the same.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time

import numpy as np

TARGET_SECONDS = 60.0
DAMPING = 0.5


def child(edges: int, engine: str, queries: int) -> dict:
    """Return the stage seconds of ``engine`` on the graph of ``edges`` edges."""
    import graspologic.partition  # noqa: F401 - imported before timing, as graph_scale does

    from graphrag.index.graph.communities import communities_table, detect_communities
    from graphrag.index.graph.merge import add_degrees, build_graph, entity_edges, node_degrees
    from graphrag.stores.igraph_graph import IGraphStore
    from studies.benchmarks.graph_scale import synthetic_graph

    entities, relationships = synthetic_graph(edges)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    if engine == "networkx":
        graph = build_graph(entities, relationships)
        degrees = dict(graph.degree())
    else:
        graph = entity_edges(entities, relationships)
        degrees = node_degrees(entities, graph)
    add_degrees(entities, relationships, degrees)
    seconds["build"] = time.perf_counter() - started
    started = time.perf_counter()
    clusters = detect_communities(graph, max_cluster_size=10, seed=7)
    seconds["leiden"] = time.perf_counter() - started
    started = time.perf_counter()
    communities_table(clusters, entities, relationships)
    seconds["table"] = time.perf_counter() - started

    rng = np.random.default_rng(11)
    ids = list(entities["id"])
    seeds = [
        dict(zip((ids[i] for i in rng.choice(len(ids), 5)), rng.uniform(0.2, 1, 5), strict=True))
        for _ in range(queries)
    ]
    started = time.perf_counter()
    if engine == "networkx":
        import networkx as nx

        walk = lambda s: nx.pagerank(graph, alpha=DAMPING, personalization=s)  # noqa: E731
    else:
        store = IGraphStore(ids, graph)
        walk = lambda s: store.personalized_pagerank(s, DAMPING)  # noqa: E731
    seconds["ppr_graph"] = time.perf_counter() - started
    started = time.perf_counter()
    scores = [walk(s) for s in seeds]
    seconds["ppr_query"] = (time.perf_counter() - started) / queries
    top = [sorted(s, key=lambda n, s=s: -s[n])[:10] for s in scores]
    digest = hashlib.sha256(json.dumps(sorted(map(str, clusters))).encode()).hexdigest()[:12]
    return {"seconds": seconds, "communities": digest, "top10": top}


def run(edges: int, engine: str, queries: int) -> dict:
    command = [sys.executable, "-m", "studies.benchmarks.graph_engine", "--child", engine]
    command += ["--edges", str(edges), "--queries", str(queries)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=5, help="PPR queries timed per size")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.edges), args.child, args.queries)))
        return
    print(
        "| edges | engine | build s | Leiden s | table s | graph stage s | PPR graph s "
        "| PPR per query s | same communities | same top-10 per query |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for edges in (int(e) for e in args.edges.split(",")):
        results = {}
        for engine in ("networkx", "igraph"):  # each row printed as soon as it is measured
            results[engine] = result = run(edges, engine, args.queries)
            s = result["seconds"]
            stage = s["build"] + s["leiden"] + s["table"]
            before = results["networkx"]
            same = before["communities"] == result["communities"]
            top = sum(a == b for a, b in zip(before["top10"], result["top10"], strict=True))
            print(
                f"| {edges:,} | {engine} | {s['build']:.2f} | {s['leiden']:.2f} | "
                f"{s['table']:.2f} | {stage:.2f} | {s['ppr_graph']:.2f} | "
                f"{s['ppr_query']:.3f} | {'yes' if same else 'NO'} | {top}/{args.queries} |",
                flush=True,
            )
    print(f"target: the 1M-edge graph stage under {TARGET_SECONDS:.0f} s")


if __name__ == "__main__":
    main()
