"""How much global search's scores move when nothing but an arbitrary order changes.

Run: .venv/bin/python -m studies.benchmarks.global_noise [--seeds 7,1,2] [--drafts 1,2] [--record]
     [--index output/kestrel_bay] [--questions data/kestrel_bay/thematic_questions.jsonl[,...]]

Global search shuffles the reports with a fixed seed before the map
(``query.global_shuffle_seed``; -1, the default, took ``llm.seed`` = 7, now the constant
``SEED``). With one report a map call, every map prompt is the same under any seed; only the
order in which the reduce reads the picked sentences changes, and the map scores nearly all
of them alike. A change of seed is a change that should not matter. For each seed this
evaluates naive RAG and global search on the question set (replay; ``--record`` asks the
live model for what is missing) and prints global's mean keyword hit, its pairwise win rate
over naive RAG on comprehensiveness with its CI, and, over all seeds, how many questions'
keyword hit differs between seeds and by how much.

With ``--drafts 1,2`` it also evaluates global search with ``query.global.reduce_seeds`` set
to those seeds, under the first of ``--seeds``: the reduce drafts an answer under each order
and one call merges the drafts. Its row prints the same figures, and each row the LLM calls
and tokens per global answer.

``--questions`` takes several files, comma-separated: their answers and ratings are pooled
into one row per seed or arm (more questions, a narrower interval).

Why it is kept: every arm of global search in docs/research-log.md moves the reduce's input, and a
difference between arms is only worth reading when it is larger than what a new seed alone
does to the same answers.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import pandas as pd

from graphrag.llm.client import SEED
from graphrag.settings import REPO_ROOT
from workbench.eval import pairwise, stats
from workbench.session import Workbench


def seed_run(
    index: str, questions: str, seed: int, cache: str, out: Path, drafts: tuple[int, ...] = ()
) -> dict:
    """Return the records, pairwise judgements and win rates of naive and global search
    with the reports shuffled by ``seed`` (and the reduce drafted under the ``drafts`` seeds'
    orders too, ``query.global.reduce_seeds``)."""
    query: dict = {"global": {"reduce_seeds": list(drafts)}}
    if seed != SEED:
        # another shuffle seed alone was query.global_shuffle_seed, removed from the core in
        # #45 (an arm that moved nothing); its rows replay at commit 105cabf6
        raise SystemExit(f"seed {seed}: only the request seed SEED shuffles the reports since #45")
    overrides = {"query": query}
    records, judgements = [], []
    with Workbench(cache=cache, overrides=overrides) as bench:
        bench.load(index)
        # several question files (comma-separated) are pooled: their question ids differ
        for number, path in enumerate(questions.split(",")):
            result = bench.evaluate(
                path,
                out=out / str(number),
                methods=["naive", "global"],
                metrics=[],
                progress=False,
                pairwise_pairs="global:naive",
                judge_controls=0,
            )
            records.append(result.records)
            judgements.append(pd.read_csv(Path(result.out) / "pairwise.csv"))
    judged = pd.concat(judgements, ignore_index=True)
    return {
        "records": pd.concat(records, ignore_index=True),
        "judgements": judged,
        "rates": pairwise.win_rates(judged),
    }


def comprehensiveness(rates: pd.DataFrame, method: str, against: str) -> pd.Series | None:
    """Return the win-rate row of ``method`` over ``against`` on comprehensiveness (None
    when the run judged no such pair)."""
    rows = rates[
        (rates["method_a"] == method)
        & (rates["method_b"] == against)
        & (rates["criterion"] == "comprehensiveness")
    ]
    return rows.iloc[0] if len(rows) else None


def seed_rows(runs: dict) -> pd.DataFrame:
    """Return one row per run (keyed by its seed or label): global's mean keyword hit (and
    naive RAG's), comprehensiveness win rate over naive RAG and over the closed-book answer
    (naive's too; NaN when not judged), and LLM calls and tokens per global answer."""
    rows = []
    for seed, run in runs.items():
        records, rates = run["records"], run["rates"]
        answers = records[records["method"] == "global"]
        rate = comprehensiveness(rates, "global", "naive")
        closed_book = comprehensiveness(rates, "global", pairwise.CLOSED_BOOK)
        naive_closed_book = comprehensiveness(rates, "naive", pairwise.CLOSED_BOOK)
        rows.append(
            {
                "seed": seed,
                "keyword_hit": answers["keyword_hit_rate"].mean(),
                "naive_keyword_hit": records.loc[
                    records["method"] == "naive", "keyword_hit_rate"
                ].mean(),
                "comprehensiveness": rate.win_rate,
                "low": rate.low,
                "high": rate.high,
                "over_closed_book": math.nan if closed_book is None else closed_book.win_rate,
                "naive_over_closed_book": (
                    math.nan if naive_closed_book is None else naive_closed_book.win_rate
                ),
                "calls": answers["llm_calls"].mean(),
                "tokens": (answers["prompt_tokens"] + answers["completion_tokens"]).mean(),
            }
        )
    return pd.DataFrame(rows)


def row_line(row: tuple) -> str:
    """Return one printed line of ``seed_rows`` (docs/research-log.md quotes them)."""
    return (
        f"seed {row.seed!s:<4} keyword hit {row.keyword_hit:.3f} (naive "
        f"{row.naive_keyword_hit:.3f})   comprehensiveness {row.comprehensiveness:.3f} "
        f"[{row.low:.3f}, {row.high:.3f}], over the closed-book answer "
        f"{row.over_closed_book:.3f} (naive {row.naive_over_closed_book:.3f})   per answer "
        f"{row.calls:.1f} calls, {row.tokens:,.0f} tokens"
    )


def pooled(runs: dict[int, dict], criterion: str = "comprehensiveness") -> stats.Estimate:
    """Return global's win rate over naive on ``criterion`` averaged over the seeds per
    question, with a bootstrap CI over questions: the estimate the order does not pick."""
    scores = []
    for run in runs.values():
        judged = run["judgements"]
        judged = judged[
            (judged["method_a"] == "global")
            & (judged["method_b"] == "naive")
            & (judged["criterion"] == criterion)
            & (judged["status"] == pairwise.SCORED)
        ]
        scores.append(judged.set_index("question_id")["score_a"])
    return stats.bootstrap_ci(pd.concat(scores, axis=1).mean(axis=1))


def per_question_spread(runs: dict[int, dict]) -> pd.DataFrame:
    """Return global's keyword hit per question (rows) and seed (columns)."""
    return pd.DataFrame(
        {
            seed: run["records"][run["records"]["method"] == "global"].set_index("question_id")[
                "keyword_hit_rate"
            ]
            for seed, run in runs.items()
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="7,1,2", help="shuffle seeds (7: the default's)")
    parser.add_argument("--index", default=str(REPO_ROOT / "output" / "kestrel_bay"))
    parser.add_argument(
        "--questions", default=str(REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl")
    )
    parser.add_argument(
        "--drafts", default="", help="reduce seeds of the drafts arm (e.g. 1,2; none: no arm)"
    )
    parser.add_argument("--record", action="store_true", help="ask the live model for misses")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    drafts = tuple(int(s) for s in args.drafts.split(",") if s)
    cache = "on" if args.record else "replay"
    with tempfile.TemporaryDirectory() as folder:
        runs = {
            seed: seed_run(args.index, args.questions, seed, cache, Path(folder) / str(seed))
            for seed in seeds
        }
        if drafts:
            label = f"{seeds[0]} + drafts {','.join(map(str, drafts))}"
            arm = seed_run(args.index, args.questions, seeds[0], cache, Path(folder) / "d", drafts)
    table = seed_rows(runs)
    print("Global search by report-shuffle seed (comprehensiveness: win rate over naive RAG):")
    rows = table.itertuples(index=False)
    if drafts:
        rows = [*rows, *seed_rows({label: arm}).itertuples(index=False)]
    for row in rows:
        print(f"  {row_line(row)}")
    if len(runs) < 2:
        return
    spread = per_question_spread(runs)
    moved = spread.max(axis=1) - spread.min(axis=1)
    print(
        f"Questions whose keyword hit differs between seeds: {int((moved > 0).sum())} of "
        f"{len(spread)}; by half or more: {int((moved >= 0.5).sum())}"
    )
    estimate = pooled(runs)
    print(
        f"Comprehensiveness win rate averaged over the seeds per question: {estimate.mean:.3f} "
        f"[{estimate.low:.3f}, {estimate.high:.3f}] (n={estimate.n})"
    )
    print(
        f"Range of the mean keyword hit over seeds: {table['keyword_hit'].min():.3f} to "
        f"{table['keyword_hit'].max():.3f}; of the comprehensiveness win rate: "
        f"{table['comprehensiveness'].min():.3f} to {table['comprehensiveness'].max():.3f}"
    )


if __name__ == "__main__":
    main()
