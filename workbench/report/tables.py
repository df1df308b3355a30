"""The cell formatting every Markdown page shares (three decimals, an em dash for missing),
so the same records always give the same bytes, and its generic tables."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from workbench.eval import stats

MISSING = "—"


def number(value: float) -> str:
    """Return the value with three decimals ("0.000", never "-0.000"), or an em dash for NaN."""
    if value is None or math.isnan(value):
        return MISSING
    rounded = round(float(value), 3)
    return f"{rounded if rounded != 0 else 0.0:.3f}"


def signed(value: float) -> str:
    """Return ``number(value)`` with an explicit "+" on non-negative values."""
    text = number(value)
    return text if text == MISSING or text.startswith("-") else f"+{text}"


def with_ci(value: float, low: float, high: float, write: Callable = number) -> str:
    """Return a value with its CI, each written by ``write``: "0.500 [0.400, 0.600]" (or
    "+0.100 [-0.020, +0.200]" with ``signed``, for a difference)."""
    return f"{write(value)} [{write(low)}, {write(high)}]"


def p_text(value: float) -> str:
    """Return a p-value for a table cell: "<0.001", three decimals, or an em dash for NaN."""
    if math.isnan(value):
        return MISSING
    return "<0.001" if value < 0.001 else number(value)


def cell(
    row: pd.Series | None,
    metric: str,
    failed_answers: int = 0,
    ragas: bool = False,
    notes: Sequence[str] = (),
) -> str:
    """Return "mean [low, high] (n=…)" for one metric of one summary row, with ``notes`` and its
    failures (RAGAS: unscored answers; judge-free: failed answers scored 0)."""
    notes = list(notes)
    if row is not None and ragas and int(row[f"{metric}_failed"]):
        notes.append(f"{int(row[f'{metric}_failed'])} unscored")
    if not ragas and failed_answers:
        notes.append(f"{failed_answers} failed, scored 0")
    suffix = "".join(f"; {note}" for note in notes)
    if row is None or int(row[f"{metric}_n"]) == 0:
        return f"{MISSING} (n=0{suffix})"
    n = int(row[f"{metric}_n"])
    mean, low, high = row[f"{metric}_mean"], row[f"{metric}_low"], row[f"{metric}_high"]
    return f"{with_ci(mean, low, high)} (n={n}{suffix})"


def shorten(text: str, limit: int) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def md(text: Any) -> str:
    """Return text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def count(value: float) -> str:
    """Return a count ("1,234"), or an em dash for NaN."""
    return MISSING if value is None or math.isnan(value) else f"{value:,.0f}"


# what the power columns of every tests table mean (``stats.detectable_difference``)
POWER_NOTE = (
    f"Detectable: the smallest difference the test had an {stats.POWER:.0%} chance to call at "
    f"α = {stats.ALPHA} (before Holm's correction) on its n, from the spread of the per-question "
    f'differences (paired t); a "not significant" smaller than it is no evidence of no '
    f"difference. n for ±{stats.DETECT}: the questions that would detect a difference of "
    f"{stats.DETECT} at that power."
)


def baseline_tests_table(tests: pd.DataFrame, baseline: str, alpha: float) -> list[str]:
    """Return the table of every method tested against ``baseline`` with each test's power
    (``POWER_NOTE``; one writer for every page, so a difference reads and is called the same
    way on all)."""

    def verdict(t: Any) -> str:
        if math.isnan(t.p_value):
            return "too few pairs"
        return "significant" if t.p_holm < alpha else "not significant"

    rows = [
        [
            md(t.metric),
            md(t.method),
            str(int(t.n)),
            with_ci(t.mean_diff, t.ci_low, t.ci_high, signed),
        ]
        + [p_text(t.p_value), p_text(t.p_holm), verdict(t)]
        + [number(getattr(t, "mdd", math.nan)), count(getattr(t, "n_needed", math.nan))]
        for t in tests.itertuples(index=False)
    ]
    header = ["Metric", "Method", "n pairs", f"Mean diff − {baseline} [95% CI]", "p", "p (Holm)"]
    header += ["", "Detectable", f"n for ±{stats.DETECT}"]
    return table(header, rows) if rows else [f"No method besides {baseline}."]
