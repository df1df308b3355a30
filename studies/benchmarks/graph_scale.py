"""Graph stages at scale: graph build, hierarchical Leiden and the communities table.

Run: .venv/bin/python -m studies.benchmarks.graph_scale [--edges 10000,100000,1000000]
     [--timeout 900]

For each size a synthetic entities/relationships pair is generated that looks like an
extracted graph: planted communities of heavy-tailed sizes, heavy-tailed node degrees (a few
hub entities), 16-hex-digit string ids, float weights, short descriptions; fixed seed. Each
(size, algorithm) runs in a fresh subprocess so its peak RSS is its own (read with
``os.wait4``, which also covers a run killed at ``--timeout``). Prints one row per run and
the target check; nothing is asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

import numpy as np
import pandas as pd

# graspologic is the only engine since #45 (leidenalg was 6-8x slower at 1M edges; its rows
# replay at commit 105cabf6)
ALGORITHMS = ("graspologic",)
ENTITY_TYPES = ("person", "organization", "geo", "event", "technology")
TARGET_EDGES = 1_000_000
TARGET_SECONDS = 60.0
TARGET_MIB = 4096.0


def _community_sizes(rng: np.random.Generator, nodes: int) -> np.ndarray:
    """Return heavy-tailed community sizes (3 to 400 entities) that sum to ``nodes``."""
    sizes: list[int] = []
    total = 0
    while total < nodes:
        batch = np.clip((rng.pareto(1.5, 4096) + 1) * 4, 3, 400).astype(int)
        sizes.extend(batch.tolist())
        total += int(batch.sum())
    sizes_arr = np.array(sizes)
    keep = int(np.searchsorted(np.cumsum(sizes_arr), nodes)) + 1
    sizes_arr = sizes_arr[:keep]
    sizes_arr[-1] -= int(sizes_arr.sum()) - nodes
    return sizes_arr[sizes_arr > 0]


def synthetic_graph(
    edges: int, mean_degree: float = 4.0, mixing: float = 0.2, seed: int = 7
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships) tables with ``edges`` distinct undirected edges.

    A fraction ``mixing`` of the edges joins two random communities; the rest stay inside
    one. Endpoints are drawn in proportion to a Pareto propensity, so degrees are heavy-tailed
    as in extracted graphs, where a few entities (the town, the company) touch many others.
    """
    rng = np.random.default_rng(seed)
    nodes = max(int(round(2 * edges / mean_degree)), 8)
    sizes = _community_sizes(rng, nodes)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    community_of = np.repeat(np.arange(len(sizes)), sizes)
    propensity = rng.pareto(2.0, nodes) + 1.0
    cumulative = np.cumsum(propensity)
    below = np.concatenate([[0.0], cumulative])  # below[i] = propensity of nodes before i

    def draw(low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """Draw one node from each index range [low, high), in proportion to propensity."""
        u = below[low] + rng.random(len(low)) * (below[high] - below[low])
        return np.minimum(np.searchsorted(cumulative, u, side="right"), high - 1)

    pairs = np.zeros(0, dtype=np.int64)
    while len(pairs) < edges:
        batch = int((edges - len(pairs)) * 1.3) + 64
        zeros, full = np.zeros(batch, dtype=np.int64), np.full(batch, nodes, dtype=np.int64)
        source = draw(zeros, full)
        home = community_of[source]
        target = draw(starts[home], ends[home])
        across = rng.random(batch) < mixing
        target[across] = draw(zeros[across], full[across])
        low, high = np.minimum(source, target), np.maximum(source, target)
        keys = (low * nodes + high)[low != high]
        pairs = np.unique(np.concatenate([pairs, keys]))
    pairs = rng.permutation(pairs)[:edges]
    source, target = pairs // nodes, pairs % nodes

    ids = [hashlib.sha256(f"entity\0{i}".encode()).hexdigest()[:16] for i in range(nodes)]
    types = [ENTITY_TYPES[i % len(ENTITY_TYPES)] for i in range(nodes)]
    units = rng.integers(0, max(nodes // 3, 1), size=(nodes, 2))
    entities = pd.DataFrame(
        {
            "id": ids,
            "title": [f"Entity {i}" for i in range(nodes)],
            "type": types,
            "description": [
                f"A {t} of group {c} in the synthetic corpus, mentioned alongside its neighbours "
                f"and described in about twenty words like an extracted entity {i}."
                for i, (t, c) in enumerate(zip(types, community_of.tolist(), strict=True))
            ],
            "text_unit_ids": [[f"u{a}", f"u{b}"] for a, b in units.tolist()],
        }
    )
    weights = (rng.integers(1, 11, edges) * (1 + rng.poisson(0.3, edges))).astype(float)
    relationships = pd.DataFrame(
        {
            "id": [hashlib.sha256(f"rel\0{p}".encode()).hexdigest()[:16] for p in pairs.tolist()],
            "source": [f"Entity {s}" for s in source.tolist()],
            "target": [f"Entity {t}" for t in target.tolist()],
            "source_id": [ids[s] for s in source.tolist()],
            "target_id": [ids[t] for t in target.tolist()],
            "description": [
                f"Entity {s} works with Entity {t}."
                for s, t in zip(source.tolist(), target.tolist(), strict=True)
            ],
            "weight": weights,
        }
    )
    return entities, relationships


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(edges: int, algorithm: str, seed: int) -> None:
    """Run the three stages for one (size, algorithm), printing one JSON line per stage."""
    # Import the engine before timing: its import (seconds for graspologic) is paid once per
    # process and is not part of the clustering cost.
    import graspologic.partition  # noqa: F401

    from graphrag.index.graph.communities import communities_table, detect_communities
    from graphrag.index.graph.merge import build_graph

    def emit(**fields: object) -> None:
        print(json.dumps({**fields, "peak_mib": _peak_mib()}), flush=True)

    entities, relationships = synthetic_graph(edges, seed=seed)
    emit(stage="tables", nodes=len(entities), edges=len(relationships))

    started = time.perf_counter()
    graph = build_graph(entities, relationships)
    emit(stage="build", seconds=time.perf_counter() - started)

    started = time.perf_counter()
    clusters = detect_communities(graph, max_cluster_size=10, seed=seed)
    levels = Counter(level for level, _, _ in clusters)
    emit(
        stage="leiden",
        seconds=time.perf_counter() - started,
        levels={str(k): v for k, v in sorted(levels.items())},
    )

    started = time.perf_counter()
    communities_table(clusters, entities, relationships)
    emit(stage="table", seconds=time.perf_counter() - started)


def run_one(edges: int, algorithm: str, seed: int, timeout: float) -> dict:
    """Run one (size, algorithm) in a fresh interpreter; return its stage figures."""
    command = [sys.executable, __file__, "--child", str(edges), algorithm, "--seed", str(seed)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            timed_out = True
            os.kill(process.pid, signal.SIGKILL)
            _, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.2)
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    reader.join(timeout=5)
    result: dict = {"edges": edges, "algorithm": algorithm, "timed_out": timed_out}
    for line in lines:
        record = json.loads(line)
        result[record["stage"]] = record
    result["peak_mib"] = usage.ru_maxrss / 1024
    result["failed"] = not timed_out and process.returncode != 0
    return result


def _seconds(result: dict, stage: str) -> str:
    if stage in result:
        return f"{result[stage]['seconds']:.2f}"
    return "timeout" if result["timed_out"] else ("failed" if result["failed"] else "-")


def render(results: list[dict], timeout: float) -> str:
    header = (
        f"{'edges':>9} {'nodes':>8} {'algorithm':<12}{'build s':>9}{'leiden s':>10}"
        f"{'table s':>10}{'total s':>9}{'base MiB':>10}{'peak MiB':>10}  {'target':<7}"
        "communities per level"
    )
    lines = [header]
    for r in results:
        done = all(stage in r for stage in ("build", "leiden", "table"))
        total = sum(r[s]["seconds"] for s in ("build", "leiden", "table")) if done else None
        ok = done and total < TARGET_SECONDS and r["peak_mib"] < TARGET_MIB
        levels = r.get("leiden", {}).get("levels", {})
        base = f"{r['tables']['peak_mib']:.0f}" if "tables" in r else "-"
        total_text = f"{total:.2f}" if total is not None else "-"
        lines.append(
            f"{r['edges']:>9} {r.get('tables', {}).get('nodes', '-'):>8} {r['algorithm']:<12}"
            f"{_seconds(r, 'build'):>9}{_seconds(r, 'leiden'):>10}{_seconds(r, 'table'):>10}"
            f"{total_text:>9}{base:>10}{r['peak_mib']:>10.0f}  "
            f"{'PASS' if ok else 'MISS':<7}" + " ".join(f"{k}:{v}" for k, v in levels.items())
        )
    lines.append(
        f"target: {TARGET_EDGES // 1_000_000}M edges < {TARGET_SECONDS:.0f} s and "
        f"< {TARGET_MIB / 1024:.0f} GiB (seconds: build + leiden + table; MiB: peak RSS of the "
        "run; base MiB: interpreter, imports and tables before the first stage).\n"
        "Rows below 1M edges are checked against the same budget; a run still going after "
        f"{timeout:.0f} s is reported as timeout."
    )
    return "\n".join(lines)


def render_scaling(results: list[dict]) -> str:
    """Return how each stage's seconds grew between consecutive sizes, against the edges."""
    lines = ["scaling (seconds ratio between consecutive sizes; linear = the edges ratio):"]
    for algorithm in ALGORITHMS:
        rows = [r for r in results if r["algorithm"] == algorithm]
        for small, large in zip(rows, rows[1:], strict=False):
            ratios = []
            for stage in ("build", "leiden", "table"):
                if stage in small and stage in large and small[stage]["seconds"] > 0:
                    ratios.append(
                        f"{stage} x{large[stage]['seconds'] / small[stage]['seconds']:.1f}"
                    )
            lines.append(
                f"  {algorithm:<12}{small['edges']:>9} -> {large['edges']:<9} "
                f"(edges x{large['edges'] / small['edges']:.0f}): " + (", ".join(ratios) or "-")
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edges", default="10000,100000,1000000")
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", nargs=2, metavar=("EDGES", "ALGORITHM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[0]), args.child[1], args.seed)
        return
    results = []
    for edges in (int(e) for e in args.edges.split(",")):
        for algorithm in args.algorithms.split(","):
            result = run_one(edges, algorithm, args.seed, args.timeout)
            results.append(result)
            print(
                f"ran {edges} edges, {algorithm}: "
                + ", ".join(f"{s} {_seconds(result, s)} s" for s in ("build", "leiden", "table"))
                + f", peak {result['peak_mib']:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
    print(render(results, args.timeout))
    print(render_scaling(results))


if __name__ == "__main__":
    main()
