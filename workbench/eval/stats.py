"""Statistics for evaluation records: bootstrap intervals, paired tests, Holm correction, and
the power of each paired test (the smallest difference it could detect, the questions a stated
difference needs). Missing values (a judge failure, a question without gold support) are
counted, never imputed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

DEFAULT_SEED = 2024
DEFAULT_RESAMPLES = 2000
MIN_PAIRS = 5
PAIRED_TEST_NAME = "Wilcoxon signed-rank (two-sided, zero differences split)"
ALPHA = 0.05
POWER = 0.8
# The difference whose question count every test prints: 5 points on a 0-1 score, the size of
# HippoRAG 2's recall@5 gain over a strong dense retriever on MuSiQue.
DETECT = 0.05
TEST_RESULT_COLUMNS = ["n", "mean_diff", "ci_low", "ci_high", "p_value", "mdd", "n_needed"]
TEST_RESULT_COLUMNS += ["p_holm"]
BASELINE_TEST_COLUMNS = ["metric", "method", *TEST_RESULT_COLUMNS]
SUMMARY_PARTS = ("mean", "low", "high", "n", "failed")  # an Estimate's fields, in order


class RecordsError(ValueError):
    """The records frame cannot be analysed as asked; the message names the column or rows."""


@dataclass(frozen=True)
class Estimate:
    """A mean with its percentile-bootstrap interval, sample size and count of missing values."""

    mean: float
    low: float
    high: float
    n: int
    n_missing: int


@dataclass(frozen=True)
class PairedResult:
    """The paired comparison of two methods over the questions both were scored on."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    mdd: float = math.nan  # smallest difference detectable at POWER and ALPHA on these n
    n_needed: float = math.nan  # pairs that detect a difference of DETECT at POWER and ALPHA
    test: str = PAIRED_TEST_NAME

    def row(self) -> dict[str, float]:
        """Return the result's columns of a test table (``TEST_RESULT_COLUMNS`` but p_holm)."""
        return {c: getattr(self, c) for c in TEST_RESULT_COLUMNS[:-1]}


def _floats(values: Iterable[float]) -> np.ndarray:
    """Return the values as a flat float array, pandas' missing markers as NaN."""
    if isinstance(values, pd.Series | pd.Index):
        return values.to_numpy(dtype=float, na_value=np.nan)
    if not isinstance(values, np.ndarray | list | tuple):
        values = list(values)
    return np.asarray(values, dtype=float).ravel()


