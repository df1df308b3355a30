"""The "Reading" section of an evaluation summary, generated from the same numbers as the tables."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from graphrag.eval import judge_validity, stats
from graphrag.eval.analysis import Analysis, failed_in
from graphrag.eval.stats import summary_row
from graphrag.eval.tables import cell, md, number, p_phrase, signed


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


def _reading_line(analysis: Analysis, metric: str) -> str:
    summary = analysis.by_method
    scored = summary[summary[f"{metric}_n"] > 0]
    if scored.empty:
        return f"- **{metric}**: no method has any score (n=0 everywhere), so nothing can be read."
    best_mean = scored[f"{metric}_mean"].max()
    best = [str(m) for m in scored.loc[scored[f"{metric}_mean"] == best_mean, "method"]]
    if len(best) == 1:
        parts = [
            f"highest mean: {md(best[0])} {cell(summary_row(summary, method=best[0]), metric)}."
        ]
    else:
        parts = [f"highest mean shared by {', '.join(map(md, best))} at {number(best_mean)}."]
    unscored = [str(m) for m in summary.loc[summary[f"{metric}_n"] == 0, "method"]]
    if unscored and metric in analysis.ragas_metrics:
        parts.append(f"No scores for {', '.join(map(md, unscored))}.")
    elif unscored:
        parts.append(f"Does not apply to {', '.join(map(md, unscored))} (n=0).")
    comparisons = analysis.comparisons[metric]
    supported = _supported(comparisons)
    if supported:
        claims = [
            f"{md(c.winner)} > {md(c.loser)} ({signed(c.diff)} "
            f"[{signed(c.ci_low)}, {signed(c.ci_high)}], n={c.n}, Holm {p_phrase(c.p_holm)})"
            for c in supported
        ]
        parts.append("Supported by the paired tests: " + "; ".join(claims) + ".")
        if len(best) == 1:
            separated = {c.loser for c in supported if c.winner == best[0]}
            unseparated = [
                m
                for m in analysis.methods
                if m != best[0] and m not in separated and m in set(scored["method"])
            ]
            if unseparated:
                parts.append(
                    f"The tests do not separate {md(best[0])} from "
                    f"{', '.join(map(md, unseparated))}."
                )
    elif len(comparisons):
        parts.append(
            "No difference between methods is supported by the paired tests (criterion: "
            f"Holm-corrected p < {number(analysis.alpha)}); the ordering of the means may be "
            "chance."
        )
    else:
        parts.append("Only one method was evaluated, so there is nothing to compare.")
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
        failed = failed_in(analysis)
        if failed:
            parts.append(f"{failed} failed answer(s) are scored 0 here.")
    return f"- **{metric}**: " + " ".join(parts)


def _judge_notes(analysis: Analysis, metric: str) -> list[str]:
    """Return what the reader must know about the judge on ``metric``: saturation, validity."""
    notes = []
    scores = pd.to_numeric(analysis.records[metric], errors="coerce").dropna()
    top = int((scores >= 1.0 - 1e-9).sum())
    if len(scores) and top >= 0.8 * len(scores):
        notes.append(
            f"{top} of {len(scores)} scores are 1.000: the judge is saturated here, so equal "
            "means say little."
        )
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


def reading_section(analysis: Analysis) -> list[str]:
    return [
        "## Reading",
        "",
        "Generated from the tables above: the best method by mean, and only the differences "
        "the paired tests support.",
        "",
        *[_reading_line(analysis, metric) for metric in analysis.metrics],
    ]
