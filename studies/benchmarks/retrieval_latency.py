"""Latency of each method's retrieval per question: our own compute, and the model's seconds
as recorded, one question at a time (nothing else runs beside it).

    .venv/bin/python -m studies.benchmarks.retrieval_latency --config data/musique/graphrag.toml \
        --index output/musique_full_nlp --questions data/musique_full/questions.jsonl \
        --methods naive,bm25,hybrid,local,ppr,hipporag,minirag,integrate [--limit 20]

Replays the cache: a model call costs here what it cost when it was recorded (its recorded
seconds, on the machine that recorded it), and our own time is the wall time less the time spent
waiting on the cache. The first question of each method also builds what the method keeps per
index (graphs, BM25, name vectors); it is timed apart ("first") and left out of the mean.
"""

from __future__ import annotations

import argparse
import statistics
import time

from graphrag.llm.coroutines import run_sync
from graphrag.llm.usage import track_usage
from workbench.eval.questions import load_questions
from workbench.session import Workbench


def time_method(method, questions: list[str]) -> dict[str, float]:
    """Return the first question's own seconds, and the mean own and model seconds of the rest."""
    own, model = [], []
    for question in questions:
        started = time.perf_counter()
        with track_usage() as usage:
            run_sync(method.aretrieve_ranked(question))
        own.append(time.perf_counter() - started - usage.seconds)
        model.append(usage.model_seconds)
    rest = slice(1, None) if len(questions) > 1 else slice(None)
    return {
        "first": own[0],
        "own": statistics.mean(own[rest]),
        "model": statistics.mean(model[rest]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config")
    parser.add_argument("--index", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--methods", required=True)
    parser.add_argument("--limit", type=int, default=20)
    args = parser.parse_args(argv)
    bench = Workbench(args.config, cache="replay")
    bench.load(args.index)
    questions = list(load_questions(args.questions)["question"].head(args.limit))
    print(f"{len(questions)} questions, one at a time, replayed; seconds per question")
    print(f"{'method':<12} {'first (builds)':>15} {'own':>8} {'model':>8} {'total':>8}")
    for name, method in bench.methods(args.methods.split(",")).items():
        cost = time_method(method, questions)
        total = cost["own"] + cost["model"]
        print(
            f"{name:<12} {cost['first']:>15.2f} {cost['own']:>8.3f} {cost['model']:>8.2f} "
            f"{total:>8.2f}"
        )
    bench.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
