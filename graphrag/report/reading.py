"""The "Reading" section of an evaluation summary: what the numbers do and do not support.

Generated from the same ``Analysis`` as the tables, so it cannot drift from them: differences
that survive Holm (or the nearest miss), the smallest p this many questions allow, and the
metrics that cannot separate methods here (saturated, or a judge not validated).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from graphrag.eval import judge_validity, stats
from graphrag.eval.stats import summary_row
from graphrag.report.analysis import Analysis, failed_in, headline_lines, partial_methods
from graphrag.report.tables import cell, md, number, p_phrase, p_text, signed, with_ci

SATURATED_SHARE = 0.8  # a metric is saturated when this share of its scores is 1.000
CEILING = 1.0 - 1e-9
FLOOR_WORTH_SAYING = 0.001  # below it, the test's floor does not limit what can be called


@dataclass(frozen=True)
class _Claim:
    """A difference the paired test supports, stated winner first."""

    winner: str
    loser: str
    diff: float
    ci_low: float
    ci_high: float
    n: int
    p_holm: float


def _supported(comparisons: pd.DataFrame) -> list[_Claim]:
    """Return the supported differences of one metric, each oriented winner minus loser."""
    claims = []
    for row in comparisons.itertuples(index=False):
        if row.verdict in (stats.NO_DIFFERENCE, stats.TOO_FEW_PAIRS):
            continue
        if row.mean_diff > 0:
            orientation = (row.method_a, row.method_b, row.mean_diff, row.ci_low, row.ci_high)
        else:
            orientation = (row.method_b, row.method_a, -row.mean_diff, -row.ci_high, -row.ci_low)
        claims.append(_Claim(*orientation, n=int(row.n), p_holm=float(row.p_holm)))
    return claims


def _tested(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Return the method pairs a paired test was run on."""
    if comparisons.empty:
        return comparisons
    return comparisons[comparisons["verdict"] != stats.TOO_FEW_PAIRS]


def _passes_before_holm_only(analysis: Analysis, comparisons: pd.DataFrame) -> int:
    tested = _tested(comparisons)
    return int(((tested["p_value"] < analysis.alpha) & (tested["p_holm"] >= analysis.alpha)).sum())


def _saturation(analysis: Analysis, metric: str) -> tuple[int, int]:
    """Return (scores at 1.000, scores) of a metric over all records."""
    scores = pd.to_numeric(analysis.records[metric], errors="coerce").dropna()
    return int((scores >= CEILING).sum()), len(scores)


def _saturated(analysis: Analysis, metric: str) -> bool:
    top, total = _saturation(analysis, metric)
    return total > 0 and top >= SATURATED_SHARE * total


def _saturation_note(analysis: Analysis, metric: str, what: str) -> list[str]:
    """Return the sentence saying ``what`` (the judge, the metric) is saturated, if it is."""
    if not _saturated(analysis, metric):
        return []
    top, total = _saturation(analysis, metric)
    return [
        f"{top} of {total} scores are 1.000: {what} is saturated here, so equal means say little."
    ]


def _nearest_miss(analysis: Analysis, comparisons: pd.DataFrame) -> list[str]:
    """Return how far the tests are from calling a difference: the nearest pair and the floor."""
    tested = _tested(comparisons)
    if tested.empty:
        return []
    order = tested.assign(size=-tested["mean_diff"].abs())
    nearest = order.sort_values(["p_value", "size"], kind="stable").iloc[0]
    parts = [
        f"Nearest: {md(nearest.method_a)} vs {md(nearest.method_b)}, mean diff "
        f"{with_ci(nearest.mean_diff, nearest.ci_low, nearest.ci_high, signed)} "
        f"(n={int(nearest.n)}), {p_phrase(nearest.p_value)} before and "
        f"{p_phrase(nearest.p_holm)} after Holm over {len(tested)} pair(s)."
    ]
    before_only = _passes_before_holm_only(analysis, comparisons)
    if before_only:
        parts.append(
            f"{before_only} pair(s) have p < {number(analysis.alpha)} before the correction only."
        )
    n, floor = _holm_floor(tested)
    if floor >= analysis.alpha:
        parts.append(
            f"With {n} pairs and {len(tested)} tests no difference can pass the criterion: the "
            f"smallest p after Holm is {_p_value(floor)}."
        )
    return parts


def _holm_floor(tested: pd.DataFrame) -> tuple[int, float]:
    """Return (most pairs of a test, the smallest Holm p the tests could give on them)."""
    n = int(tested["n"].max())
    return n, min(1.0, stats.smallest_p(n) * len(tested))


def _power_line(analysis: Analysis) -> list[str]:
    """Return the overview line on the smallest p the design allows, when it limits anything."""
    families = [t for t in (_tested(analysis.comparisons[m]) for m in analysis.metrics) if len(t)]
    if not families:
        return []
    widest = max(families, key=lambda t: (int(t["n"].max()), len(t)))
    n, floor = _holm_floor(widest)
    if floor < FLOOR_WORTH_SAYING:
        return []
    return [
        f"- **Power**: on {n} questions the smallest p the paired test can give is "
        f"{_p_value(stats.smallest_p(n))} (all {n} differences on one side), {_p_value(floor)} "
        f"after Holm over {len(widest)} pairs; a difference is called only below "
        f"{number(analysis.alpha)}."
    ]


