"""The rank agreement of two question sets (studies/generated_ranking.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from studies.generated_ranking import ranking_agreement


def test_kendall_tau_between_two_sets_rankings_with_a_bootstrap_interval() -> None:
    rng = np.random.default_rng(0)
    means = np.array([0.2, 0.4, 0.6, 0.8])
    methods = ["naive", "hyde", "local", "ppr"]
    first = pd.DataFrame(rng.random((24, 4)) * 0.2 + means, columns=methods)
    second = pd.DataFrame(rng.random((30, 4)) * 0.2 + means, columns=methods)
    same = ranking_agreement(first, second, n_resamples=300)
    assert same.tau == 1.0 and same.low > 0.3 and same.high == 1.0
    assert (same.n_first, same.n_second, same.methods) == (24, 30, tuple(methods))
    reversed_ = second.rename(columns=dict(zip(methods, methods[::-1], strict=True)))
    opposite = ranking_agreement(first, reversed_, n_resamples=300)
    assert opposite.tau == -1.0 and opposite.high < 0
    # noise only: the interval spans zero
    noise = ranking_agreement(
        pd.DataFrame(rng.random((24, 4)), columns=methods),
        pd.DataFrame(rng.random((24, 4)), columns=methods),
        n_resamples=300,
    )
    assert noise.low < 0 < noise.high
    with pytest.raises(ValueError, match="fewer than two methods"):
        ranking_agreement(first[["naive"]], second[["naive"]])
