"""A report's one declared test family: which metrics it tests, and Holm over all of it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from studies.cross_corpus import family_from_json
from workbench.eval import judge_validity, stats
from workbench.eval.significance import Family, baseline_of, declare_family, saturation
from workbench.report.analysis import analyse

METHODS = ("naive", "hyde", "local", "global")
N = 20


def records() -> pd.DataFrame:
    """20 questions x 4 methods: local is better on keyword hits, global worse on evidence;
    grounded_sentences is 1.0 on 78 of 80 records (saturated); faithfulness differs a lot
    but its judge is not informative."""
    rng = np.random.default_rng(7)
    rows = []
    for q in range(N):
        for method in METHODS:
            rows.append(
                {
                    "question_id": f"q{q:02d}",
                    "type": "local",
                    "method": method,
                    "keyword_hit_rate": float(
                        np.clip(0.4 + (0.4 if method == "local" else 0) + rng.normal(0, 0.1), 0, 1)
                    ),
                    "evidence_recall": 0.0 if method == "global" else float(rng.uniform(0.5, 1)),
                    "grounded_sentences": 0.5 if (method, q) in {("global", 0), ("hyde", 3)} else 1,
                    "faithfulness": {"naive": 0.2, "hyde": 0.3, "local": 0.9, "global": 0.1}[method]
                    + float(rng.normal(0, 0.01)),
                }
            )
    return pd.DataFrame(rows)


def controls_no_better_than_chance() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "metric": "faithfulness",
            "control": "wrong_answer",
            "question_id": [f"q{i:02d}" for i in range(N)],
            "method": "local",
            "donor_question_id": "q00",
            "real": 0.5,
            "control_score": 0.5,
            "status": judge_validity.SCORED,
            "error": None,
        }
    )


@pytest.fixture(scope="module")
def family() -> Family:
    analysis = analyse(
        records(),
        ["faithfulness"],
        alpha=0.05,
        n_resamples=200,
        seed=1,
        controls=controls_no_better_than_chance(),
    )
    return analysis.family


def test_the_family_is_every_method_against_naive_on_the_testable_metrics(family: Family) -> None:
    assert family.baseline == "naive"
    assert family.methods == ["hyde", "local", "global"]
    assert family.metrics == ["keyword_hit_rate", "evidence_recall"]
    assert list(family.saturated) == ["grounded_sentences"]
    assert family.saturated["grounded_sentences"].render() == "78 of 80 scores at 1.000"
    assert family.untested == {"faithfulness": judge_validity.NOT_INFORMATIVE}
    assert family.n_tests == 6 and len(family.tests) == 6
    assert family.declaration() == (
        "Test family: 3 method(s) × 2 metric(s) against naive = 6 test(s), Holm-adjusted "
        "together; saturated, listed not tested: grounded_sentences (78 of 80 scores at "
        "1.000); judge not shown informative, listed not tested: faithfulness (not informative "
        "on this judge)."
    )


def test_holm_runs_over_the_whole_family_as_statsmodels_computes_it(family: Family) -> None:
    tests = family.tests
    np.testing.assert_allclose(tests["p_holm"], multipletests(tests["p_value"], method="holm")[1])
    # not one family per metric: the per-metric correction would give smaller p-values
    per_metric = tests.groupby("metric")["p_value"].transform(
        lambda p: multipletests(p, method="holm")[1]
    )
    assert (tests["p_holm"] >= per_metric - 1e-12).all() and (tests["p_holm"] > per_metric).any()
    called = tests[tests["p_holm"] < 0.05]
    assert set(zip(called["metric"], called["method"], strict=True)) == {
        ("keyword_hit_rate", "local"),
        ("evidence_recall", "global"),
    }


def test_the_family_round_trips_through_run_json_and_tests_csv(family: Family, tmp_path) -> None:
    family.tests.to_csv(tmp_path / "tests.csv", index=False)
    again = family_from_json(family.to_json(), pd.read_csv(tmp_path / "tests.csv"))
    assert again.declaration() == family.declaration()
    pd.testing.assert_frame_equal(again.tests, family.tests)


def test_too_few_pairs_are_not_counted_and_a_metric_without_a_baseline_score_is_skipped() -> None:
    scores = pd.DataFrame(
        {"naive": [0.1, 0.2, 0.3, math.nan, 0.5], "hyde": [0.2, 0.3, math.nan, 0.5, 0.7]}
    )
    no_baseline = pd.DataFrame({"naive": [math.nan] * 5, "hyde": [0.1, 0.2, 0.3, 0.4, 0.5]})
    family = declare_family({"a": scores, "b": no_baseline}, "naive")
    assert len(family.tests) == 1 and math.isnan(family.tests["p_value"].iloc[0])
    assert family.n_tests == 0 and math.isnan(family.tests["p_holm"].iloc[0])
    assert "(the other 1 method-metric pair(s) have fewer than 5" in family.declaration()
    assert "= 0 test(s)" in family.declaration()


def test_saturation_counts_the_most_common_score_and_the_baseline_falls_back() -> None:
    level = saturation(pd.DataFrame({"a": [0.0] * 9 + [1.0], "b": [math.nan] * 10}))
    assert (level.value, level.count, level.total, level.saturated) == (0.0, 9, 10, True)
    assert not saturation(pd.DataFrame({"a": [0.0] * 8 + [1.0, 0.5]})).saturated
    assert saturation(pd.DataFrame({"a": [math.nan]})).total == 0
    assert baseline_of(["hyde", "naive"]) == "naive" and baseline_of(["local", "ppr"]) == "local"
    assert stats.MIN_PAIRS == 5  # the fewest pairs a test is run on, as the family counts
