"""A report's one declared test family: every method against the baseline on every metric that
can tell methods apart, Holm-adjusted together, so one comparison has one p in the report, the
cross-corpus summary and the notebooks. Saturated metrics and metrics whose judge was not shown
informative are listed, not tested.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.eval import stats

BASELINE = "naive"
SATURATED_SHARE = 0.9  # a metric is saturated when this share of its scores is one value
FAMILY_COLUMNS = stats.BASELINE_TEST_COLUMNS


@dataclass(frozen=True)
class Saturation:
    """The most common score of a metric: its value, how many scores hold it, of how many."""

    value: float
    count: int
    total: int

    @property
    def saturated(self) -> bool:
        return self.total > 0 and self.count >= SATURATED_SHARE * self.total

    def render(self) -> str:
        return f"{self.count} of {self.total} scores at {self.value:.3f}"


def saturation(scores: pd.DataFrame) -> Saturation:
    """Return the most common score among the non-NaN cells of a question x method table."""
    values = scores.to_numpy(dtype=float, na_value=np.nan).ravel()
    values = values[~np.isnan(values)]
    if not values.size:
        return Saturation(float("nan"), 0, 0)
    value, count = Counter(values.round(9).tolist()).most_common(1)[0]
    return Saturation(float(value), int(count), int(values.size))


@dataclass
class Family:
    """The tests of a report: ``tests`` has ``FAMILY_COLUMNS`` (``p_value`` NaN below
    ``stats.MIN_PAIRS`` pairs, uncounted by Holm)."""

    baseline: str
    methods: list[str]
    metrics: list[str]
    tests: pd.DataFrame
    saturated: dict[str, Saturation]
    untested: dict[str, str]  # metric -> why it is shown but not tested (the judge's verdict)

    @property
    def n_tests(self) -> int:
        return int(self.tests["p_value"].notna().sum())

    def declaration(self) -> str:
        """Return the sentence that declares the family."""
        pairs = len(self.methods) * len(self.metrics)
        text = (
            f"Test family: {len(self.methods)} method(s) × {len(self.metrics)} metric(s) "
            f"against {self.baseline} = {self.n_tests} test(s), Holm-adjusted together"
        )
        if pairs != self.n_tests:
            text += (
                f" (the other {pairs - self.n_tests} method-metric pair(s) have fewer than "
                f"{stats.MIN_PAIRS} questions scored for both, or none)"
            )
        saturated = ", ".join(f"{m} ({s.render()})" for m, s in self.saturated.items())
        untested = ", ".join(f"{m} ({why})" for m, why in self.untested.items())
        return (
            text
            + f"; saturated, listed not tested: {saturated or 'none'}"
            + f"; judge not shown informative, listed not tested: {untested or 'none'}."
        )

    def to_json(self) -> dict[str, Any]:
        """Return the family's declaration for ``run.json`` (its tests are in ``tests.csv``)."""
        return {
            "baseline": self.baseline,
            "methods": self.methods,
            "metrics": self.metrics,
            "n_tests": self.n_tests,
            "correction": "Holm over the whole family",
            "saturated": {m: asdict(s) for m, s in self.saturated.items()},
            "untested": self.untested,
        }


def baseline_of(methods: list[str]) -> str:
    """Return the method every other is tested against: naive RAG, else the first method."""
    return BASELINE if BASELINE in methods else methods[0]


def declare_family(
    tables: dict[str, pd.DataFrame],
    baseline: str,
    untested: dict[str, str] | None = None,
    *,
    seed: int = stats.DEFAULT_SEED,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
) -> Family:
    """Return the family of ``tables`` (metric -> ``stats.scores_by_question`` table): each
    method's paired test against ``baseline`` on each metric neither saturated nor in
    ``untested``, Holm-adjusted over all of them; a method with no pair on a metric is left
    out of it."""
    untested = {m: why for m, why in (untested or {}).items() if m in tables}
    saturated, rows = {}, []
    for metric, scores in tables.items():
        if metric in untested:
            continue
        level = saturation(scores)
        if level.saturated:
            saturated[metric] = level
            continue
        if baseline in scores:
            rows += stats.baseline_rows(
                metric, scores, baseline, seed=seed, n_resamples=n_resamples
            )
    tests = pd.DataFrame(rows, columns=FAMILY_COLUMNS)
    tests["p_holm"] = stats.holm(tests["p_value"].tolist())
    methods, metrics = (list(dict.fromkeys(tests[c])) for c in ("method", "metric"))
    return Family(baseline, methods, metrics, tests, saturated, untested)


def significant(family: Family, alpha: float) -> pd.DataFrame:
    """Return the family's tests whose Holm-adjusted p is below ``alpha``."""
    return family.tests[family.tests["p_holm"] < alpha]
