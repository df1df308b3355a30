"""``index.min_report_entities``: communities too small to need LLM prose get the nlp mode's
template report, on the demo's v1 recorded index (the other reports still replay) and on a fake
endpoint (a parent reads its small child's template report).

The v1 index, because it has what these behaviours need: a two-entity community with a parent,
and every report written by the LLM (v1 has no templates). The default demo graph is five
communities of four to nine entities, none small, none split."""

from __future__ import annotations

import dataclasses

from conftest import FakeLLM, prompt_kind, report_reply

from graphrag.config import Settings
from graphrag.index import schemas as S
from graphrag.index.pipeline import IndexContext, write_reports
from graphrag.llm import ChatLLM, track_usage

REPORT_OPENINGS = {"report": "You write a short report"}


def sizes(index) -> dict[int, int]:
    return dict(
        zip(index.communities[S.COMMUNITY], index.communities[S.ENTITY_IDS].map(len), strict=True)
    )


def test_small_demo_communities_get_template_reports_and_the_rest_replay(
    v1_demo_index, v1_settings: Settings
) -> None:
    demo_index, replay_settings = v1_demo_index, v1_settings
    size_of = sizes(demo_index)
    small = {c for c, n in size_of.items() if n < 3}
    assert small and len(small) < len(size_of)  # the demo has a two-entity community
    index = dataclasses.replace(replay_settings.index, min_report_entities=3)
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
    assert set(templated[S.COMMUNITY]) == small
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


def test_off_in_v1_every_community_is_written_by_the_llm(
    v1_demo_index, v1_settings: Settings
) -> None:
    demo_index, replay_settings = v1_demo_index, v1_settings
    assert replay_settings.index.min_report_entities == 0
    tables = {"entities": demo_index.entities, "relationships": demo_index.relationships}
    llm = ChatLLM(replay_settings)
    with track_usage() as usage:
        reports, _ = write_reports(
            demo_index.communities,
            tables,
            IndexContext(replay_settings, llm, None, progress=False),
        )
    assert usage.calls == len(demo_index.communities)
    assert (reports[S.CONTEXT_SOURCE] != "template").all()


def test_a_parent_reads_its_small_childs_template_report(
    v1_demo_index, fake_llm: FakeLLM, make_llm
) -> None:
    demo_index = v1_demo_index
    fake_llm.respond_with(lambda body: report_reply(""))
    # a tiny context budget: a parent's own list does not fit, so it reads its children's
    llm = make_llm(v1=True, index={"min_report_entities": 3, "report_context_tokens": 300})
    tables = {"entities": demo_index.entities, "relationships": demo_index.relationships}
    with track_usage() as usage:
        reports, errors = write_reports(
            demo_index.communities, tables, IndexContext(llm.settings, llm, None, progress=False)
        )
    assert errors.empty
    assert all(prompt_kind(body, REPORT_OPENINGS) == "report" for body in fake_llm.requests)
    size_of = sizes(demo_index)
    templated = reports[reports[S.CONTEXT_SOURCE] == "template"]
    assert not templated.empty
    assert set(templated[S.COMMUNITY]) == {c for c, n in size_of.items() if n < 3}
    assert usage.calls == len(size_of) - len(templated)  # same contexts share one request
    parents = demo_index.communities.set_index(S.COMMUNITY)[S.PARENT]
    for _, row in templated.iterrows():
        parent = parents[row[S.COMMUNITY]]
        assert parent >= 0
        asked = [b["messages"][1]["content"] for b in fake_llm.requests]
        assert any(row[S.FULL_CONTENT] in prompt for prompt in asked)