def bootstrap_ci(
    values: Iterable[float],
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = 0.95,
) -> Estimate:
    """Return the mean of the non-NaN values with a percentile-bootstrap interval (not scipy's:
    test_stats_libraries says why)."""
    array = _floats(values)
    present = array[~np.isnan(array)]
    n, n_missing = int(present.size), int(array.size - present.size)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, n_missing)
    mean = float(present.mean())
    if n == 1:
        return Estimate(mean, mean, mean, 1, n_missing)
    rng = np.random.default_rng(seed)
    resample_means = present[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(resample_means, [tail, 100.0 - tail])
    return Estimate(mean, float(low), float(high), n, n_missing)


def paired_test(
    a: Iterable[float],
    b: Iterable[float],
    seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
) -> PairedResult:
    """Return the paired comparison of ``a`` against ``b`` over the positions both hold: the
    bootstrapped mean of ``a - b`` and a Wilcoxon p with zero differences split, so ties at zero
    (common with coarse scores) neither vanish from n nor inflate the evidence; p is NaN below
    ``MIN_PAIRS``, where the test could never reach 0.05."""
    first, second = _floats(a), _floats(b)
    if first.shape != second.shape:
        raise ValueError(f"paired_test needs equal lengths, got {first.size} and {second.size}")
    both = ~np.isnan(first) & ~np.isnan(second)
    differences = first[both] - second[both]
    estimate = bootstrap_ci(differences, n_resamples=n_resamples, seed=seed, confidence=confidence)
    n = int(differences.size)
    if n < MIN_PAIRS:
        p_value = math.nan
    elif np.all(differences == 0):
        p_value = 1.0
    else:
        result = scipy_stats.wilcoxon(
            differences, zero_method="zsplit", alternative="two-sided", method="auto"
        )
        p_value = float(result.pvalue)
    sd = float(np.std(differences, ddof=1)) if n > 1 else math.nan
    ci = (estimate.mean, estimate.low, estimate.high)
    return PairedResult(n, *ci, p_value, detectable_difference(sd, n), questions_needed(sd, DETECT))


def _t_sum(n: int, alpha: float, power: float) -> float:
    return float(scipy_stats.t.ppf(1 - alpha / 2, n - 1) + scipy_stats.t.ppf(power, n - 1))


def detectable_difference(sd: float, n: int, alpha: float = ALPHA, power: float = POWER) -> float:
    """Return the smallest mean paired difference a two-sided test at ``alpha`` detects with
    probability ``power`` on ``n`` pairs whose differences spread by ``sd``: the paired t's
    (t_{1-alpha/2} + t_power) sd / sqrt(n) (within 1% of the exact noncentral t from 10 pairs;
    the Wilcoxon test the reports run is at least 86% as efficient). NaN below ``MIN_PAIRS``
    pairs or with no spread (every difference alike: nothing to scale by)."""
    if n < MIN_PAIRS or not sd > 0:
        return math.nan
    return _t_sum(n, alpha, power) * sd / math.sqrt(n)


def questions_needed(
    sd: float, difference: float, alpha: float = ALPHA, power: float = POWER
) -> float:
    """Return the fewest pairs on which ``detectable_difference`` reaches ``difference``
    (NaN without spread or difference): the normal approximation, raised to the t's."""
    if not (sd > 0 and difference > 0):
        return math.nan
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    n = max(MIN_PAIRS, math.ceil((z * sd / difference) ** 2))
    while _t_sum(n, alpha, power) * sd / math.sqrt(n) > difference:
        n += 1
    return float(n)


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm-Bonferroni adjusted p-values in the input order (NaNs pass, uncounted)."""
    values = [float(p) for p in p_values]
    tested = sorted((p, i) for i, p in enumerate(values) if not math.isnan(p))
    m = len(tested)
    adjusted = [math.nan] * len(values)
    running_max = 0.0
    for rank, (p, index) in enumerate(tested):
        running_max = max(running_max, min(1.0, (m - rank) * p))
        adjusted[index] = running_max
    return adjusted


def methods_in_order(records: pd.DataFrame) -> list[str]:
    """Return the method names in the order they first appear in the records."""
    return [str(method) for method in pd.unique(records["method"])]


def _require_columns(records: pd.DataFrame, columns: Iterable[str]) -> None:
    missing = [column for column in columns if column not in records.columns]
    if missing:
        raise RecordsError(
            f"records has no column(s) {missing}; present: {list(records.columns)}. "
            "Pass only metrics the evaluation run produced."
        )


def scores_by_question(records: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Return a question_id x method table of one metric (NaN where a pair is missing)."""
    _require_columns(records, ["question_id", "method", metric])
    duplicated = records.duplicated(["question_id", "method"], keep=False)
    if duplicated.any():
        examples = records.loc[duplicated, ["question_id", "method"]].head(3).values.tolist()
        raise RecordsError(
            f"records has {int(duplicated.sum())} rows sharing a (question_id, method) pair, "
            f"e.g. {examples}; keep one row per pair before comparing methods."
        )
    table = records.pivot(index="question_id", columns="method", values=metric)
    return table.astype(float).reindex(columns=methods_in_order(records))


def baseline_rows(
    metric: str, scores: pd.DataFrame, baseline: str, **options: int
) -> list[dict[str, float]]:
    """Return each method's paired test against ``baseline`` on one :func:`scores_by_question`
    table, as test-table rows (no p_holm); a method with no pair is left out."""
    rows = []
    for method in (m for m in scores.columns if m != baseline):
        result = paired_test(scores[method].to_numpy(), scores[baseline].to_numpy(), **options)
        if result.n:
            rows.append({"metric": metric, "method": method, **result.row()})
    return rows


def against_baseline(
    tables: dict[str, pd.DataFrame], baseline: str, **options: int
) -> pd.DataFrame:
    """Return each method's paired test against ``baseline`` per metric of ``tables`` (metric ->
    :func:`scores_by_question` table), Holm-corrected within each metric."""
    rows = []
    for metric, scores in tables.items():
        family = baseline_rows(metric, scores, baseline, **options) if baseline in scores else []
        adjusted = holm([row["p_value"] for row in family])
        rows += [{**row, "p_holm": p} for row, p in zip(family, adjusted, strict=True)]
    return pd.DataFrame(rows, columns=BASELINE_TEST_COLUMNS)


def summarize(
    records: pd.DataFrame,
    metrics: Sequence[str],
    by: Sequence[str] = ("method",),
    seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Return one row per group: the ``by`` keys, then per metric ``<metric>_mean``, ``_low``,
    ``_high``, ``_n`` and ``_failed`` (its NaN count)."""
    keys = list(by)
    _require_columns(records, keys + list(metrics))
    rows = []
    for group, frame in records.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, group, strict=True))
        for metric in metrics:
            estimate = bootstrap_ci(
                frame[metric], n_resamples=n_resamples, seed=seed, confidence=confidence
            )
            row.update(summary_columns(metric, estimate))
        rows.append(row)
    columns = keys + [f"{metric}_{part}" for metric in metrics for part in SUMMARY_PARTS]
    return pd.DataFrame(rows, columns=columns)


def summary_columns(metric: str, estimate: Estimate) -> dict[str, float]:
    """Return a ``summarize`` row's columns of ``metric`` for one estimate."""
    return {f"{metric}_{p}": v for p, v in zip(SUMMARY_PARTS, astuple(estimate), strict=True)}


def summary_row(summary: pd.DataFrame, **keys: str) -> pd.Series | None:
    """Return the row of a ``summarize`` table whose ``keys`` columns equal the values, or None."""
    mask = np.ones(len(summary), dtype=bool)
    for column, value in keys.items():
        mask &= (summary[column] == value).to_numpy()
    matches = summary[mask]
    return None if matches.empty else matches.iloc[0]


def column_mean(frame: pd.DataFrame, column: str) -> float:
    """Return the mean of a column's numeric values (NaN when absent or empty)."""
    if column not in frame:
        return math.nan
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else math.nan


def frontier(costs: dict[str, float], qualities: dict[str, float]) -> list[str]:
    """Return the methods no other is as cheap and as good as (and better on one), cheapest
    first; a NaN cost or quality leaves a method out."""
    known = {
        m: (costs[m], qualities[m])
        for m in costs
        if m in qualities and not (math.isnan(costs[m]) or math.isnan(qualities[m]))
    }

    def dominated(m: str) -> bool:
        cost, quality = known[m]
        return any(
            c <= cost and q >= quality and (c < cost or q > quality)
            for other, (c, q) in known.items()
            if other != m
        )

    return sorted((m for m in known if not dominated(m)), key=lambda m: (known[m][0], m))
