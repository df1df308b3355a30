"""The "Reading" section of our committed evaluation summaries: what the numbers do and do
not support, and the table of complete answers only.

Generated from the same ``Analysis`` as the report's tables (``workbench.report``), so it cannot
drift from them: the differences from the baseline that survive Holm over the report's one
test family (or the nearest miss), the smallest p this many questions allow, and the metrics
that cannot separate methods here (saturated, or a judge not shown informative). The tables
already say each of these; the reading puts them in sentences for the reports, the results
page and notebook 4 (``report_pages`` adds it to a report folder).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from workbench.eval import judge_validity, stats
from workbench.eval.significance import saturation
from workbench.eval.stats import summary_row
from workbench.report.analysis import Analysis, failed_in, headline_lines, rows_of
from workbench.report.degraded import degraded_answers, degraded_in, failed_answers, is_degraded
from workbench.report.judged import judged
from workbench.report.tables import cell, count, md, number, p_text, signed, table, with_ci

FLOOR_WORTH_SAYING = 0.001  # below it, the test's floor does not limit what can be called


def smallest_p(n: int) -> float:
    """Return the smallest p the paired test can give on ``n`` pairs: with few questions, no
    difference may be able to pass Holm's correction."""
    if n < stats.MIN_PAIRS:
        return math.nan
    return stats.paired_test(np.arange(1.0, n + 1.0), np.zeros(n)).p_value


def p_phrase(value: float) -> str:
    """Return "p = 0.028" or "p < 0.001" for prose."""
    text = p_text(value)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def partial_methods(records: pd.DataFrame) -> dict[str, int]:
    """Return the methods asked fewer questions than the run has (``--method-limits``), with
    how many: their means are over other questions, only their paired tests compare them."""
    asked = records.groupby("method", sort=False)["question_id"].nunique()
    every = records["question_id"].nunique()
    return {str(method): int(n) for method, n in asked.items() if n < every}


def complete_answers(records: pd.DataFrame) -> pd.DataFrame:
    """Return the records of complete answers: neither failed nor degraded."""
    return records[~failed_answers(records) & ~is_degraded(records)]


def complete_scores_section(analysis: Analysis) -> list[str]:
    """Return the ``Scores by method, complete answers only`` table when some answer is
    degraded, else one line saying none was."""
    records = analysis.records
    if not degraded_answers(records):
        return [
            "No answer was degraded (no dropped map batch or draft, DRIFT follow-up, lazy "
            "report or cut report text): the scores above are over complete answers."
        ]
    complete = complete_answers(records)
    options = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    summary = stats.summarize(complete, analysis.metrics, by=("method",), **options)
    rows = []
    for method in analysis.methods:
        cells = [
            cell(summary_row(summary, method=method), m, ragas=m in analysis.ragas_metrics)
            for m in analysis.metrics
        ]
        rows.append([md(method), str(int((complete["method"] == method).sum())), *cells])
    return [
        "## Scores by method, complete answers only",
        "",
        "The table above again, over the answers that were neither failed nor degraded (a "
        "degraded answer was given after losing a step: see Degraded answers). Where a "
        "method's scores differ much between the two tables, its degraded answers carry them.",
        "",
        *table(["Method", "Complete answers", *analysis.metrics], rows),
    ]


def degraded_reading(analysis: Analysis) -> list[str]:
    """Return the Reading's line on degraded answers (none when no answer was degraded)."""
    records = analysis.records
    total = degraded_answers(records)
    if not total:
        return []
    by_method = [
        f"{method} {n}"
        for method in analysis.methods
        if (n := degraded_in(analysis, method=method))
    ]
    return [
        f"- **Degraded answers**: {total} of {len(records)} ({', '.join(by_method)}); the "
        "means include them, the table of complete answers only leaves them out."
    ]


def _tested(analysis: Analysis, metric: str | None = None) -> pd.DataFrame:
    """Return the family's tests that were run (enough pairs), of one metric or of all."""
    tests = analysis.family.tests
    if metric is not None:
        tests = tests[tests["metric"] == metric]
    return tests[tests["p_value"].notna()]


