"""Prompts: every builder renders byte for byte what it rendered before the text moved into
template files (tests/data/prompt_renders.json, written by tests/prompt_renders.py from the
code before the move), so the recorded LLM cache replays untouched."""

from __future__ import annotations

import json

import pytest
from prompt_renders import FIXTURE, render

from graphrag import prompts

RENDERS = json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "case", RENDERS["cases"], ids=[f"{c['call']}-{i}" for i, c in enumerate(RENDERS["cases"])]
)
def test_every_builder_renders_what_it_rendered_before(case: dict) -> None:
    rendered = json.loads(json.dumps(render(case["call"], case["args"], case["kwargs"])))
    assert rendered == case["result"]


def test_every_constant_is_what_it_was_before() -> None:
    for name, before in RENDERS["constants"].items():
        value = getattr(prompts, name)
        if name == "REPORT_FORMS":
            value = {form: build(4, 3) for form, build in value.items()}
        assert json.loads(json.dumps(value)) == before, name
