"""The numbers an evaluation report is made of, computed once from the records: the tables,
the plots and the reading ``studies`` generates all read one ``Analysis``, so they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from workbench.eval import judge_validity, pairwise, stats
from workbench.eval.declared import without_primary
from workbench.eval.hops import ALL_HOPS, all_hops_found
from workbench.eval.metrics import JUDGE_FREE_METRICS
from workbench.eval.questions import QUESTION_TYPES
from workbench.eval.significance import Family, baseline_of, declare_family

REQUIRED_COLUMNS = ("question_id", "type", "method")


@dataclass
class Analysis:
    """The numbers the summary and the plots share, computed once per report."""

    records: pd.DataFrame
    ragas_metrics: list[str]
    metrics: list[str]
    methods: list[str]
    types: list[str]
    by_method: pd.DataFrame
    by_type: pd.DataFrame
    family: Family  # every method against the baseline: the report's only tests
    alpha: float
    n_resamples: int
    seed: int
    not_applicable: list[str]
    discrimination: dict[str, judge_validity.Discrimination]
    win_rates: pd.DataFrame | None
    headline: str = ""  # the label of the rows analysed (``report.headline``); "": unlabelled


def analyse(
    records: pd.DataFrame,
    ragas_metrics: Sequence[str],
    *,
    alpha: float,
    n_resamples: int,
    seed: int,
    controls: pd.DataFrame | None = None,
    judgements: pd.DataFrame | None = None,
    hops: pd.DataFrame | None = None,
    headline: str = "",
    primary: str | None = None,
) -> Analysis:
    """Return the summaries, test family, judge validity and win rates of the records
    (judge-free metrics with no value at all are listed as not applicable; ``hops`` adds
    whole chains found to the family); ``headline`` is the sentence saying which questions
    they are, printed with each headline table; ``primary``: the declared primary hypothesis,
    tested alone and so left out of the family (``eval.declared``)."""
    if records.empty:
        raise stats.RecordsError("records is empty: there is nothing to report.")
    missing = [c for c in (*REQUIRED_COLUMNS, *ragas_metrics) if c not in records.columns]
    if missing:
        raise stats.RecordsError(
            f"records has no column(s) {missing}; present: {list(records.columns)}. "
            "Pass the RAGAS metrics the evaluation run scored."
        )
    metrics = list(ragas_metrics)
    present = [m for m in JUDGE_FREE_METRICS if m in records.columns and m not in metrics]
    not_applicable = [m for m in present if records[m].isna().all()]
    metrics += [m for m in present if m not in not_applicable]
    if not metrics:
        raise stats.RecordsError(
            f"records has none of the judge-free metrics {list(JUDGE_FREE_METRICS)} and no "
            "RAGAS metrics were given: there is no score to report."
        )
    observed_types = [str(t) for t in pd.unique(records["type"])]
    types = [t for t in QUESTION_TYPES if t in observed_types]
    types += sorted(t for t in observed_types if t not in QUESTION_TYPES)
    options = {"n_resamples": n_resamples, "seed": seed}
    if controls is None:
        controls = pd.DataFrame(columns=judge_validity.PAIR_COLUMNS)
    discrimination = {
        m: judge_validity.discrimination(controls, m, **options) for m in ragas_metrics
    }
    methods = stats.methods_in_order(records)
    return Analysis(
        records=records,
        ragas_metrics=list(ragas_metrics),
        metrics=metrics,
        methods=methods,
        types=types,
        by_method=stats.summarize(records, metrics, by=("method",), **options),
        by_type=stats.summarize(records, metrics, by=("method", "type"), **options),
        family=report_family(
            records, metrics, discrimination, baseline_of(methods), hops, primary, **options
        ),
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        not_applicable=not_applicable,
        discrimination=discrimination,
        win_rates=pairwise.win_rates(judgements, **options) if judgements is not None else None,
        headline=headline,
    )


def report_family(
    records: pd.DataFrame,
    metrics: Sequence[str],
    discrimination: dict[str, judge_validity.Discrimination],
    baseline: str,
    hops: pd.DataFrame | None = None,
    primary: str | None = None,
    **options: int,
) -> Family:
    """Return the report's test family: ``metrics`` (and whole chains found, given ``hops``)
    against ``baseline``, but the declared ``primary`` comparison; a RAGAS metric whose judge
    was not shown informative is untested."""
    tables = without_primary(
        {m: stats.scores_by_question(records, m) for m in metrics}, primary, baseline
    )
    if hops is not None and not hops.empty:
        tables[ALL_HOPS] = all_hops_found(hops)
    untested = {
        m: d.verdict for m, d in discrimination.items() if d.verdict != judge_validity.INFORMATIVE
    }
    return declare_family(tables, baseline, untested, **options)


def failed_answers(frame: pd.DataFrame) -> pd.Series:
    """Return, per row, whether it is an answer the method failed to give."""
    if "answer_error" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["answer_error"].map(lambda e: isinstance(e, str) and bool(e))


def answer_failures(frame: pd.DataFrame) -> int:
    return int(failed_answers(frame).sum())


def headline_lines(analysis: Analysis) -> list[str]:
    """Return the label of a headline table and a blank line after it ([] when unlabelled)."""
    return [analysis.headline, ""] if analysis.headline else []


def rows_of(analysis: Analysis, **keys: str) -> pd.DataFrame:
    frame = analysis.records
    for column, value in keys.items():
        frame = frame[frame[column] == value]
    return frame


def failed_in(analysis: Analysis, **keys: str) -> int:
    return answer_failures(rows_of(analysis, **keys))