def _claim(row: Any, baseline: str) -> str:
    return (
        f"{md(row.method)} {'>' if row.mean_diff > 0 else '<'} {md(baseline)} "
        f"({with_ci(row.mean_diff, row.ci_low, row.ci_high, signed)}, n={int(row.n)}, "
        f"Holm {p_phrase(row.p_holm)})"
    )


def _saturation_note(analysis: Analysis, metric: str, what: str) -> list[str]:
    """Return the sentence saying ``what`` (the judge, the metric) is saturated, if it is."""
    level = saturation(analysis.records[[metric]])
    if not level.saturated:
        return []
    return [f"{level.render()}: {what} is saturated here, so equal means say little."]


def _holm_floor(analysis: Analysis) -> tuple[int, float]:
    """Return (most pairs of a test, the smallest Holm p the family could give on them)."""
    tested = _tested(analysis)
    n = int(tested["n"].max())
    return n, min(1.0, smallest_p(n) * len(tested))


def _nearest_miss(analysis: Analysis, tested: pd.DataFrame) -> list[str]:
    """Return how far the metric's tests are from calling a difference, and the floor."""
    order = tested.assign(size=-tested["mean_diff"].abs())
    nearest = order.sort_values(["p_value", "size"], kind="stable").iloc[0]
    family = analysis.family
    parts = [
        f"Nearest: {md(nearest.method)} − {md(family.baseline)} "
        f"{with_ci(nearest.mean_diff, nearest.ci_low, nearest.ci_high, signed)} "
        f"(n={int(nearest.n)}), {p_phrase(nearest.p_value)} before and "
        f"{p_phrase(nearest.p_holm)} after Holm over the family's {family.n_tests} test(s).",
        *detectable_sentence(nearest),
    ]
    n, floor = _holm_floor(analysis)
    if floor >= analysis.alpha:
        parts.append(
            f"With {n} pairs and {family.n_tests} tests no difference can pass the criterion: "
            f"the smallest p after Holm is {_p_value(floor)}."
        )
    return parts


def detectable_sentence(test: Any) -> list[str]:
    """Return what a test (a row of a tests table) could have detected, when it says."""
    mdd = float(getattr(test, "mdd", math.nan))
    if math.isnan(mdd):
        return []
    return [
        f"At {stats.POWER:.0%} power it could detect a difference of {number(mdd)} only; "
        f"{count(getattr(test, 'n_needed', math.nan))} questions would detect ±{stats.DETECT}."
    ]


def _power_line(analysis: Analysis) -> list[str]:
    """Return the overview line on the smallest p the design allows, when it limits anything."""
    if _tested(analysis).empty:
        return []
    n, floor = _holm_floor(analysis)
    if floor < FLOOR_WORTH_SAYING:
        return []
    return [
        f"- **Power**: on {n} questions the smallest p the paired test can give is "
        f"{_p_value(smallest_p(n))} (all {n} differences on one side), {_p_value(floor)} "
        f"after Holm over the family's {analysis.family.n_tests} tests; a difference is called "
        f"only below {number(analysis.alpha)}."
    ]


def _p_value(value: float) -> str:
    """Return a p-value for a sentence: "0.004" or "below 0.001"."""
    text = p_text(value)
    return f"below {text[1:]}" if text.startswith("<") else text


def _judge_notes(analysis: Analysis, metric: str) -> list[str]:
    """Return what the reader must know about the judge on ``metric``: saturation, validity."""
    # A metric the test family already lists as saturated has said so in its claim sentence.
    saturated = metric in analysis.family.saturated
    notes = [] if saturated else _saturation_note(analysis, metric, "the judge")
    judged = analysis.discrimination.get(metric)
    if judged is None:
        return notes
    if judged.verdict == judge_validity.INFORMATIVE:
        notes.append(f"The judge separated real answers from planted controls ({judged.render()}).")
    elif judged.verdict == judge_validity.NOT_INFORMATIVE:
        notes.append(
            f"The judge did not separate real answers from planted controls on this metric "
            f"({judged.render()}): its scores here are not evidence either way."
        )
    else:
        notes.append(
            f"The judge's validity on this metric is {judged.verdict}: read its scores as "
            "unvalidated."
        )
    return notes


