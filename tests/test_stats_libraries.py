"""Our bootstrap interval and Holm correction against the libraries that implement them.

``stats.bootstrap_ci`` is kept rather than replaced by ``scipy.stats.bootstrap``: on the same
seed scipy draws the same resample indices and takes the same percentiles, but sums the
resample means in another order, so a bound can differ in the 15th digit, which could move a
committed report's third decimal where a bound sits on a rounding edge. These tests pin that
the two agree to float noise, and that ``stats.holm`` is statsmodels' Holm step-down."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from workbench.eval.stats import DEFAULT_RESAMPLES, bootstrap_ci, holm

SAMPLES = [
    [0.0, 0.25, 0.5, 1.0, 1.0, 0.5, 0.0, 0.25],  # keyword-hit-like fractions, with ties
    list(np.random.default_rng(3).normal(size=40)),
    [1.0] * 6,  # every value equal: a collapsed interval
    [0.0, 1.0],
]


@pytest.mark.parametrize("values", SAMPLES)
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_bootstrap_ci_is_scipys_percentile_bootstrap(values, confidence) -> None:
    ours = bootstrap_ci(values, n_resamples=DEFAULT_RESAMPLES, seed=11, confidence=confidence)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that equal values give a degenerate CI
        theirs = scipy_stats.bootstrap(
            (np.asarray(values),),
            np.mean,
            n_resamples=DEFAULT_RESAMPLES,
            confidence_level=confidence,
            method="percentile",
            vectorized=True,
            random_state=np.random.default_rng(11),
        ).confidence_interval
    assert ours.mean == pytest.approx(float(np.mean(values)))
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)


@pytest.mark.parametrize(
    "p_values",
    [
        [0.01, 0.04, 0.03, 0.005],
        [0.2, 0.2, 0.01, 0.5, 0.049],
        [0.5, 0.6, 0.9],  # capped at one
        [0.001],
    ],
)
def test_holm_is_statsmodels_holm(p_values) -> None:
    _, expected, _, _ = multipletests(p_values, method="holm")
    assert holm(p_values) == pytest.approx(list(expected))


def test_holm_leaves_nan_out_of_the_family() -> None:
    """statsmodels rejects NaN; ours passes it through and corrects over the rest."""
    _, expected, _, _ = multipletests([0.01, 0.04], method="holm")
    adjusted = holm([0.01, float("nan"), 0.04])
    assert np.isnan(adjusted[1])
    assert [adjusted[0], adjusted[2]] == pytest.approx(list(expected))
