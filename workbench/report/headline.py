"""Which records a report's headline is computed on: its ``test`` questions, since defaults may
be chosen on ``dev`` ones (a tuning set). The Run, Failures and Cost sections and a secondary
all-questions table read every record; the cross-corpus summary picks the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from workbench.eval import stats
from workbench.eval.declared import PRIMARY_FIELD, paired, parse_primary, primary_verdict
from workbench.eval.questions import DEFAULT_SPLIT, TUNED_FIELD
from workbench.report.analysis import Analysis
from workbench.report.sections import scores_section
from workbench.report.tables import count, number, p_text, signed, with_ci

NO_PRIMARY = (
    "**Primary hypothesis:** none was declared before this run (`eval.primary` or "
    "`--primary`), so every test in this report is exploratory."
)
TUNING_SET = "tuning set (dev questions: defaults were chosen on them)"
SPLITS = ("test", "dev")
CAVEAT = "Tuning-set caveat:"  # opens the sentence naming settings chosen on test questions


def splits_of(records: pd.DataFrame) -> pd.Series:
    """Return each record's split; records written before splits existed are ``test``."""
    if "split" not in records.columns:
        return pd.Series(DEFAULT_SPLIT, index=records.index)
    return records["split"].fillna(DEFAULT_SPLIT).astype(str)


def is_tuning_set(records: pd.DataFrame) -> bool:
    """Return whether no record is of a ``test`` question (the headline is then a tuning set)."""
    return not bool((splits_of(records) == "test").any())


def headline(records: pd.DataFrame, tuned: Sequence[str] = ()) -> tuple[pd.DataFrame, str]:
    """Return the records the headline is computed on and the sentence that labels it: the
    ``test`` rows when there are any; otherwise every row, labelled as a tuning set. ``tuned``:
    settings chosen on the test questions too, named as a tuning-set caveat."""
    records = records.assign(split=splits_of(records))
    n_test, n_dev = (records.loc[records["split"] == s, "question_id"].nunique() for s in SPLITS)
    if is_tuning_set(records):
        return records, (
            f"**{TUNING_SET.capitalize()}.** All {n_dev} questions of this report "
            "are dev questions: these scores are not a held-out measurement."
        )
    rows = records[records["split"] == "test"]
    label = f"**Headline: the {n_test} test questions**"
    if not n_dev:
        label += " (no dev question in this run)."
    else:
        label += (
            f"; {n_dev} dev questions were used to choose defaults and are shown separately "
            "(Scores by method, all questions)."
        )
    if tuned:
        label += (
            f" {CAVEAT} {', '.join(f'`{t}`' for t in tuned)} was chosen on these test "
            "questions too (before the split; docs/defaults-provenance.md)."
        )
    return rows, label


def tuned_of(meta: dict) -> list[str]:
    """Return the settings a run's meta says were chosen on its test questions too."""
    value = meta.get(TUNED_FIELD) or []
    return [value] if isinstance(value, str) else list(value)


def restrict(frame: pd.DataFrame | None, rows: pd.DataFrame) -> pd.DataFrame | None:
    """Return the rows of ``frame`` (pairwise judgements, hop evidence) on ``rows``' questions."""
    if frame is None or "question_id" not in frame.columns:
        return frame
    return frame[frame["question_id"].isin(set(rows["question_id"]))]


def all_questions(analysis: Analysis, records: pd.DataFrame) -> Analysis:
    """Return ``analysis`` (of the headline rows) widened to every record, for the sections
    that describe the whole run; only the per-method summary is recomputed."""
    if len(records) == len(analysis.records):
        return analysis
    options = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    return replace(
        analysis,
        records=records,
        methods=stats.methods_in_order(records),
        by_method=stats.summarize(records, analysis.metrics, by=("method",), **options),
        headline="",
    )


def all_questions_section(headline_analysis: Analysis, full: Analysis) -> list[str]:
    """Return the secondary Scores-by-method table over every question (dev and test), or
    nothing when the headline already holds every record."""
    if full is headline_analysis:
        return []
    counts = full.records.groupby(splits_of(full.records))["question_id"].nunique()
    mix = ", ".join(f"{int(n)} {split}" for split, n in counts.items())
    lines = scores_section(full)  # unlabelled: its table starts after the heading's blank
    return [
        "## Scores by method, all questions",
        "",
        f"Secondary table: every question of the run ({mix}); cells as in Scores by method. "
        "Its dev rows are a tuning set (defaults were chosen on them), so it is not the headline.",
        "",
        *lines[2 : lines.index("", 2)],
    ]


def primary_lines(
    records: pd.DataFrame, meta: dict, alpha: float, options: dict[str, int]
) -> list[str]:
    """Return the report's first section: the primary hypothesis ``meta`` declares tested
    alone on ``records`` (the headline rows) with its power, or the line saying there was
    none (``eval.declared``)."""
    primary = parse_primary(meta.get(PRIMARY_FIELD))
    if primary is None:
        return [NO_PRIMARY]
    what = f"primary hypothesis {primary.text!r}"
    options = {k: options[k] for k in ("seed", "n_resamples") if k in options}
    result = paired(records, primary.method, primary.baseline, primary.metric, what, **options)
    diff = with_ci(result.mean_diff, result.ci_low, result.ci_high, signed)
    return [
        "## Primary hypothesis",
        "",
        f"Declared before the run: **{primary.text}**. Tested alone, with no correction, at "
        f"α = {alpha} ({stats.PAIRED_TEST_NAME}, on the questions both were scored on); "
        "every other test below is exploratory.",
        "",
        f"- {primary.method} − {primary.baseline} on {primary.metric}: {diff} (n={result.n}), "
        f"p {p_text(result.p_value)}: **{primary_verdict(primary, result, alpha)}**.",
        f"- Detectable at {stats.POWER:.0%} power on these {result.n} questions: "
        f"{number(result.mdd)}; questions that would detect ±{stats.DETECT}: "
        f"{count(result.n_needed)}.",
    ]
