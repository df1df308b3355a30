"""The vector store at scale: numpy in memory against a vector database, on synthetic vectors.

Run: nice -n 19 .venv/bin/python -m studies.benchmarks.vector_db_scale
     [--sizes 10000,100000,1000000] [--engines numpy,lancedb] [--queries 20]
     [--phases load,again,open,ann]

Each size is a seeded set of unit vectors of the default embedder's 384 dimensions, drawn
around 1,000 centres (embeddings cluster; uniform random vectors would make approximate
search look worse than it is), written as the index keeps them: a parquet table of id and
vector. Every engine runs in fresh interpreters, one per phase:

- ``load``: read the parquet table and make the store as ``IndexStores`` does (numpy: stack
  the rows; a database: stack them and write its table). For a database this is the first
  load of an index; ``again`` is every later one (the table is found by its hash and not
  written), ``open`` opens the stored table alone, without the parquet vectors (a server or a
  store the index does not carry its vectors into).
- per query, in the ``load`` interpreter: ``top_k(q, 10)``, ``top_k(q, 10, among=)`` of
  1,000 ids, ``scores(q)`` of every id; recall@10 against numpy's exact answer.
- ``ann`` (databases with an approximate index, LanceDB's IVF_HNSW_SQ here): the index's build
  seconds, then top-10 latency and recall@10 against the exact answer.

Peak RSS is the interpreter's high-water mark, and in brackets how far it rose over the
interpreter after its imports (the vectors in memory are 1.5 GB at 1M); disk
is the parquet file for numpy and the database's folder otherwise. Prints one row per
(size, engine, phase) as soon as it is measured; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

DIMENSIONS = 384
CENTRES = 1000
AMONG = 1000


def vectors(n: int, seed: int = 7) -> np.ndarray:
    """Return ``n`` seeded unit vectors clustered around ``CENTRES`` centres."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CENTRES, DIMENSIONS)).astype(np.float32)
    out = np.empty((n, DIMENSIONS), dtype=np.float32)
    for start in range(0, n, 100_000):
        size = min(100_000, n - start)
        noise = rng.standard_normal((size, DIMENSIONS)).astype(np.float32)
        out[start : start + size] = centres[rng.integers(0, CENTRES, size)] + 1.2 * noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def queries(n: int, count: int) -> np.ndarray:
    """Return ``count`` query vectors near stored ones (another seed's noise)."""
    rng = np.random.default_rng(99)
    picked = vectors(n)[rng.integers(0, n, count)]
    picked += 0.3 * rng.standard_normal(picked.shape).astype(np.float32) / DIMENSIONS**0.5
    return picked / np.linalg.norm(picked, axis=1, keepdims=True)


def write_parquet(n: int, folder: Path) -> Path:
    file = folder / f"vectors-{n}.parquet"
    if not file.exists():
        matrix = vectors(n)
        frame = pd.DataFrame({"id": [f"v{i}" for i in range(n)], "vector": list(matrix)})
        frame.to_parquet(file, index=False)
    return file


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    """Return the interpreter's resident memory now (Linux)."""
    with open("/proc/self/status") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def timed_queries(store, qs: np.ndarray, ids: list[str], among_rng) -> dict:
    top, among, every = [], [], []
    found = []
    for q in qs:
        started = time.perf_counter()
        found.append([i for i, _ in store.top_k(q, 10)])
        top.append(time.perf_counter() - started)
        subset = [ids[r] for r in among_rng.choice(len(ids), min(AMONG, len(ids)), replace=False)]
        started = time.perf_counter()
        store.top_k(q, 10, among=subset)
        among.append(time.perf_counter() - started)
        started = time.perf_counter()
        store.scores(q)
        every.append(time.perf_counter() - started)
    ms = lambda xs: 1000 * float(np.median(xs))  # noqa: E731
    return {"top_ms": ms(top), "among_ms": ms(among), "scores_ms": ms(every), "found": found}


