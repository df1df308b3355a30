"""``index.min_report_entities``: communities too small to need LLM prose get the nlp mode's
template report, on the demo's recorded index and on the MuSiQue graph with a fake endpoint
(a parent reads its small child's template report).

The default demo graph has two levels: five top communities (4 to 11 entities), three of them
split into seven of 2 to 7. At the default threshold (5) the five communities of 2 to 4
entities get a template and the seven others an LLM report, the parents reading their
children's templates: all recorded in the live re-index."""

from __future__ import annotations

from conftest import FakeLLM, prompt_kind, report_reply

from graphrag import schemas as S
from graphrag.index.reports.write import report_title_and_summary
from graphrag.index.stages import IndexContext, write_reports
from graphrag.llm.client import ChatLLM, track_usage
from graphrag.settings import Settings

REPORT_OPENINGS = {"report": "You write a report"}


def sizes(index) -> dict[int, int]:
    return dict(
        zip(index.communities[S.COMMUNITY], index.communities[S.ENTITY_IDS].map(len), strict=True)
    )


def test_the_demo_s_reports_replay_at_the_default_threshold(
    demo_index, replay_settings: Settings
) -> None:
    size_of = sizes(demo_index)
    threshold = replay_settings.index.min_report_entities
    small = {c for c, n in size_of.items() if n < threshold}
    assert small and len(small) < len(size_of)
    tables = {"entities": demo_index.entities, "relationships": demo_index.relationships}
    llm = ChatLLM(replay_settings)
    with track_usage() as usage:
        reports, errors = write_reports(
            demo_index.communities, tables, IndexContext(replay_settings, llm, None, progress=False)
        )
    assert errors.empty and usage.calls == len(size_of) - len(small)
    assert usage.cache_hits == usage.calls  # replayed: the LLM-written ones are unchanged
    assert list(reports[S.COMMUNITY]) == sorted(size_of)
    templated = set(reports[reports[S.CONTEXT_SOURCE] == "template"][S.COMMUNITY])
    assert templated == small
    recorded = demo_index.community_reports.set_index(S.COMMUNITY)[S.FULL_CONTENT]
    assert dict(zip(reports[S.COMMUNITY], reports[S.FULL_CONTENT], strict=True)) == (
        recorded.to_dict()
    )


def test_small_demo_communities_get_template_reports_their_parents_read(
    demo_index, fake_llm: FakeLLM, make_llm
) -> None:
    fake_llm.respond_with(lambda body: report_reply(""))
    llm = make_llm(index={"min_report_entities": 5})
    size_of = sizes(demo_index)
    small = {c for c, n in size_of.items() if n < 5}
    assert small and len(small) < len(size_of)  # the demo has communities of 3 and 4
    tables = {"entities": demo_index.entities, "relationships": demo_index.relationships}
    with track_usage() as usage:
        reports, errors = write_reports(
            demo_index.communities, tables, IndexContext(llm.settings, llm, None, progress=False)
        )
    assert errors.empty and usage.calls == len(size_of) - len(small)
    templated = reports[reports[S.CONTEXT_SOURCE] == "template"]
    assert set(templated[S.COMMUNITY]) == small
    communities = demo_index.communities.set_index(S.COMMUNITY)
    asked = [b["messages"][1]["content"] for b in fake_llm.requests]
    for _, row in templated.iterrows():
        members = demo_index.entities[
            demo_index.entities[S.ID].isin(communities.loc[row[S.COMMUNITY], S.ENTITY_IDS])
        ]
        assert all(title in row[S.FULL_CONTENT] for title in members[S.TITLE])
        assert "co-occurrence" not in row[S.SUMMARY]
        if communities.loc[row[S.COMMUNITY], S.PARENT] >= 0:  # its parent builds on it
            title, summary = report_title_and_summary(row[S.FULL_CONTENT])
            assert any(title in prompt and summary in prompt for prompt in asked), title


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
