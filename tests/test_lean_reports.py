"""``index.min_report_entities``: communities too small to need LLM prose get the nlp mode's
template report, on the demo's recorded index (the other reports still replay) and on the
MuSiQue graph with a fake endpoint (a parent reads its small child's template report).

The default demo graph is five communities of four to nine entities, none split: raising the
threshold above four templates its smallest; MuSiQue's graph has small communities with
parents."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import FakeLLM, prompt_kind, report_reply

from graphrag.config import Settings
from graphrag.index import schemas as S
from graphrag.index.pipeline import IndexContext, write_reports
from graphrag.index.reports import report_title_and_summary
from graphrag.llm import ChatLLM, track_usage

REPORT_OPENINGS = {"report": "You write a report"}


def sizes(index) -> dict[int, int]:
    return dict(
        zip(index.communities[S.COMMUNITY], index.communities[S.ENTITY_IDS].map(len), strict=True)
    )


@pytest.mark.parametrize("threshold", [0, 5])
def test_small_demo_communities_get_template_reports_and_the_rest_replay(
    demo_index, replay_settings: Settings, threshold: int
) -> None:
    size_of = sizes(demo_index)
    small = {c for c, n in size_of.items() if n < threshold}
    if threshold:
        assert small and len(small) < len(size_of)  # the demo has a four-entity community
    index = dataclasses.replace(replay_settings.index, min_report_entities=threshold)
    settings = dataclasses.replace(replay_settings, index=index)
    tables = {"entities": demo_index.entities, "relationships": demo_index.relationships}
    llm = ChatLLM(settings)
    with track_usage() as usage:
        reports, errors = write_reports(
            demo_index.communities, tables, IndexContext(settings, llm, None, progress=False)
        )
    assert errors.empty and usage.calls == len(size_of) - len(small)
    assert usage.cache_hits == usage.calls  # replayed: the LLM-written ones are unchanged
    assert list(reports[S.COMMUNITY]) == sorted(size_of)
    templated = reports[reports[S.CONTEXT_SOURCE] == "template"]
    assert set(templated[S.COMMUNITY]) == small  # off (0): every one is written by the LLM
    recorded = demo_index.community_reports.set_index(S.COMMUNITY)[S.FULL_CONTENT]
    for community, content in zip(reports[S.COMMUNITY], reports[S.FULL_CONTENT], strict=True):
        assert (content == recorded[community]) == (community not in small)
    for _, row in templated.iterrows():
        members = demo_index.entities[
            demo_index.entities[S.ID].isin(
                demo_index.communities.set_index(S.COMMUNITY).loc[row[S.COMMUNITY], S.ENTITY_IDS]
            )
        ]
        assert all(title in row[S.FULL_CONTENT] for title in members[S.TITLE])
        assert "co-occurrence" not in row[S.SUMMARY]


def test_a_parent_reads_its_small_childs_template_report(
    musique_index, fake_llm: FakeLLM, make_llm
) -> None:
    fake_llm.respond_with(lambda body: report_reply(""))
    llm = make_llm(index={"min_report_entities": 3})
    tables = {"entities": musique_index.entities, "relationships": musique_index.relationships}
    with track_usage() as usage:
        reports, errors = write_reports(
            musique_index.communities, tables, IndexContext(llm.settings, llm, None, progress=False)
        )
    assert errors.empty
    assert all(prompt_kind(body, REPORT_OPENINGS) == "report" for body in fake_llm.requests)
    size_of = sizes(musique_index)
    templated = reports[reports[S.CONTEXT_SOURCE] == "template"]
    assert set(templated[S.COMMUNITY]) == {c for c, n in size_of.items() if n < 3}
    assert usage.calls == len(size_of) - len(templated)  # same contexts share one request
    parents = musique_index.communities.set_index(S.COMMUNITY)[S.PARENT]
    children = templated[templated[S.COMMUNITY].map(parents) >= 0]
    assert not children.empty, "MuSiQue has small communities with a parent"
    asked = [b["messages"][1]["content"] for b in fake_llm.requests]
    for content in children[S.FULL_CONTENT]:
        title, summary = report_title_and_summary(content)
        assert any(title in prompt and summary in prompt for prompt in asked), title