def _best(analysis: Analysis, metric: str) -> tuple[str, dict[str, str]]:
    """Return the sentence naming the methods with the highest mean, among the methods asked
    every question (see ``analysis.partial_methods``) and, on a RAGAS metric, with every
    judgement recorded when any method has them all (a mean over the few judgements a cache
    happens to hold is no rival to one over the whole sample); and the partly recorded
    methods it left out, with their counts."""
    summary = analysis.by_method
    partial = partial_methods(analysis.records)
    scored = summary[(summary[f"{metric}_n"] > 0) & ~summary["method"].astype(str).isin(partial)]
    partly = _partly_recorded(analysis, metric)
    complete = scored[~scored["method"].astype(str).isin(partly)]
    apart = partly if len(complete) else {}
    scored = complete if len(complete) else scored
    best_mean = scored[f"{metric}_mean"].max()
    best = [str(m) for m in scored.loc[scored[f"{metric}_mean"] == best_mean, "method"]]
    if len(best) == 1:
        row = summary_row(summary, method=best[0])
        return f"highest mean: {md(best[0])} {cell(row, metric)}.", apart
    return f"highest mean shared by {', '.join(map(md, best))} at {number(best_mean)}.", apart


def _partly_recorded(analysis: Analysis, metric: str) -> dict[str, str]:
    """Return the methods with some but not all of ``metric``'s judgements recorded, each with
    its count ("n=2; 18 not recorded"); empty for a judge-free metric."""
    if metric not in analysis.ragas_metrics:
        return {}
    counts = {str(m): judged(rows_of(analysis, method=m), metric) for m in analysis.methods}
    return {
        m: f"n={c.scored}; {c.not_recorded} not recorded"
        for m, c in counts.items()
        if c.scored and c.not_recorded
    }


def _claims(analysis: Analysis, metric: str) -> list[str]:
    """Return what the family's tests of ``metric`` support, or why it has none."""
    family = analysis.family
    if len(analysis.methods) < 2:
        return ["Only one method was evaluated, so there is nothing to compare."]
    if metric in family.saturated:
        return [f"Saturated ({family.saturated[metric].render()}): listed, not tested."]
    if metric in family.untested:
        return [f"Not tested (judge verdict: {family.untested[metric]})."]
    tested = _tested(analysis, metric)
    if tested.empty:
        return [f"No method could be tested against {md(family.baseline)} on it."]
    supported = tested[tested["p_holm"] < analysis.alpha]
    if len(supported):
        return [
            f"Supported against {md(family.baseline)}: "
            + "; ".join(_claim(row, family.baseline) for row in supported.itertuples())
            + "."
        ]
    return [
        f"No difference from {md(family.baseline)} passes Holm's correction (p < "
        f"{number(analysis.alpha)}); the ordering of the means may be chance.",
        *_nearest_miss(analysis, tested),
    ]


def _unjudged_line(analysis: Analysis, metric: str) -> str:
    """Return the line of a metric no method has a score on: why, and what the judge is."""
    counts = judged(analysis.records, metric) if metric in analysis.ragas_metrics else None
    if counts is None or not counts.not_recorded:
        text = "no method has any score (n=0 everywhere), so nothing can be read."
    else:
        text = (
            f"not recorded (0 of {counts.asked} judged): the recorded cache holds none of "
            "its judgements, so nothing can be read yet."
        )
    notes = _judge_notes(analysis, metric) if counts is not None else []
    return f"- **{metric}**: " + " ".join([text, *notes])


