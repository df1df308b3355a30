"""The dry run's measured figures are what the committed records give: regenerating them
(``python -m studies.cost_model --write``) changes nothing, so no figure is typed by hand."""

from __future__ import annotations

import json

import pytest

from studies import cost_model


@pytest.mark.parametrize(
    ("path", "compute"),
    [
        (cost_model.SPEED_FILE, cost_model.speed_figures),
        (cost_model.ASSUMPTIONS_FILE, cost_model.assumptions),
    ],
    ids=["speed", "assumptions"],
)
def test_the_committed_figures_are_the_records(path, compute) -> None:
    committed = json.loads(path.read_text(encoding="utf-8"))
    assert json.loads(json.dumps(compute(), sort_keys=True)) == committed


def test_the_speed_is_in_the_measured_range() -> None:
    speed = json.loads(cost_model.SPEED_FILE.read_text(encoding="utf-8"))
    # the guide for the default model on 2 cores: 10-20 completion tok/s per slot
    assert 10 <= speed["completion_tokens_per_second"] / speed["server"]["parallel"] <= 20
    assert speed["prompt_tokens_per_second"] > speed["completion_tokens_per_second"]
