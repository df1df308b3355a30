"""index.summary_threshold_tokens over the demo's recorded extraction: entities whose joined
descriptions are short keep them joined (no call); the rest are summarized exactly as the
default pipeline summarizes them (the same prompts, so replay answers them). The recording
holds the summaries past the default threshold (100 tokens), so higher thresholds replay;
threshold 0 is counted against a fake endpoint."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import FakeLLM, replayed_mentions

from graphrag import schemas as S
from graphrag.index.graph.merge import merge_graph_mentions, needs_summary, summarize_entities
from graphrag.llm.client import ChatLLM, track_usage
from graphrag.text.tokens import count_tokens


@pytest.fixture(scope="module")
def demo_entities(replay_settings):
    """The demo's merged entities, from the recorded extraction replies in Microsoft's tuple
    style (without the relationship follow-up), as the pipeline merges them. The default pipe
    style's descriptions are short: no entity of the demo passes the 100-token threshold, so
    they could not tell a threshold that splits the summarized entities."""
    index = dataclasses.replace(
        replay_settings.index, record_style="tuple", relationships_follow_up=False
    )
    entity, relationship, units = replayed_mentions(
        dataclasses.replace(replay_settings, index=index)
    )
    return merge_graph_mentions(entity, relationship, units, replay_settings.index)[0]


def summarize(entities, settings, threshold: int):
    index = dataclasses.replace(settings.index, summary_threshold_tokens=threshold)
    with track_usage() as usage:
        result, errors = summarize_entities(entities, ChatLLM(settings), index, progress=False)
    return result, errors, usage


def test_threshold_zero_summarizes_every_entity_with_several_descriptions(
    demo_entities, fake_llm: FakeLLM, make_settings
) -> None:
    several = demo_entities[S.DESCRIPTIONS].map(len).gt(1).sum()
    fake_llm.respond_with(lambda body: "A merged description.")
    result, errors, usage = summarize(demo_entities, make_settings(fake_llm.base_url), 0)
    assert several > 10
    assert usage.calls == fake_llm.calls == several
    assert errors.empty
    assert (result[S.DESCRIPTION] == "A merged description.").sum() == several


@pytest.mark.parametrize("rank", ["shortest", "second longest"])
def test_only_descriptions_longer_than_the_threshold_are_summarized(
    demo_entities, replay_settings, rank: str
) -> None:
    joined = [" ".join(d) for d in demo_entities[S.DESCRIPTIONS]]
    size = [
        count_tokens(j) if len(d) > 1 else 0
        for d, j in zip(demo_entities[S.DESCRIPTIONS], joined, strict=True)
    ]
    default = replay_settings.index.summary_threshold_tokens
    recorded = sorted(n for n in size if n > default)  # the summaries the recording holds
    assert len(recorded) >= 3
    # a threshold at one of their lengths: the longer ones replay, that one and shorter join
    threshold = recorded[0] if rank == "shortest" else recorded[-2]
    long = [n > threshold for n in size]
    assert 0 < sum(long) < len(recorded)  # the threshold splits the demo's summarized entities

    result, errors, usage = summarize(demo_entities, replay_settings, threshold)
    baseline, _, _ = summarize(demo_entities, replay_settings, default)

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