def _unscored_sentence(analysis: Analysis, metric: str) -> list[str]:
    """Return the sentence counting a RAGAS metric's answers without a score, and why."""
    counts = judged(analysis.records, metric)
    parts = [f"{counts.unscored} judge failures or failed answers"] if counts.unscored else []
    parts += [f"{counts.not_recorded} not recorded"] if counts.not_recorded else []
    if not parts:
        return []
    return [
        f"{counts.unscored + counts.not_recorded} of {counts.asked} answers have no score "
        f"({', '.join(parts)}); means are over scored answers only."
    ]


def _reading_line(analysis: Analysis, metric: str) -> str:
    summary = analysis.by_method
    if not (summary[f"{metric}_n"] > 0).any():
        return _unjudged_line(analysis, metric)
    sentence, apart = _best(analysis, metric)
    parts = [sentence]
    if apart:
        named = ", ".join(f"{md(m)} ({n})" for m, n in apart.items())
        parts.append(f"Partly recorded, not ranked: {named}.")
    unscored = [str(m) for m in summary.loc[summary[f"{metric}_n"] == 0, "method"]]
    if unscored and metric in analysis.ragas_metrics:
        unrecorded = [
            m for m in unscored if judged(rows_of(analysis, method=m), metric).not_recorded
        ]
        why = " (not recorded)" if unrecorded == unscored else ""
        parts.append(f"No scores for {', '.join(map(md, unscored))}{why}.")
    elif unscored:
        parts.append(f"Does not apply to {', '.join(map(md, unscored))} (n=0).")
    parts += _claims(analysis, metric)
    tests = analysis.family.tests
    too_few = int((tests["metric"].eq(metric) & tests["p_value"].isna()).sum())
    if too_few:
        parts.append(
            f"{too_few} method(s) had fewer than {stats.MIN_PAIRS} pairs scored with "
            f"{md(analysis.family.baseline)}: no test."
        )
    if metric in analysis.ragas_metrics:
        parts += _unscored_sentence(analysis, metric)
        parts += _judge_notes(analysis, metric)
    else:
        failed = failed_in(analysis)
        if failed:
            parts.append(f"{failed} failed answer(s) are scored 0 here.")
    return f"- **{metric}**: " + " ".join(parts)


def _overview(analysis: Analysis) -> list[str]:
    """Return the family and its count of differences called, and the metrics not tested."""
    if len(analysis.methods) < 2:
        return []
    family = analysis.family
    tested = _tested(analysis)
    lines = [f"- **{family.declaration().replace(':', '**:', 1)}"]
    if len(tested):
        called = int((tested["p_holm"] < analysis.alpha).sum())
        before_only = int(
            ((tested["p_value"] < analysis.alpha) & (tested["p_holm"] >= analysis.alpha)).sum()
        )
        lines.append(
            f"- **Overall**: {called} of {len(tested)} tests against {md(family.baseline)} "
            f"pass Holm's correction over the family (p < {number(analysis.alpha)}); "
            f"{before_only} more pass before the correction only."
        )
    lines += _power_line(analysis)
    verdicts = {m: d.verdict for m, d in analysis.discrimination.items()}
    measured = (judge_validity.INFORMATIVE, judge_validity.NOT_INFORMATIVE)
    not_informative = [m for m, v in verdicts.items() if v == judge_validity.NOT_INFORMATIVE]
    not_measured = [m for m, v in verdicts.items() if v not in measured]
    if not_informative:
        lines.append(
            f"- **Judge not informative** on planted controls: {', '.join(not_informative)}."
        )
    if not_measured:
        lines.append(f"- **Judge not validated** on planted controls: {', '.join(not_measured)}.")
    return lines


def reading_section(analysis: Analysis) -> list[str]:
    """Return the lines of the ``## Reading`` section."""
    return [
        "## Reading",
        "",
        *headline_lines(analysis),
        "Generated from the tables above: which differences from the baseline survive Holm's "
        "correction over the report's test family, how far the others are from it, and which "
        "metrics cannot separate the methods here.",
        "",
        *_overview(analysis),
        *degraded_reading(analysis),
        *[_reading_line(analysis, metric) for metric in analysis.metrics],
    ]
