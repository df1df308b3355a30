"""Degraded answers: given after losing a step (the records' ``failures``: a dropped map batch
or draft, a failed DRIFT follow-up, an unwritten lazy report, report text cut to a budget). A
failed answer has none at all; records written before the column existed read as complete.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from workbench.report.analysis import Analysis, answer_failures, failed_answers, rows_of
from workbench.report.tables import md, shorten, table

FAILURES = "failures"
FAILURE_TEXT_LIMIT = 160  # one failure's text in the list of degraded answers


def _as_list(value: Any) -> list[str]:
    """Return one ``failures`` cell as a list of str: a list (records in memory), an array
    (read from parquet), JSON text (read from records.csv) or missing (older records)."""
    if isinstance(value, str):
        value = json.loads(value) if value.startswith("[") else [value]
    if isinstance(value, list | tuple | np.ndarray):
        return [str(v) for v in value]
    return []


def failure_lists(frame: pd.DataFrame) -> pd.Series:
    """Return each row's failures as a list of str ([] where the column is missing)."""
    if FAILURES not in frame:
        return pd.Series([[] for _ in range(len(frame))], index=frame.index, dtype=object)
    return frame[FAILURES].map(_as_list)


def is_degraded(frame: pd.DataFrame) -> pd.Series:
    """Return, per row, whether the answer was given but lost a step (not a failed answer)."""
    return ~failed_answers(frame) & failure_lists(frame).map(bool)


def degraded_answers(frame: pd.DataFrame) -> int:
    return int(is_degraded(frame).sum())


def degraded_in(analysis: Analysis, **keys: str) -> int:
    return degraded_answers(rows_of(analysis, **keys))


def failure_texts(frame: pd.DataFrame) -> pd.Series:
    """Return the failure texts of ``frame``'s degraded answers, one per row."""
    lists = failure_lists(frame)[is_degraded(frame)]
    return pd.Series([text for failures in lists for text in failures], dtype=object)


def degraded_section(analysis: Analysis) -> list[str]:
    """Return the ``Degraded answers`` section: per method failed n and degraded n, and each
    degraded answer with what it lost (nothing when no answer was degraded)."""
    records = analysis.records
    degraded = records[is_degraded(records)]
    if degraded.empty:
        return []
    counts = [
        f"- {md(method)}: failed {answer_failures(rows_of(analysis, method=method))}, degraded "
        f"{degraded_in(analysis, method=method)} of {len(rows_of(analysis, method=method))} answers"
        for method in analysis.methods
    ]
    rows = [
        [
            md(row.question_id),
            md(row.method),
            md("; ".join(shorten(f, FAILURE_TEXT_LIMIT) for f in failures)),
        ]
        for row, failures in zip(
            degraded.itertuples(index=False), failure_lists(degraded), strict=True
        )
    ]
    return [
        "## Degraded answers",
        "",
        "An answer is degraded when the method answered after losing a step: a failed map "
        "batch or draft (global search), a failed follow-up (DRIFT), a community report a lazy "
        "index could not write, or report text cut to the map's batch budget. Degraded answers "
        "are scored with the others.",
        "",
        *counts,
        "",
        *table(["Question", "Method", "Failures"], rows),
    ]


def degraded_pairs(records: pd.DataFrame) -> set[tuple[str, str]]:
    degraded = records[is_degraded(records)]
    return set(zip(degraded["question_id"].astype(str), degraded["method"], strict=True))