def _p_value(value: float) -> str:
    """Return a p-value for a sentence: "0.004" or "below 0.001"."""
    text = p_text(value)
    return f"below {text[1:]}" if text.startswith("<") else text


def _judge_notes(analysis: Analysis, metric: str) -> list[str]:
    """Return what the reader must know about the judge on ``metric``: saturation, validity."""
    notes = _saturation_note(analysis, metric, "the judge")
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


def _best(analysis: Analysis, metric: str) -> tuple[list[str], str]:
    """Return the methods with the highest mean and the sentence naming them, among the
    methods asked every question (see ``analysis.partial_methods``)."""
    summary = analysis.by_method
    partial = partial_methods(analysis.records)
    scored = summary[(summary[f"{metric}_n"] > 0) & ~summary["method"].astype(str).isin(partial)]
    best_mean = scored[f"{metric}_mean"].max()
    best = [str(m) for m in scored.loc[scored[f"{metric}_mean"] == best_mean, "method"]]
    if len(best) == 1:
        row = summary_row(summary, method=best[0])
        return best, f"highest mean: {md(best[0])} {cell(row, metric)}."
    return best, f"highest mean shared by {', '.join(map(md, best))} at {number(best_mean)}."


def _claims(analysis: Analysis, metric: str, best: list[str]) -> list[str]:
    """Return the differences the tests support, or how far they are from supporting one."""
    comparisons = analysis.comparisons[metric]
    supported = _supported(comparisons)
    if not len(comparisons):
        return ["Only one method was evaluated, so there is nothing to compare."]
    if not supported:
        return [
            "No difference between methods is supported by the paired tests (criterion: "
            f"Holm-corrected p < {number(analysis.alpha)}); the ordering of the means may be "
            "chance.",
            *_nearest_miss(analysis, comparisons),
        ]
    parts = [
        "Supported by the paired tests: "
        + "; ".join(
            f"{md(c.winner)} > {md(c.loser)} ({with_ci(c.diff, c.ci_low, c.ci_high, signed)}, "
            f"n={c.n}, Holm {p_phrase(c.p_holm)})"
            for c in supported
        )
        + "."
    ]
    if len(best) == 1:
        separated = {c.loser for c in supported if c.winner == best[0]}
        summary = analysis.by_method
        scored = set(summary.loc[summary[f"{metric}_n"] > 0, "method"])
        unseparated = [
            m for m in analysis.methods if m != best[0] and m not in separated and m in scored
        ]
        if unseparated:
            parts.append(
                f"The tests do not separate {md(best[0])} from {', '.join(map(md, unseparated))}."
            )
    return parts


def _reading_line(analysis: Analysis, metric: str) -> str:
    summary = analysis.by_method
    if not (summary[f"{metric}_n"] > 0).any():
        return f"- **{metric}**: no method has any score (n=0 everywhere), so nothing can be read."
    best, sentence = _best(analysis, metric)
    parts = [sentence]
    unscored = [str(m) for m in summary.loc[summary[f"{metric}_n"] == 0, "method"]]
    if unscored and metric in analysis.ragas_metrics:
        parts.append(f"No scores for {', '.join(map(md, unscored))}.")
    elif unscored:
        parts.append(f"Does not apply to {', '.join(map(md, unscored))} (n=0).")
    parts += _claims(analysis, metric, best)
    comparisons = analysis.comparisons[metric]
    too_few = int((comparisons["verdict"] == stats.TOO_FEW_PAIRS).sum()) if len(comparisons) else 0
    if too_few:
        parts.append(f"{too_few} method pair(s) had fewer than {stats.MIN_PAIRS} scored pairs.")
    if metric in analysis.ragas_metrics:
        failed = int(summary[f"{metric}_failed"].sum())
        if failed:
            total = int(failed + summary[f"{metric}_n"].sum())
            parts.append(
                f"{failed} of {total} answers have no score (judge failures or failed answers); "
                "means are over scored answers only."
            )
        parts += _judge_notes(analysis, metric)
    else:
        parts += _saturation_note(analysis, metric, "the metric")
        failed = failed_in(analysis)
        if failed:
            parts.append(f"{failed} failed answer(s) are scored 0 here.")
    return f"- **{metric}**: " + " ".join(parts)


def _overview(analysis: Analysis) -> list[str]:
    """Return the counts over every metric: differences called, near misses, weak metrics."""
    tested = [_tested(analysis.comparisons[m]) for m in analysis.metrics]
    n_tested = sum(len(t) for t in tested)
    if not n_tested:
        return []
    called = sum(len(_supported(analysis.comparisons[m])) for m in analysis.metrics)
    before_only = sum(
        _passes_before_holm_only(analysis, analysis.comparisons[m]) for m in analysis.metrics
    )
    lines = [
        f"- **Overall**: {called} of {n_tested} tested method pairs differ after Holm's "
        f"correction (p < {number(analysis.alpha)}, one family per metric); {before_only} more "
        "pass before the correction only."
    ]
    lines += _power_line(analysis)
    saturated = [m for m in analysis.metrics if _saturated(analysis, m)]
    if saturated:
        lines.append(f"- **Saturated** (≥ 80% of scores at 1.000): {', '.join(saturated)}.")
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
        "Generated from the tables above: which differences survive Holm's correction, how far "
        "the others are from it, and which metrics cannot separate the methods here.",
        "",
        *_overview(analysis),
        *[_reading_line(analysis, metric) for metric in analysis.metrics],
    ]
