"""Statistics: bootstrap intervals, paired tests, Holm correction, pairing, summaries."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from workbench.eval.significance import declare_family
from workbench.eval.stats import (
    Estimate,
    RecordsError,
    bootstrap_ci,
    holm,
    paired_test,
    scores_by_question,
    summarize,
)


def records_for(scores: dict[str, list[float]], metric: str = "score") -> pd.DataFrame:
    """Return a records frame with one row per (question, method) from per-method score lists."""
    rows = [
        {"question_id": f"q{i}", "method": method, "type": "local", metric: value}
        for method, values in scores.items()
        for i, value in enumerate(values)
    ]
    return pd.DataFrame(rows)


# --- bootstrap_ci ---------------------------------------------------------------------------


def test_bootstrap_mean_is_the_sample_mean_and_the_interval_contains_it() -> None:
    values = [0.2, 0.4, 0.6, 0.8, 1.0, 0.0, 0.5, 0.7]
    estimate = bootstrap_ci(values)
    assert estimate.mean == pytest.approx(sum(values) / len(values))
    assert estimate.low < estimate.mean < estimate.high
    assert 0.0 <= estimate.low and estimate.high <= 1.0
    assert (estimate.n, estimate.n_missing) == (8, 0)


def test_bootstrap_interval_narrows_with_more_data() -> None:
    rng = np.random.default_rng(7)
    population = rng.uniform(0, 1, 400)
    small, large = bootstrap_ci(population[:20]), bootstrap_ci(population)
    assert (large.high - large.low) < 0.5 * (small.high - small.low)


def test_bootstrap_is_deterministic_for_a_seed_and_varies_across_seeds() -> None:
    values = np.random.default_rng(3).uniform(0, 1, 25)
    assert bootstrap_ci(values, seed=11) == bootstrap_ci(values, seed=11)
    assert bootstrap_ci(values, seed=11) != bootstrap_ci(values, seed=12)


def test_bootstrap_excludes_nan_and_counts_it_missing() -> None:
    estimate = bootstrap_ci([1.0, math.nan, 3.0, math.nan, 2.0])
    assert estimate.mean == pytest.approx(2.0)
    assert (estimate.n, estimate.n_missing) == (3, 2)
    from_series = bootstrap_ci(pd.Series([1.0, None, 3.0, None, 2.0], dtype="Float64"))
    assert from_series == estimate


def test_bootstrap_with_no_values_is_nan_and_with_one_value_collapses() -> None:
    empty = bootstrap_ci([math.nan, math.nan])
    assert math.isnan(empty.mean) and math.isnan(empty.low) and math.isnan(empty.high)
    assert (empty.n, empty.n_missing) == (0, 2)
    assert bootstrap_ci([]).n == 0
    assert bootstrap_ci([0.25, math.nan]) == Estimate(0.25, 0.25, 0.25, 1, 1)


def test_bootstrap_interval_widens_with_confidence() -> None:
    values = np.random.default_rng(5).uniform(0, 1, 30)
    narrow, wide = bootstrap_ci(values, confidence=0.8), bootstrap_ci(values, confidence=0.99)
    assert wide.low < narrow.low and narrow.high < wide.high


# --- paired_test ----------------------------------------------------------------------------


def test_paired_test_finds_a_clearly_better_method() -> None:
    rng = np.random.default_rng(1)
    a = rng.uniform(0.4, 1.0, 30)
    b = a - 0.3 + rng.normal(0, 0.05, 30)
    result = paired_test(a, b)
    assert result.n == 30
    assert result.mean_diff == pytest.approx(float(np.mean(a - b)))
    assert result.ci_low < result.mean_diff < result.ci_high
    assert result.ci_low > 0.2
    assert result.p_value < 0.01
    assert "Wilcoxon" in result.test


def test_paired_test_uses_only_complete_pairs() -> None:
    a = [0.9, 0.8, math.nan, 0.7, 0.9, 1.0, 0.6, 0.8]
    b = [0.1, math.nan, 0.3, 0.2, 0.3, 0.4, 0.1, 0.2]
    result = paired_test(a, b)
    assert result.n == 6
    expected = np.mean([0.9 - 0.1, 0.7 - 0.2, 0.9 - 0.3, 1.0 - 0.4, 0.6 - 0.1, 0.8 - 0.2])
    assert result.mean_diff == pytest.approx(expected)


def test_paired_test_of_identical_scores_has_p_one() -> None:
    a = np.random.default_rng(2).uniform(0, 1, 20)
    result = paired_test(a, a.copy())
    assert result.p_value == 1.0
    assert (result.mean_diff, result.ci_low, result.ci_high) == (0.0, 0.0, 0.0)


def test_paired_test_with_fewer_than_five_pairs_gives_no_p() -> None:
    result = paired_test([1.0, 1.0, 1.0, 1.0, math.nan], [0.0, 0.0, 0.0, 0.0, 0.0])
    assert result.n == 4
    assert math.isnan(result.p_value)
    assert result.mean_diff == pytest.approx(1.0)


def test_paired_test_handles_ties_and_zero_differences_without_warning() -> None:
    a = [1.0, 0.5, 1.0, 0.5, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0]
    b = [0.5, 0.5, 0.0, 0.5, 0.5, 1.0, 0.0, 0.5, 0.0, 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = paired_test(a, b)
    assert result.n == 10
    assert 0.0 < result.p_value < 0.05


def test_paired_test_counts_zero_differences_as_evidence_of_no_difference() -> None:
    # Better on 6 of 30 questions and identical on 24: dropping the zeros (Wilcoxon's original
    # rule) would leave 6 positive differences and p ~ 0.014; splitting them keeps n = 30.
    a = [0.5] * 24 + [0.7] * 6
    b = [0.5] * 30
    result = paired_test(a, b)
    assert result.n == 30
    assert result.p_value > 0.05


def test_paired_test_rejects_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="3 and 2"):
        paired_test([1.0, 2.0, 3.0], [1.0, 2.0])


# --- holm -----------------------------------------------------------------------------------


def test_holm_matches_a_hand_computation() -> None:
    # Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone max 0.06.
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_passes_nan_through_without_counting_it() -> None:
    adjusted = holm([0.02, math.nan, 0.6])
    # m = 2: 0.02*2 = 0.04, then max(0.04, 0.6*1) = 0.6.
    assert adjusted[0] == pytest.approx(0.04)
    assert math.isnan(adjusted[1])
    assert adjusted[2] == pytest.approx(0.6)
    assert holm([0.5, 0.7, 0.9]) == [1.0, 1.0, 1.0]
    assert holm([]) == []


# --- scores_by_question ---------------------------------------------------------------------


def test_scores_are_paired_by_question_id_not_by_position() -> None:
    records = records_for({"a": [0.9, 0.1, 0.9, 0.1, 0.9], "b": [0.9, 0.1, 0.9, 0.1, 0.9]})
    shuffled = records.sample(frac=1.0, random_state=0).reset_index(drop=True)
    family = declare_family({"score": scores_by_question(shuffled, "score")}, "a")
    row = family.tests.iloc[0]
    assert row["mean_diff"] == 0.0 and row["p_value"] == 1.0


def test_duplicated_question_method_rows_are_refused() -> None:
    duplicated = records_for({"a": [0.1, 0.2]})
    duplicated = pd.concat([duplicated, duplicated.iloc[[0]]], ignore_index=True)
    with pytest.raises(RecordsError, match="q0"):
        scores_by_question(duplicated, "score")


# --- summarize ------------------------------------------------------------------------------


def test_summarize_by_method_and_by_method_and_type_counts_n_and_failures() -> None:
    rows = []
    for i in range(6):
        kind = "local" if i < 4 else "global"
        rows.append(
            {
                "question_id": f"q{i}",
                "method": "naive",
                "type": kind,
                "faithfulness": [0.5, math.nan, 0.7, math.nan, math.nan, 0.9][i],
                "recall": 1.0,
            }
        )
        rows.append(
            {
                "question_id": f"q{i}",
                "method": "local",
                "type": kind,
                "faithfulness": 0.8,
                "recall": [1.0, 0.0, 1.0, 1.0, math.nan, 0.5][i],
            }
        )
    records = pd.DataFrame(rows)

    by_method = summarize(records, ["faithfulness", "recall"]).set_index("method")
    assert list(by_method.index) == ["naive", "local"]
    assert by_method.loc["naive", "faithfulness_n"] == 3
    assert by_method.loc["naive", "faithfulness_failed"] == 3
    assert by_method.loc["naive", "faithfulness_mean"] == pytest.approx(0.7)
    assert by_method.loc["local", "faithfulness_failed"] == 0
    assert by_method.loc["local", "recall_n"] == 5
    assert by_method.loc["local", "recall_mean"] == pytest.approx(3.5 / 5)
    low, high = (
        by_method.loc["naive", "faithfulness_low"],
        by_method.loc["naive", "faithfulness_high"],
    )
    assert 0.5 <= low <= 0.7 <= high <= 0.9

    by_type = summarize(records, ["faithfulness"], by=("method", "type")).set_index(
        ["method", "type"]
    )
    assert len(by_type) == 4
    assert by_type.loc[("naive", "local"), "faithfulness_n"] == 2
    assert by_type.loc[("naive", "local"), "faithfulness_failed"] == 2
    assert by_type.loc[("naive", "global"), "faithfulness_n"] == 1
    assert by_type.loc[("naive", "global"), "faithfulness_failed"] == 1
    single = by_type.loc[("naive", "global")]
    assert single["faithfulness_low"] == single["faithfulness_high"] == pytest.approx(0.9)


def test_summarize_names_a_missing_metric_column() -> None:
    with pytest.raises(RecordsError, match="faithfulness"):
        summarize(records_for({"a": [0.5]}), ["faithfulness"])
