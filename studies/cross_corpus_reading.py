"""The summary page's generated reading: per corpus, what the tests against the baseline say.

A difference is claimed only when its paired test passes Holm's correction (the tests of
``cross_corpus.compare_with_baseline``); everything else is described as a mean. The page
(``cross_corpus_page``) shows the same tests as tables, formatted by the same
``tables`` helpers, so sentence and table agree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from graphrag.llm.usage import UNKNOWN_HOST
from studies.cross_corpus import (
    COST_METRICS,
    CorpusReport,
    answer_metric,
    method_means,
    significant,
)
from studies.report_reading import p_phrase, partial_methods, smallest_p
from workbench.eval import stats
from workbench.eval.hops import hop_shares
from workbench.eval.stats import frontier
from workbench.report.headline import CAVEAT, is_tuning_set
from workbench.report.tables import md, number, p_text, signed, with_ci


def _claim(row: Any, baseline: str) -> str:
    direction = "higher" if row.mean_diff > 0 else "lower"
    return (
        f"{md(row.method)} {direction} than {baseline} on {row.metric} "
        f"({with_ci(row.mean_diff, row.ci_low, row.ci_high, signed)}, n={int(row.n)}, "
        f"Holm {p_phrase(row.p_holm)})"
    )


def _quality_reading(report: CorpusReport, baseline: str) -> list[str]:
    """Return what the quality tests against the baseline support, and how close the rest is."""
    family = report.family
    tests = family.tests
    tested = tests[tests["p_value"].notna()]
    if tested.empty:
        return [f"No quality difference from {baseline} could be tested (fewer than 5 pairs)."]
    passed = tested[tested["p_holm"] < report.analysis.alpha]
    parts = [
        f"{len(passed)} of the {len(tested)} tests of the report's family ("
        f"{len(family.methods)} methods × {len(family.metrics)} metrics against {baseline}) "
        "pass Holm's correction"
        + (
            ": " + "; ".join(_claim(r, baseline) for r in passed.itertuples()) + "."
            if len(passed)
            else ", so none is claimed."
        )
    ]
    rest = tested[tested["p_holm"] >= report.analysis.alpha]
    if len(rest):
        nearest = rest.sort_values("p_value", kind="stable").iloc[0]
        which = "all" if passed.empty else "the other"
        diff = with_ci(nearest.mean_diff, nearest.ci_low, nearest.ci_high, signed)
        parts.append(
            f"Not significant: {which} {len(rest)}; the nearest is {md(nearest.method)} on "
            f"{nearest.metric} ({diff}, {p_phrase(nearest.p_value)}, Holm "
            f"{p_phrase(nearest.p_holm)})."
        )
    n = int(tested["n"].max())
    floor = min(1.0, smallest_p(n) * len(tested))
    if floor >= report.analysis.alpha:
        parts.append(
            f"With {n} questions and {len(tested)} tests in the family no difference can pass: "
            f"the smallest Holm-corrected p is {p_text(floor)}."
        )
    if family.saturated:
        parts.append(f"Saturated, not tested: {', '.join(family.saturated)}.")
    untested = int(tests["p_value"].isna().sum())
    if untested:
        parts.append(f"{untested} comparison(s) had fewer than {stats.MIN_PAIRS} pairs: no test.")
    return parts


def _cost_reading(report: CorpusReport, baseline: str) -> list[str]:
    """Return the cost per answer relative to the baseline and the cost differences that pass."""
    parts = []
    for column, label in (("model_seconds", "Model seconds"), ("context_tokens", "Context tokens")):
        means = method_means(report, column)
        base = means.get(baseline, math.nan)
        if math.isnan(base) or base <= 0:
            continue
        ratios = ", ".join(
            f"{md(m)} {means[m] / base:.1f}×" for m in report.analysis.methods if m != baseline
        )
        parts.append(f"{label} per answer relative to {baseline}: {ratios}.")
        if column == "model_seconds":
            parts += _hosts_reading(report)
    labels = dict(COST_METRICS)
    passed = significant(report)
    passed = passed[passed["metric"].isin(labels)]
    tested = report.tests[report.tests["metric"].isin(labels) & report.tests["p_value"].notna()]
    if tested.empty:
        return parts
    groups = []
    for word, sign in (("more", 1), ("fewer", -1)):
        for metric, label in COST_METRICS:
            rows = passed[(passed["metric"] == metric) & (passed["mean_diff"] * sign > 0)]
            if len(rows):
                groups.append(f"{word} {label}: {', '.join(map(md, rows['method']))}")
    parts.append(
        f"{len(passed)} of {len(tested)} cost differences pass Holm's correction over the "
        "cost family" + (f" ({'; '.join(groups)})." if groups else ".")
    )
    return parts


def _hosts_reading(report: CorpusReport) -> list[str]:
    """Return a warning when the answers' model seconds were not all recorded on one known
    machine (records without ``model_hosts`` predate it: their machine is unknown)."""
    records = report.analysis.records
    answered = records[records["answer_error"].isna()] if "answer_error" in records else records
    cells = (
        answered["model_hosts"].fillna("").replace("", UNKNOWN_HOST)
        if "model_hosts" in answered
        else pd.Series(UNKNOWN_HOST, index=answered.index)
    )
    hosts_of = [set(cell.split("; ")) for cell in cells]
    hosts = set().union(*hosts_of)
    if len(hosts) == 1 and UNKNOWN_HOST not in hosts:
        return []
    known = sorted(hosts - {UNKNOWN_HOST})
    unknown = sum(UNKNOWN_HOST in h for h in hosts_of)
    where = []
    if unknown:
        where.append(
            f"{unknown} of {len(answered)} answers' calls on machines the cache does not name "
            "(recorded before it did)"
        )
    if known:
        where.append(f"calls on {len(known)} named machine(s): {'; '.join(known)}")
    return [
        f"Model seconds are as recorded, {' and '.join(where)}: ratios between methods "
        "recorded in different sessions may compare different machines; tokens and calls "
        "do not depend on the machine."
    ]


def _frontier_reading(report: CorpusReport) -> list[str]:
    metric = "evidence_recall" if "evidence_recall" in report.quality else answer_metric(report)
    costs = method_means(report, "model_seconds")
    qualities = method_means(report, metric)
    front = frontier(costs, qualities)
    if not front:
        return []
    behind = [m for m in report.analysis.methods if m not in front]
    return [
        f"On the {metric} / model-seconds frontier (means, not a test): "
        f"{', '.join(map(md, front))}"
        + (f"; dominated: {', '.join(map(md, behind))}." if behind else ".")
    ]


def _hops_reading(report: CorpusReport) -> list[str]:
    if report.hops is None:
        return []
    shares = hop_shares(report.hops, report.analysis.n_resamples, report.analysis.seed)
    means = shares.pivot(index="method", columns="hop", values="found_mean")
    means = means.reindex(index=pd.unique(shares["method"]), columns=sorted(means.columns))
    per_method = [f"{md(m)} " + " / ".join(map(number, row)) for m, row in means.iterrows()]
    positions = [int(h) for h in means.columns]
    header = " / ".join(f"hop {h}" for h in positions)
    return [f"Share of hop paragraphs read ({header}): {'; '.join(per_method)}."]


def reading_section(reports: Sequence[CorpusReport], baseline: str) -> list[str]:
    lines = [
        "## Reading",
        "",
        "Generated from the tables below. A difference is claimed only when its paired test "
        "passes Holm's correction; everything else is described as a mean, not a difference.",
        "",
    ]
    for report in reports:
        parts = [
            *_quality_reading(report, baseline),
            *_hops_reading(report),
            *_cost_reading(report, baseline),
            *_frontier_reading(report),
        ]
        if report.left_out:
            parts.append(
                "RAGAS left out of the tests, shown in the quality table (judge not shown "
                "informative on planted controls): "
                + ", ".join(f"{m} ({verdict})" for m, verdict in report.left_out.items())
                + "."
            )
        caveat = report.analysis.headline.partition(CAVEAT)[2]
        if caveat:
            parts.append(CAVEAT + caveat)
        lines.append(
            f"- **{md(report.name)}** ({_count(report.n_questions, 'question')}"
            f"{' (tuning set)' if is_tuning_set(report.analysis.records) else ''}, "
            f"{len(report.analysis.methods)} methods{_partial_methods(report)}): " + " ".join(parts)
        )
    return lines


def _partial_methods(report: CorpusReport) -> str:
    """Return "; drift on 10 of them" for the methods answering fewer than every question
    (recorded on the first N only: ``eval --method-limits``)."""
    fewer = [f"{md(m)} on {n}" for m, n in partial_methods(report.analysis.records).items()]
    return f"; {', '.join(fewer)} of them" if fewer else ""


def _count(n: int, noun: str) -> str:
    """Return "1 question" or "9 questions"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