def approximate(store) -> None:
    """Give ``store``'s table an approximate index (LanceDB's IVF_HNSW_SQ, inner product)."""
    if hasattr(store, "approximate"):
        store.approximate()
    else:
        store.table.create_index(metric="dot", index_type="IVF_HNSW_SQ")


def child(engine: str, n: int, phase: str, folder: Path, count: int, module: str, name: str):
    """Return one phase's figures for ``engine`` over the ``n`` vectors in ``folder``."""
    if module:
        __import__(module)
    from graphrag.stores import backend_of

    factory = backend_of("vector", engine)
    imported = rss_mib()
    where = folder / f"{engine}-{n}"
    qs = queries(n, count)
    started = time.perf_counter()
    if phase == "open":
        frame = pd.read_parquet(folder / f"vectors-{n}.parquet", columns=["id"])
        ids = list(frame["id"])
        store = factory.stored(ids, where, name)
    else:
        frame = pd.read_parquet(folder / f"vectors-{n}.parquet")
        ids = list(frame["id"])
        matrix = np.stack([np.asarray(v, dtype=np.float32) for v in frame["vector"]])
        del frame
        extra = {"location": where, "table": "vectors"} if getattr(factory, "persists", 0) else {}
        store = factory(ids, matrix, **extra)
        del matrix
    result = {"seconds": time.perf_counter() - started, "name": getattr(store, "name", "")}
    if phase == "ann":
        started = time.perf_counter()
        approximate(store)
        result["seconds"] = time.perf_counter() - started
    result.update(timed_queries(store, qs, ids, np.random.default_rng(5)))
    result["peak_mib"], result["imported_mib"] = peak_mib(), imported
    disk = folder / f"vectors-{n}.parquet" if engine == "numpy" else where
    files = [disk] if disk.is_file() else [p for p in disk.rglob("*") if p.is_file()]
    result["disk_mib"] = sum(p.stat().st_size for p in files) / 2**20
    return result


def run(engine: str, n: int, phase: str, folder: Path, count: int, module: str, name: str):
    command = [sys.executable, "-m", "studies.benchmarks.vector_db_scale", "--child", engine]
    command += ["--sizes", str(n), "--phase", phase, "--folder", str(folder)]
    command += ["--queries", str(count), "--module", module, "--name", name]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{engine} {phase} at {n:,} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def recall(found: list[list[str]], exact: list[list[str]]) -> float:
    return float(
        np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, exact, strict=True)])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--engines", default="numpy,lancedb")
    parser.add_argument("--queries", type=int, default=20, help="queries timed per phase")
    parser.add_argument("--phases", default="load,again,open,ann", help="a database's phases")
    parser.add_argument("--module", default="", help="a module registering another backend")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--phase", default="load", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--name", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = child(
            args.child,
            int(args.sizes),
            args.phase,
            Path(args.folder),
            args.queries,
            args.module,
            args.name,
        )
        print(json.dumps(result))
        return
    print(
        "| vectors | engine | phase | seconds | peak RSS MiB (over imports) | disk MiB | top-10 ms "
        "| top-10 among 1,000 ms | scores of all ms | recall@10 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    folder = Path(tempfile.mkdtemp(prefix="vector-db-scale-"))
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            write_parquet(n, folder)
            exact = None
            for engine in args.engines.split(","):
                phases = ["load"] if engine == "numpy" else args.phases.split(",")
                name = ""
                for phase in phases:
                    r = run(engine, n, phase, folder, args.queries, args.module, name)
                    name, exact = r["name"], exact or r["found"]
                    print(
                        f"| {n:,} | {engine} | {phase} | {r['seconds']:.2f} | "
                        f"{r['peak_mib']:,.0f} ({r['peak_mib'] - r['imported_mib']:,.0f}) | "
                        f"{r['disk_mib']:,.0f} | {r['top_ms']:.1f} | "
                        f"{r['among_ms']:.1f} | {r['scores_ms']:.1f} | "
                        f"{recall(r['found'], exact):.3f} |",
                        flush=True,
                    )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
