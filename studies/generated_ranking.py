"""Do generated questions rank the methods as hand-written ones do (issue #47)?

Each method answers both question sets over one index (``Workbench.evaluate``, no judge: the
judge-free metrics only), or with ``--retrieval`` only ranks text units for them
(``Workbench.evaluate_retrieval``: evidence recall and recall@k, no answer call; HyDE still
writes its passage); the methods' mean scores on each set are ranked and compared with
Kendall's tau and a bootstrap interval over each set's questions
(``ranking_agreement`` below). The demo's hand-written answers are recorded; the
generated set's need a live run (``--cache on``), about four answers per question per method
on the embedded model.

    python -m studies.generated_ranking --index output/kestrel_bay \
        --generated data/kestrel_bay/generated_questions.jsonl [--cache on] \
        [--retrieval --metric recall_at_5]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from workbench.eval.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    RecordsError,
    scores_by_question,
)
from workbench.session import Workbench

METHODS = ("naive", "hyde", "local", "ppr")
METRIC = "keyword_hit_rate"  # judge-free, and both sets carry answer keywords
HANDWRITTEN = Path("data/kestrel_bay/questions.jsonl")


@dataclass(frozen=True)
class RankAgreement:
    """Kendall's tau between two question sets' rankings of the same methods, with a
    percentile-bootstrap interval over each set's questions."""

    tau: float
    low: float
    high: float
    methods: tuple[str, ...]
    n_first: int  # questions of each set
    n_second: int


def _tau(first: np.ndarray, second: np.ndarray) -> float:
    return float(scipy_stats.kendalltau(first, second).statistic)


def ranking_agreement(
    first: pd.DataFrame,
    second: pd.DataFrame,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> RankAgreement:
    """Return Kendall's tau (scipy's tau-b) between the methods' mean scores on two question
    sets (each a question x method table, :func:`scores_by_question`; the methods both hold
    are compared), with an interval from resampling each set's questions with replacement
    (resamples in which a ranking is all ties, so tau is undefined, are left out)."""
    methods = [m for m in first.columns if m in second.columns]
    if len(methods) < 2:
        raise RecordsError(f"the two sets share fewer than two methods ({methods})")
    a, b = first[methods].to_numpy(dtype=float), second[methods].to_numpy(dtype=float)
    tau = _tau(np.nanmean(a, axis=0), np.nanmean(b, axis=0))
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(n_resamples):
        ra = a[rng.integers(0, len(a), len(a))]
        rb = b[rng.integers(0, len(b), len(b))]
        with np.errstate(all="ignore"):
            taus.append(_tau(np.nanmean(ra, axis=0), np.nanmean(rb, axis=0)))
    present = np.array([t for t in taus if not math.isnan(t)])
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(present, [tail, 100.0 - tail]) if present.size else (math.nan,) * 2
    return RankAgreement(tau, float(low), float(high), tuple(methods), len(a), len(b))


def agreement(
    handwritten: pd.DataFrame, generated: pd.DataFrame, metric: str = METRIC
) -> RankAgreement:
    """Kendall's tau between the methods' rankings on two evaluations' records."""
    return ranking_agreement(
        scores_by_question(handwritten, metric), scores_by_question(generated, metric)
    )


def compare(
    bench: Workbench,
    sets: dict[str, str | Path],
    methods: list[str],
    out: Path,
    retrieval: bool = False,
) -> dict[str, pd.DataFrame]:
    """Each set's records of ``methods`` over the workbench's loaded index: rankings only
    (``retrieval``) or answers scored judge-free (no RAGAS metric, no judge control)."""
    records = {}
    for name, questions in sets.items():
        if retrieval:
            records[name] = bench.evaluate_retrieval(
                questions, out=out / name, methods=methods, progress=False
            )
        else:
            result = bench.evaluate(
                questions,
                out=out / name,
                methods=methods,
                metrics=[],
                judge_controls=0,
                progress=False,
            )
            records[name] = result.records
    return records


def mean_scores(records: dict[str, pd.DataFrame], metric: str) -> dict[str, dict[str, float]]:
    """Each set's mean ``metric`` per method, to three places (as the page prints them)."""
    return {
        name: scores_by_question(frame, metric).mean().round(3).to_dict()
        for name, frame in records.items()
    }


def render(result: RankAgreement, metric: str = METRIC) -> str:
    return (
        f"Kendall's tau between the rankings of {', '.join(result.methods)} by mean {metric}: "
        f"{result.tau:.2f} (95% bootstrap interval {result.low:.2f} to {result.high:.2f}; "
        f"{result.n_first} hand-written, {result.n_second} generated questions)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--generated", required=True, help="the generated questions .jsonl")
    parser.add_argument("--handwritten", default=str(HANDWRITTEN))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--metric", default=METRIC)
    parser.add_argument("--out", default="output/generated_ranking", help="report folders")
    parser.add_argument("--cache", choices=["on", "off", "replay"], default="replay")
    parser.add_argument(
        "--retrieval", action="store_true", help="rank text units only: no answer call"
    )
    parser.add_argument("--save", help="also write the result as JSON (docs/questions.md reads it)")
    args = parser.parse_args(argv)
    with Workbench(cache=args.cache) as bench:
        bench.load(args.index)
        records = compare(
            bench,
            {"handwritten": args.handwritten, "generated": args.generated},
            args.methods.split(","),
            Path(args.out),
            args.retrieval,
        )
    result = agreement(records["handwritten"], records["generated"], args.metric)
    print(render(result, args.metric))
    if args.save:
        body = {
            "command": "python -m studies.generated_ranking " + " ".join(argv or sys.argv[1:]),
            "metric": args.metric,
            "means": mean_scores(records, args.metric),
            "line": render(result, args.metric),
        }
        Path(args.save).write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
