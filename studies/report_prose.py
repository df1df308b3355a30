"""``python -m studies.report_prose REPORT_DIR...``: the generated prose of our committed reports.

``graphrag eval`` and ``graphrag retrieval`` write every table a reader needs (scores with
their CIs and n, the failures, the judge's verdicts, the tests against the baseline); our own
reports also carry sentences generated from those tables, for the results page, the README and
notebook 4. This step reads a report folder back and rewrites its ``summary.md`` with them: an
answer report gets the table of complete answers only and the Reading (``report_reading``), a
retrieval report its Reading. It only reads the folder's files, so it gives the same bytes on
every run (scripts/demo.sh and scripts/retrieval_study.sh run it after writing the reports).
A retrieval report's section of the cross-corpus summary and its cost–quality figure (notebook
4) are here too: both quote the same reading.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from graphrag.settings import repo_relative
from studies.cross_corpus import SummaryError, load_report
from studies.report_reading import (
    complete_scores_section,
    detectable_sentence,
    reading_section,
)
from workbench.eval import stats
from workbench.eval.hops import HOPS_CSV
from workbench.eval.retrieval import BASELINE, RECALL_KS, RetrievalEvalError
from workbench.report.eval_report import (
    RECORDS_PARQUET,
    RUN_JSON,
    SUMMARY_MD,
    evidence_per_hop,
    render,
    summary_sections,
)
from workbench.report.headline import all_questions, headline, primary_lines, tuned_of
from workbench.report.plots import plot_cost_quality_frontier
from workbench.report.rerank_tables import rerank_section
from workbench.report.retrieval_report import ALPHA, RECORDS, RUN, SUMMARY, TESTS, score_table
from workbench.report.tables import p_text, signed, with_ci

READING = "## Reading"
FRONTIER_COST = "prompt_tokens"  # what a method's retrieval sends the model per question


@dataclasses.dataclass
class ReportFiles:
    """A retrieval report folder read back: what ``retrieval_report.write_report`` wrote."""

    run: dict[str, Any]
    records: pd.DataFrame
    tests: pd.DataFrame
    hops: pd.DataFrame


def read_report(folder: str | Path) -> ReportFiles:
    """Read a retrieval report folder (question ids as strings, so ids that look like numbers
    still match across files); a folder that is not one is an error naming it."""
    folder = Path(folder)
    try:
        return ReportFiles(
            run=json.loads((folder / RUN).read_text(encoding="utf-8")),
            records=pd.read_parquet(folder / RECORDS),
            tests=pd.read_csv(folder / TESTS),
            hops=pd.read_csv(folder / HOPS_CSV, dtype={"question_id": str}),
        )
    except (OSError, ValueError) as err:
        raise RetrievalEvalError(
            f"{folder} is not a retrieval report (written by `graphrag retrieval`): {err}"
        ) from err


def eval_summary(folder: str | Path) -> str:
    """Return the ``summary.md`` of an answer report folder with the complete-answers table
    (after the scores) and the Reading (at the end)."""
    folder = Path(folder)
    run = json.loads((folder / RUN_JSON).read_text(encoding="utf-8"))
    analysis = load_report(folder, run["test_family"]["baseline"]).analysis
    full = all_questions(analysis, pd.read_parquet(folder / RECORDS_PARQUET))
    hops = pd.read_csv(folder / HOPS_CSV) if (folder / HOPS_CSV).is_file() else None
    parts = []
    for name, lines in summary_sections(
        analysis, full, run["meta"], evidence_per_hop(analysis, hops)
    ).items():
        parts.append(lines)
        if name == "scores":
            parts.append(complete_scores_section(analysis))
    return render([*parts, reading_section(analysis)])


def retrieval_reading(tests: pd.DataFrame, alpha: float) -> list[str]:
    """Return sentences generated from a retrieval report's tests: each difference that passes
    Holm, then how many do not and the nearest of those, with its p before and after."""
    if tests.empty:
        return [f"No method was compared with {BASELINE}."]
    passed = tests[tests["p_holm"] < alpha]
    sentences = [
        f"{t.method} {'>' if t.mean_diff > 0 else '<'} {BASELINE} on {t.metric} "
        f"({t.method} minus {BASELINE}: {with_ci(t.mean_diff, t.ci_low, t.ci_high, signed)}, "
        f"p {p_text(t.p_value)} before and {p_text(t.p_holm)} after Holm, n={t.n})."
        for t in passed.itertuples(index=False)
    ]
    rest = tests[~(tests["p_holm"] < alpha)]
    if rest.empty:
        return sentences
    nearest = rest.sort_values("p_value", kind="stable").iloc[0]
    lead = (
        f"Not significant: the other {len(rest)}"
        if len(passed)
        else f"No difference from {BASELINE} passes Holm's correction at {alpha} "
        f"({len(rest)} tested)"
    )
    return [
        *sentences,
        f"{lead}; the nearest is {nearest['method']} on {nearest['metric']}, "
        f"{with_ci(nearest['mean_diff'], nearest['ci_low'], nearest['ci_high'], signed)}, "
        f"p {p_text(nearest['p_value'])} before and {p_text(nearest['p_holm'])} after Holm."
        + "".join(f" {s}" for s in detectable_sentence(nearest)),
    ]


def retrieval_summary(folder: str | Path) -> str:
    """Return a retrieval report's ``summary.md`` as ``graphrag retrieval`` wrote it, with the
    Reading of its tests at the end (replacing one added before)."""
    folder = Path(folder)
    text = (folder / SUMMARY).read_text(encoding="utf-8").split(f"\n{READING}\n", 1)[0]
    sentences = retrieval_reading(read_report(folder).tests, ALPHA)
    return "\n".join([text.rstrip("\n"), "", READING, "", *(f"- {s}" for s in sentences)]) + "\n"


def retrieval_section(folder: str | Path) -> list[str]:
    """Return the cross-corpus summary's lines for a retrieval report folder: its setting, its
    declared primary hypothesis tested alone (or the line saying none was declared), the score
    table, the reading of the exploratory tests and, with reranked methods, what the rerank
    stage changed."""
    folder = Path(folder)
    report = read_report(folder)
    run, tests = report.run, report.tests
    records, label = headline(report.records, tuned_of(run))
    options = {k: run[k] for k in ("seed", "n_resamples") if k in run}
    primary = primary_lines(records, run, ALPHA, options)
    if primary[0].startswith("## "):  # the report's own section, as a paragraph here
        primary = [f"**{primary[0].removeprefix('## ')}.** {primary[2]}", *primary[3:]]
    reranks = rerank_section(records, **options)
    return [
        f"## Retrieval only: {folder.name}",
        "",
        "Contexts scored with no answer call (`graphrag retrieval`, "
        f"{repo_relative(folder / SUMMARY)}): "
        f"questions {run['questions']}; index {run['index']}; query settings not at their "
        f"defaults: {run.get('query settings not at their defaults', 'none')}.",
        "",
        *primary,
        "",
        *([label, ""] if label and report.records.get("split") is not None else []),
        *score_table(records, options),
        "",
        *(f"- {sentence}" for sentence in retrieval_reading(tests, ALPHA)),
        *(["", f"#{reranks[0]}", *reranks[1:]] if reranks else []),
    ]


def frontier_figure(folder: str | Path) -> Figure:
    """Return the cost–quality frontier of a retrieval report's headline questions: recall@5
    and evidence recall against the prompt tokens each method's retrieval sends the model
    (HyDE's passage, multi-query's rewrites, HippoRAG's filter, MiniRAG's query analysis).
    At equal context every method's answer call costs the same, so only the retrieval's own
    calls set methods apart; a method that calls no model costs 0."""
    report = read_report(folder)
    records, _ = headline(report.records, tuned_of(report.run))
    metrics = [f"recall_at_{max(RECALL_KS)}", "evidence_recall"]
    options = {k: report.run[k] for k in ("seed", "n_resamples") if k in report.run}
    by_method = stats.summarize(records, metrics, **options)
    return plot_cost_quality_frontier(
        records,
        by_method,
        metrics,
        FRONTIER_COST,
        n_resamples=options.get("n_resamples", stats.DEFAULT_RESAMPLES),
        per="question",
    )


def add_prose(folder: str | Path) -> Path:
    """Rewrite the ``summary.md`` of an answer or retrieval report folder with its generated
    prose; return its path. A folder that is neither is an error naming it."""
    folder = Path(folder)
    if (folder / RECORDS_PARQUET).is_file():
        text = eval_summary(folder)
    elif (folder / RECORDS).is_file():
        text = retrieval_summary(folder)
    else:
        raise SummaryError(
            f"{folder} has neither {RECORDS_PARQUET} nor {RECORDS}: not a report folder written "
            "by `graphrag eval` or `graphrag retrieval`"
        )
    path = folder / SUMMARY_MD
    path.write_text(text, encoding="utf-8", newline="\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m studies.report_prose",
        description="add the generated reading to report folders written by `graphrag eval` "
        "or `graphrag retrieval`",
    )
    parser.add_argument("reports", nargs="+", metavar="REPORT_DIR", help="report folders")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        for folder in args.reports:
            print(f"reading added to {repo_relative(add_prose(folder))}")
    except (SummaryError, RetrievalEvalError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
