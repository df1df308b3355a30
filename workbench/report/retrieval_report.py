"""The retrieval report folder (``graphrag retrieval``): scores with their CIs, the paired
tests against naive RAG (``eval.retrieval`` computes them) and the evidence per hop."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.eval import stats
from workbench.eval.declared import PRIMARY_FIELD
from workbench.eval.hops import HOPS_CSV
from workbench.eval.retrieval import BASELINE, SCORE_NAMES, SCORES, baseline_tests
from workbench.report import tables
from workbench.report.headline import headline, primary_lines, restrict, tuned_of
from workbench.report.hop_tables import hops_section
from workbench.report.rerank_tables import rerank_section

ALPHA = 0.05  # as the answer reports (report.eval_report.write_report)
RECORDS = "retrieval.parquet"
TESTS = "tests.csv"
RUN = "run.json"
SUMMARY = "summary.md"


def score_table(records: pd.DataFrame, options: dict[str, int]) -> list[str]:
    """Return the Markdown table of each method's scores (mean [CI] (n)), context and calls
    (the scores the records have: a report written before MRR and nDCG has none)."""
    scores = {m: name for m, name in zip(SCORES, SCORE_NAMES, strict=True) if m in records}
    summary = stats.summarize(records, [*scores, "context_tokens", "llm_calls"], **options)
    rows = [
        [
            tables.md(row["method"]),
            *(tables.cell(row, metric) for metric in scores),
            f"{row['context_tokens_mean']:,.0f}",
            f"{row['llm_calls_mean']:.2f}",
        ]
        for _, row in summary.iterrows()
    ]
    return tables.table(["Method", *scores.values(), "Context tokens", "LLM calls"], rows)


def by_type_section(records: pd.DataFrame, options: dict[str, int]) -> list[str]:
    """Return the ``## Scores by question type`` section (none with one type): per score, each
    method's mean [CI] (n) and its paired difference from naive [CI] on each type (no test:
    the tests are over all types, below)."""
    types = [str(t) for t in pd.unique(records["type"].dropna())] if "type" in records else []
    if len(types) < 2:
        return []
    methods = stats.methods_in_order(records)
    summary = stats.summarize(records, SCORES, by=("method", "type"), **options)
    by_type = {t: baseline_tests(records[records["type"] == t], options) for t in types}
    lines = [
        "## Scores by question type",
        "",
        "Per question type: mean [95% bootstrap CI] (n), then each method's paired difference "
        f"from {BASELINE} on the same questions [95% bootstrap CI], descriptive (the tests "
        "are over all types, below).",
    ]
    for metric, name in zip(SCORES, SCORE_NAMES, strict=True):
        rows = [
            [
                tables.md(m),
                *(tables.cell(stats.summary_row(summary, method=m, type=t), metric) for t in types),
            ]
            for m in methods
        ]
        for m in (m for m in methods if m != BASELINE):
            diffs = []
            for t in types:
                d = by_type[t].query("metric == @metric and method == @m")
                diffs.append(
                    tables.with_ci(*d[["mean_diff", "ci_low", "ci_high"]].iloc[0], tables.signed)
                    if len(d)
                    else "—"
                )
            rows.append([f"{tables.md(m)} − {BASELINE}", *diffs])
        lines += ["", f"### {name}", "", *tables.table(["Method", *types], rows)]
    return lines


def write_report(
    out: str | Path,
    records: pd.DataFrame,
    hop_rows: pd.DataFrame,
    meta: dict[str, Any],
    options: dict[str, int],
    extra: Sequence[str] = (),
) -> pd.DataFrame:
    """Test every method of ``records`` against naive RAG and write the report folder
    (``retrieval.parquet``, ``tests.csv``, ``hops.csv``, ``run.json``, ``summary.md`` with
    ``extra`` lines before the per-hop section); return the tests. The scores, tests and
    per-hop shares of the page are of the ``test`` questions (``report.headline``); the
    files keep every question, and a secondary table scores them all."""
    rows, label = headline(records, tuned_of(meta))
    tests = baseline_tests(rows, options, meta.get(PRIMARY_FIELD))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # timings vary run to run: printed by the command, not kept with the scores
    kept = records.drop(columns=["contexts", "seconds"], errors="ignore")
    kept.to_parquet(out / RECORDS, index=False)
    tests.to_csv(out / TESTS, index=False)
    hop_rows.to_csv(out / HOPS_CSV, index=False)
    (out / RUN).write_text(json.dumps({**meta, **options}, indent=1) + "\n", encoding="utf-8")
    secondary = []
    if len(records) != len(rows):
        secondary = [
            "",
            "All questions, dev and test (a secondary table, not the headline):",
            "",
            *score_table(records, options),
        ]
    lines = [
        "# Retrieval evaluation",
        "",
        *primary_lines(rows, meta, ALPHA, options),
        "",
        "What each method would place in the answer prompt, scored with no answer call "
        "(`workbench/eval/retrieval.py`). Evidence recall: the share of a question's gold "
        "paragraphs with a text unit verbatim in the context; recall@k: the share among the "
        "method's first k ranked text units; MRR: the mean of 1 / the rank of the first text "
        "unit holding a gold paragraph (0 when none is ranked); nDCG@k: binary relevance, "
        "each gold paragraph credited once at the first unit holding it. "
        "Mean [95% bootstrap CI] (n = questions).",
        "",
        *(f"- {k}: {tables.md(v)}" for k, v in meta.items()),
        "",
        *([label, ""] if label else []),
        *score_table(rows, options),
        *secondary,
        *(["", *by_type] if (by_type := by_type_section(rows, options)) else []),
        "",
        f"## Against {BASELINE}",
        "",
        "Exploratory: paired Wilcoxon test over the same questions; Holm's correction over "
        "the methods compared with the baseline, one family per metric (a declared primary "
        "hypothesis is tested alone, above, and is not in its family).",
        "",
        tables.POWER_NOTE,
        "",
        *tables.baseline_tests_table(tests, BASELINE, ALPHA),
    ]
    if reranks := rerank_section(rows, **options):
        lines += ["", *reranks]
    if extra:
        lines += ["", *extra]
    hop_rows = restrict(hop_rows, rows)
    if not hop_rows.empty:
        lines += ["", *hops_section(hop_rows, per_question=False, **options)]
    (out / SUMMARY).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tests
