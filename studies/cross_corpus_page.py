"""The cross-corpus summary page (``reports/SUMMARY.md``) rendered from ``CorpusReport``s.

A headline table (per corpus and method: the answer score, evidence recall, model seconds and
LLM calls per answer, marked where the paired test against the baseline passes Holm), the
reading generated from the same tests (``cross_corpus_reading``), then per corpus the quality,
per-hop, head-to-head, cost, index-cost and test tables. Same reports, same bytes (the pages
that quote it, docs/results.md and the README's summary, are ``results_pages``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from graphrag.settings import repo_relative
from studies.cross_corpus import (
    BASELINE,
    COST_METRICS,
    PER_THOUSAND,
    CorpusReport,
    answer_metric,
    pooled_pairwise,
    significant,
)
from studies.cross_corpus_reading import reading_section
from workbench.eval import stats
from workbench.eval.hops import ALL_HOPS, hop_shares
from workbench.report.headline import TUNING_SET, is_tuning_set
from workbench.report.hop_tables import shares_table
from workbench.report.judged import discrimination_row, ragas_cell
from workbench.report.sections import (
    JUDGE_FIELD,
    RUN_FIELDS,
    judge_text,
    pairwise_section,
    win_rate_lines,
)
from workbench.report.tables import baseline_tests_table, cell, md, number, table


def _marker(report: CorpusReport, metric: str, method: str) -> str:
    rows = significant(report)
    rows = rows[(rows["metric"] == metric) & (rows["method"] == method)]
    if rows.empty:
        return ""
    return " ▲" if float(rows["mean_diff"].iloc[0]) > 0 else " ▼"


def _cost_summary(report: CorpusReport) -> pd.DataFrame:
    columns = [c for c, _ in COST_METRICS if c in report.analysis.records]
    options = {"n_resamples": report.analysis.n_resamples, "seed": report.analysis.seed}
    return stats.summarize(report.analysis.records, columns, by=("method",), **options)


def _cost_cell(summary: pd.DataFrame, method: str, column: str) -> str:
    row = stats.summary_row(summary, method=method)
    if row is None or f"{column}_n" not in row:
        return "—"
    mean, low, high, n = (row[f"{column}_{part}"] for part in ("mean", "low", "high", "n"))
    return f"{_short(mean)} [{_short(low)}, {_short(high)}] (n={int(n)})"


def _short(value: float) -> str:
    """Return a cost with one decimal (costs are counts and seconds, not shares)."""
    return "—" if value is None or math.isnan(value) else f"{float(value):,.1f}"


def headline_section(reports: Sequence[CorpusReport], baseline: str) -> list[str]:
    rows = []
    tuning_note = ""
    if any(is_tuning_set(report.analysis.records) for report in reports):
        tuning_note = (
            " Each corpus's rows are its test questions; one marked (tuning set) has dev "
            f"questions only, a {TUNING_SET}."
        )
    for report in reports:
        costs = _cost_summary(report)
        answer = answer_metric(report)
        tuning = is_tuning_set(report.analysis.records)
        for method in report.analysis.methods:
            row = stats.summary_row(report.analysis.by_method, method=method)
            quality = [
                cell(row, m) + _marker(report, m, method)
                if m in report.quality
                else "— (not applicable)"
                for m in (answer, "evidence_recall")
            ]
            rows.append(
                [
                    md(report.name) + (" (tuning set)" if tuning else ""),
                    md(method),
                    answer,
                    *quality,
                    _cost_cell(costs, method, "model_seconds")
                    + _marker(report, "model_seconds", method),
                    _cost_cell(costs, method, "llm_calls") + _marker(report, "llm_calls", method),
                ]
            )
    header = [
        "Corpus",
        "Method",
        "Answer metric",
        "Answer score",
        "Evidence recall",
        "Model seconds / answer",
        "LLM calls / answer",
    ]
    return [
        "## Headline",
        "",
        "Mean [95% bootstrap CI] (n). ▲ / ▼: higher / lower than "
        f"{baseline} by a paired Wilcoxon test, Holm-adjusted over the report's declared test "
        "family (quality; see each corpus's tests) or over the cost family (cost), "
        f"p < {number(reports[0].analysis.alpha)}; no mark: no significant difference."
        + tuning_note,
        "",
        *table(header, rows),
    ]


def _demoted(lines: list[str]) -> list[str]:
    """Return report section lines one heading level deeper (## becomes ###)."""
    return [f"#{line}" if line.startswith("#") else line for line in lines]


def _index_row(cost: dict[str, Any]) -> list[str]:
    tokens = float(cost.get("corpus_tokens") or 0)

    def per(value: float) -> str:
        return _short(PER_THOUSAND * float(value) / tokens) if tokens else "—"

    spent = cost["prompt_tokens"] + cost["completion_tokens"]
    return [
        md(cost["method"]),
        str(cost.get("documents")),
        f"{int(tokens):,}",
        f"{cost['llm_calls']:,} ({per(cost['llm_calls'])})",
        f"{spent:,} ({per(spent)})",
        f"{_short(cost['model_seconds'])} ({per(cost['model_seconds'])})",
    ]


def _index_lines(costs: Sequence[dict[str, Any]]) -> list[str]:
    if not costs:
        return ["No index cost stored (the report predates run.json and its index is absent)."]
    rows = [_index_row(cost) for cost in costs]
    header = [
        "Index mode",
        "Documents",
        "Corpus tokens",
        "LLM calls (per 1,000 tokens)",
        "Prompt + completion tokens (per 1,000)",
        "Model seconds (per 1,000)",
    ]
    return [
        *table(header, rows),
        "",
        "Corpus tokens are the text units' tokens (chunk overlap included). Model seconds are "
        "the recorded LLM time (a replayed call keeps the seconds it took live).",
    ]


def corpus_section(report: CorpusReport, baseline: str) -> list[str]:
    analysis = report.analysis
    meta = report.meta
    shown = {key: meta[key] for key, _ in RUN_FIELDS if key in meta}
    if isinstance(shown.get(JUDGE_FIELD), dict):
        shown[JUDGE_FIELD] = judge_text(shown[JUDGE_FIELD])
    described = [
        f"- **{label}:** {md(shown[key])}"
        for key, label in RUN_FIELDS
        if key in shown and not isinstance(shown[key], dict)
    ]
    # every RAGAS metric is shown, the ones not tested (judge not informative) too
    shown = [*report.quality, *(m for m in report.left_out if m not in report.quality)]
    quality_rows = [
        [
            md(m),
            *(
                (
                    ragas_cell(analysis, analysis.by_method, metric, method=m)
                    if metric in analysis.ragas_metrics
                    else cell(stats.summary_row(analysis.by_method, method=m), metric)
                )
                + _marker(report, metric, m)
                for metric in shown
            ),
        ]
        for m in analysis.methods
    ]
    if analysis.ragas_metrics:
        quality_rows.append(discrimination_row(analysis, shown, lead=1))
    costs = _cost_summary(report)
    cost_rows = [
        [md(m), *(_cost_cell(costs, m, c) + _marker(report, c, m) for c, _ in COST_METRICS)]
        for m in analysis.methods
    ]
    lines = [
        f"## {md(report.name)}",
        "",
        f"- **Report:** {repo_relative(report.folder)}",
        *described,
        *([f"- {analysis.headline}"] if analysis.headline else []),
        "",
        "### Quality",
        "",
        *table(["Method", *shown], quality_rows),
    ]
    if report.left_out:
        lines += [
            "",
            "RAGAS metrics shown but not tested, their judge not shown informative on planted "
            "controls: " + ", ".join(f"{m} ({v})" for m, v in report.left_out.items()) + ".",
        ]
    if report.hops is not None:
        shares = hop_shares(report.hops, analysis.n_resamples, analysis.seed)
        lines += ["", "### Evidence per hop", "", *shares_table(shares)]
    if analysis.win_rates is not None:
        lines += ["", *_demoted(pairwise_section(analysis))]
    lines += [
        "",
        "### Cost per answer",
        "",
        *table(["Method", *(label for _, label in COST_METRICS)], cost_rows),
        "",
        "### Index cost",
        "",
        *_index_lines([c for c in [report.index_cost, *report.other_index_costs] if c]),
        "",
        f"### Differences from {baseline}",
        "",
        f"Quality, the report's own family (its tests.csv): {report.family.declaration()}",
        "",
        *baseline_tests_table(report.family.tests, baseline, report.analysis.alpha),
        "",
        f"Cost, a family of its own: {report.cost_family.declaration()}",
        "",
        *baseline_tests_table(report.cost_family.tests, baseline, report.analysis.alpha),
    ]
    return lines


def pooled_section(reports: Sequence[CorpusReport]) -> list[str]:
    """The head-to-head pooled over the question sets judged on one index (none when no
    index has two)."""
    lines: list[str] = []
    for pooled in pooled_pairwise(reports):
        lines += [
            "## Head-to-head, question sets pooled",
            "",
            f"The pairwise judgements of {', '.join(pooled.reports)} (index "
            f"{md(pooled.index)}) taken together: {pooled.n_questions} distinct questions; "
            "a judgement two sets share (the same question, pair, criterion and ratings) "
            "counts once. Read as each report's own head-to-head section.",
            "",
            *win_rate_lines(pooled.win_rates),
        ]
    return lines


def render_summary(
    reports: Sequence[CorpusReport],
    baseline: str = BASELINE,
    command: str | None = None,
    retrieval: Sequence[list[str]] = (),
) -> str:
    """Return the cross-corpus summary page (the same reports give the same bytes)."""
    alpha = reports[0].analysis.alpha
    header = [
        "# Cross-corpus summary",
        "",
        "Every mean is printed with its 95% percentile-bootstrap CI and n. Differences are "
        f"against {baseline}: a paired Wilcoxon signed-rank test per method, metric and corpus "
        "over the questions both answered. Quality differences are each report's own declared "
        f"test family (every method against {baseline} on every metric neither saturated nor "
        "judged by a judge not shown informative, Holm-adjusted together), read from its "
        "tests.csv, so they carry the p-values of the report; cost differences are a second "
        "family per corpus. A difference is called significant only when the adjusted p < "
        f"{number(alpha)}. Quality: judge-free metrics that apply to the set, "
        "RAGAS only where its judge separated real answers from planted controls, "
        f"{ALL_HOPS} = every hop's paragraph read (multi-hop sets).",
    ]
    if command:
        header += ["", f"Generated by `{command}`."]
    sections = [
        header,
        headline_section(reports, baseline),
        reading_section(reports, baseline),
        *([pooled] if (pooled := pooled_section(reports)) else []),
        *(corpus_section(report, baseline) for report in reports),
        *retrieval,
    ]
    return "\n\n".join("\n".join(lines) for lines in sections) + "\n"
