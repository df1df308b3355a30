"""How each RAGAS metric was judged, per method: scored, judge failed, not recorded (a replay
met a judge call the cache does not hold) or outside the seeded judge sample, and the
judge's measured discrimination beside the mean. A metric is never dropped for having no
score: its cell says why."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from workbench.eval.judge import NOT_RECORDED, NOT_SAMPLED
from workbench.eval.judge_validity import Discrimination
from workbench.eval.stats import summary_row
from workbench.report.analysis import Analysis, rows_of
from workbench.report.tables import MISSING, cell, with_ci

NO_ANSWER = "no answer"  # the error prefix of a metric whose answer failed (eval/runner.py)


@dataclass(frozen=True)
class Judged:
    """One metric's rows of a frame, by what became of their judgement."""

    rows: int
    scored: int
    judge_failed: int  # NaN with an error of the judge (not a failed answer)
    no_answer: int
    not_recorded: int
    not_sampled: int

    @property
    def asked(self) -> int:
        """Rows the judge was meant to score (the seeded sample's, when there is one)."""
        return self.rows - self.not_sampled

    @property
    def unscored(self) -> int:
        """Rows without a score for a reason other than the cache or the sample."""
        return self.judge_failed + self.no_answer


def judged(frame: pd.DataFrame, metric: str) -> Judged:
    values = pd.to_numeric(frame[metric], errors="coerce")
    column = f"{metric}_error"
    errors = frame[column] if column in frame else pd.Series([None] * len(frame), frame.index)
    missing = values.isna()
    text = errors.map(lambda e: e if isinstance(e, str) else "")
    not_recorded = int((missing & (text == NOT_RECORDED)).sum())
    not_sampled = int((missing & (text == NOT_SAMPLED)).sum())
    no_answer = int((missing & text.str.startswith(NO_ANSWER)).sum())
    failed = int(missing.sum()) - not_recorded - not_sampled - no_answer
    return Judged(len(frame), int((~missing).sum()), failed, no_answer, not_recorded, not_sampled)


def ragas_cell(analysis: Analysis, summary: pd.DataFrame, metric: str, **keys: str) -> str:
    """Return "mean [low, high] (n=…; k unscored; k not recorded)" for a RAGAS metric, or
    "not recorded (0 of N judged)" when the cache held none of its judgements."""
    counts = judged(rows_of(analysis, **keys), metric)
    notes = [f"{counts.unscored} unscored"] if counts.unscored else []
    notes += [f"{counts.not_recorded} not recorded"] if counts.not_recorded else []
    row = summary_row(summary, **keys)
    n = 0 if row is None else int(row[f"{metric}_n"])
    if n == 0 and counts.not_recorded:
        rest = "".join(f"; {note}" for note in notes[:-1])
        return f"not recorded (0 of {counts.asked} judged{rest})"
    return cell(row, metric, notes=notes)


def discrimination_cell(found: Discrimination | None) -> str:
    """Return "0.900 [0.750, 1.000] (20 pairs), informative", or the verdict alone."""
    if found is None:
        return "not measured"
    if found.n == 0:
        return found.verdict
    return f"{with_ci(found.value, found.low, found.high)} ({found.n} pairs), {found.verdict}"


def discrimination_row(analysis: Analysis, metrics: list[str], lead: int) -> list[str]:
    """Return the table row "judge discrimination" under a table of ``metrics`` columns
    (``lead``: the columns before them): each RAGAS metric's, a dash for the others."""
    cells = [
        discrimination_cell(analysis.discrimination.get(m))
        if m in analysis.ragas_metrics
        else MISSING
        for m in metrics
    ]
    return ["*judge discrimination*", *[""] * (lead - 1), *cells]


def sample_lines(analysis: Analysis) -> list[str]:
    """Return the sentence naming the seeded judge sample, when metrics were judged on one."""
    sampled = [m for m in analysis.ragas_metrics if judged(analysis.records, m).not_sampled]
    if not sampled:
        return []
    records = analysis.records
    inside = records.loc[
        records[f"{sampled[0]}_error"].map(lambda e: e != NOT_SAMPLED), "question_id"
    ].nunique()
    others = [m for m in analysis.ragas_metrics if m not in sampled]
    rest = f"; {', '.join(others)} on every question" if others else ""
    return [
        f"Judge sample: {', '.join(sampled)} judged on a seeded sample of {inside} of "
        f"{records['question_id'].nunique()} questions (eval.judge_sample, drawn with "
        f"eval.seed){rest}; the rest are outside their n."
    ]
