"""index.summary_threshold_tokens over the demo's v1 recorded extraction: entities whose joined
descriptions are short keep them joined (no call); the rest are summarized exactly as the
v1 pipeline summarizes them (the same prompts, so replay answers them). The v1 recording,
because it summarized every entity with several descriptions (threshold 0): the defaults'
recording holds only the summaries past its threshold of 100 tokens."""

from __future__ import annotations

import dataclasses

import pytest

from graphrag.index import schemas as S
from graphrag.index.graph import merge_entities, needs_summary, summarize_entities
from graphrag.llm import ChatLLM, track_usage
from graphrag.tokens import count_tokens


@pytest.fixture(scope="module")
def demo_entities(v1_demo_mentions):
    """The demo's merged entities, from the v1 recorded extraction replies."""
    return merge_entities(v1_demo_mentions[0])


def summarize(entities, settings, threshold: int):
    index = dataclasses.replace(settings.index, summary_threshold_tokens=threshold)
    with track_usage() as usage:
        result, errors = summarize_entities(entities, ChatLLM(settings), index, progress=False)
    return result, errors, usage


def test_threshold_zero_summarizes_every_entity_with_several_descriptions(
    demo_entities, v1_settings
) -> None:
    several = demo_entities["descriptions"].map(len).gt(1).sum()
    _, errors, usage = summarize(demo_entities, v1_settings, 0)
    assert several > 10
    assert usage.calls == usage.cache_hits == several
    assert errors.empty


@pytest.mark.parametrize("threshold", [30, 60])
def test_only_descriptions_longer_than_the_threshold_are_summarized(
    demo_entities, v1_settings, threshold: int
) -> None:
    joined = [" ".join(d) for d in demo_entities["descriptions"]]
    long = [
        len(d) > 1 and count_tokens(j) > threshold
        for d, j in zip(demo_entities["descriptions"], joined, strict=True)
    ]
    several = demo_entities["descriptions"].map(len).gt(1)
    assert 0 < sum(long) < several.sum()  # the threshold splits the demo's entities

    result, errors, usage = summarize(demo_entities, v1_settings, threshold)
    baseline, _, _ = summarize(demo_entities, v1_settings, 0)

    assert usage.calls == usage.cache_hits == sum(long)
    assert errors.empty
    for i, is_long in enumerate(long):
        if is_long:  # the recorded summary, as in the default pipeline
            assert result[S.DESCRIPTION].iloc[i] == baseline[S.DESCRIPTION].iloc[i]
        else:  # kept whole: every description's text is in the entity's description
            assert result[S.DESCRIPTION].iloc[i] == joined[i]


def test_needs_summary() -> None:
    assert needs_summary(["a", "b"], 0)
    assert not needs_summary(["short one", "short two"], 50)
    assert needs_summary(["word " * 40, "word " * 40], 50)
