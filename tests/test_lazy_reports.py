"""Lazy community reports (``index.lazy_reports``): indexing writes no LLM report, a query
writes the ones it reads, with the prompts indexing would have sent, once.

On the demo (two levels, replayed from the recorded cache) a lazy index answers global and local
search exactly as the eager index does; on the MuSiQue graph (four levels) a parent written
lazily reads its children's reports as the indexing pipeline's own report stage writes them
(model replies scripted: what is tested is which prompts are sent, not what the model says).
Adding a document to a lazy index keeps it lazy.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import re
import shutil

import pandas as pd
import pytest
from conftest import DEMO_DOCS, UNPACKED, FakeLLM, Reply, indexing_model, replayed_index
from test_reports import context_of

from graphrag import schemas as S
from graphrag.index.incremental import update_index
from graphrag.index.pipeline import build_index
from graphrag.index.reports.lazy import (
    aensure_reports,
    built_settings,
    is_lazy,
    missing_communities,
)
from graphrag.index.stages import IndexContext, prose_communities, write_reports
from graphrag.index.store import Index, load_index
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import run_sync
from graphrag.query.global_search.search import GlobalSearch
from graphrag.query.local import LocalSearch
from graphrag.query.naive import NaiveRAG


def with_index_settings(settings, **values):
    return dataclasses.replace(settings, index=dataclasses.replace(settings.index, **values))


@pytest.fixture(scope="module")
def lazy_demo(replay_settings, replay_embedder, tmp_path_factory) -> Index:
    settings = with_index_settings(replay_settings, lazy_reports=True)
    folder = tmp_path_factory.mktemp("lazy_demo")
    return replayed_index(DEMO_DOCS, settings, replay_embedder, folder)


def test_a_lazy_index_costs_no_report_call_and_keeps_only_templates(lazy_demo: Index) -> None:
    usage = lazy_demo.manifest["summary"]["stages"]["reports"]
    assert usage["calls"] == 0
    # a community too small for an LLM report has its template at once (no call); the
    # others wait for a query
    least = lazy_demo.manifest["settings"]["index"]["min_report_entities"]
    communities = lazy_demo.communities
    small = communities.loc[communities[S.ENTITY_IDS].map(len) < least, S.COMMUNITY]
    assert 0 < len(small) < len(communities), "the demo has communities of both kinds"
    reports = lazy_demo.community_reports
    assert sorted(reports[S.COMMUNITY]) == sorted(small)
    assert set(reports[S.CONTEXT_SOURCE]) == {"template"}
    assert lazy_demo.manifest["settings"]["index"]["lazy_reports"] is True


def test_lazy_index_answers_as_the_eager_one_and_writes_reports_once(
    lazy_demo: Index, demo_index: Index, replay_settings, replay_embedder
) -> None:
    index = copy.copy(lazy_demo)  # the module's fixture stays report-less for the other test
    llm = ChatLLM(replay_settings)  # replay: a report the cache lacks fails the test
    question = json.loads(
        next(line for line in open(DEMO_DOCS.parent / "questions.jsonl") if '"q19"' in line)
    )["question"]

    naive = NaiveRAG(index, replay_settings, llm, replay_embedder).answer(question)
    assert set(index.community_reports[S.CONTEXT_SOURCE]) <= {"template"}, (
        "naive RAG reads no report, so no LLM report is written"
    )
    assert naive.usage.calls == 1

    lazy = GlobalSearch(index, replay_settings, llm, replay_embedder).answer(question)
    eager = GlobalSearch(demo_index, replay_settings, llm, replay_embedder).answer(question)
    assert (lazy.text, lazy.sources, lazy.contexts) == (eager.text, eager.sources, eager.contexts)
    # the lazy answer paid for the reports it needed (the mapped level's, and the children
    # those parents read: every one of the demo's), one call per LLM-written report (a
    # template costs none); the eager index paid at indexing
    written = index.community_reports.set_index(S.COMMUNITY)[S.FULL_CONTENT]
    sources = index.community_reports[S.CONTEXT_SOURCE]
    assert len(written) == len(demo_index.communities)
    assert lazy.usage.calls == eager.usage.calls + int((sources != "template").sum())
    assert (
        written.to_dict()
        == demo_index.community_reports.set_index(S.COMMUNITY)[S.FULL_CONTENT].to_dict()
    )

    local = LocalSearch(index, replay_settings, llm, replay_embedder).answer(question)
    eager_local = LocalSearch(demo_index, replay_settings, llm, replay_embedder).answer(question)
    assert (local.text, local.sources) == (eager_local.text, eager_local.sources)
    assert local.usage.calls == eager_local.usage.calls, "the reports exist now: none again"


def is_report(body: dict) -> bool:
    return body["messages"][0]["content"].startswith("You write a report")


def subtree(communities: pd.DataFrame, root: int) -> list[int]:
    children = dict(zip(communities[S.COMMUNITY], communities[S.CHILDREN], strict=True))
    found, stack = [], [root]
    while stack:
        community = stack.pop()
        found.append(community)
        stack += [int(c) for c in children[community]]
    return sorted(found)


def lazy_view(index: Index) -> Index:
    """``index`` as a lazy build leaves it: template reports of the small communities only."""
    view = copy.copy(index)
    settings = copy.deepcopy(index.manifest["settings"])
    settings["index"]["lazy_reports"] = True
    view.manifest = {**index.manifest, "settings": settings}
    small = ~prose_communities(index.communities, built_settings(index))
    smalls = set(index.communities.loc[small, S.COMMUNITY])
    view.community_reports = index.community_reports[
        index.community_reports[S.COMMUNITY].isin(smalls)
    ].reset_index(drop=True)
    return view


def test_missing_reports_are_the_wanted_ones_and_their_unwritten_descendants(
    musique_index: Index,
) -> None:
    view = lazy_view(musique_index)
    communities = view.communities
    prose = set(communities.loc[prose_communities(communities, built_settings(view)), S.COMMUNITY])
    tree = subtree(communities, 5)  # a root with four levels' worth of mixed sizes
    assert missing_communities(view, [5]) == sorted(set(tree) & prose)
    assert set(tree) - prose, "the subtree has template children, which are never rewritten"

    # a written child's own subtree is not needed again; a failed report is not retried
    child = next(c for c in tree if c != 5 and c in prose)
    row = communities[communities[S.COMMUNITY] == child].iloc[0]
    written = copy.copy(view)
    written.community_reports = pd.concat(
        [view.community_reports, pd.DataFrame([{S.COMMUNITY: child, S.FULL_CONTENT: "# x"}])],
        ignore_index=True,
    )
    below = set(subtree(communities, child))
    assert missing_communities(written, [5]) == sorted((set(tree) & prose) - below)
    failed = copy.copy(view)
    failed.errors = pd.DataFrame([{S.STAGE: "reports", S.ITEM_ID: row[S.ID], S.ERROR: "x"}])
    assert child not in missing_communities(failed, [5])
    assert missing_communities(view, None) == sorted(prose)


def test_a_parent_written_lazily_reads_its_children_as_the_report_stage_does(
    musique_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    contexts: list[str] = []

    def model(body: dict) -> str:
        context = context_of(body)
        contexts.append(context)
        digest = hashlib.sha256(context.encode()).hexdigest()[:8]
        return json.dumps(
            {
                "title": f"Community {digest}",
                "summary": f"{len(context.splitlines())} lines of data.",
                "rating": len(context) % 11,
                "rating_explanation": "by length",
                "findings": [{"summary": digest, "explanation": context.splitlines()[0]}],
            }
        )

    fake_llm.respond_with(model)
    settings = make_settings(fake_llm.base_url, cache={"mode": "off"})
    llm = ChatLLM(settings)
    view = lazy_view(musique_index)
    roots = [5, 25]  # two roots, each with a template child among prose ones
    trees = [c for root in roots for c in subtree(view.communities, root)]

    # the pipeline's report stage over those subtrees (a community's prompt depends only on
    # the communities below it, all inside its subtree)
    part = view.communities[view.communities[S.COMMUNITY].isin(trees)]
    ctx = IndexContext(
        with_index_settings(settings, **dataclasses.asdict(built_settings(musique_index))),
        llm,
        replay_embedder,
        progress=False,
    )
    eager, _ = write_reports(
        part, {"entities": view.entities, "relationships": view.relationships}, ctx
    )
    eager_contexts, contexts[:] = sorted(contexts), []
    prose = eager[eager[S.CONTEXT_SOURCE] != "template"]
    # leaves, and parents that built on their children's reports
    assert "entities" in set(prose[S.CONTEXT_SOURCE])
    assert set(prose[S.CONTEXT_SOURCE]) & {"child_summaries", "mixed", "child_reports"}

    for root in roots:
        assert run_sync(aensure_reports(view, [root], llm, replay_embedder)) > 0
    assert sorted(contexts) == eager_contexts, "the same prompts, each sent once"
    lazy = view.community_reports.set_index(S.COMMUNITY)
    for row in prose.itertuples(index=False):
        community = getattr(row, S.COMMUNITY)
        assert lazy.loc[community, S.FULL_CONTENT] == getattr(row, S.FULL_CONTENT)
        assert lazy.loc[community, S.CONTEXT_SOURCE] == getattr(row, S.CONTEXT_SOURCE)
        assert len(lazy.loc[community, S.FULL_CONTENT_EMBEDDING]) > 0
    assert run_sync(aensure_reports(view, roots, llm, replay_embedder)) == 0
    assert len(contexts) == len(eager_contexts), "nothing is written twice"


def test_a_lazy_index_stays_lazy_when_documents_are_added(
    fake_llm: FakeLLM, make_settings, replay_embedder, demo_subset, tmp_path
) -> None:
    fake_llm.respond_with(indexing_model)
    settings = make_settings(fake_llm.base_url, index={**UNPACKED, "lazy_reports": True})
    llm = ChatLLM(settings)
    out = tmp_path / "lazy_llm_index"
    build_index(demo_subset, out, settings, llm, replay_embedder, progress=False)
    added = tmp_path / "more"
    added.mkdir()
    shutil.copy(DEMO_DOCS / "09_mayoral_election.md", added / "09_mayoral_election.md")
    # the caller's settings say eager: the index's own (lazy) setting wins
    summary = update_index(
        out,
        make_settings(fake_llm.base_url, index=UNPACKED),
        llm,
        replay_embedder,
        add=added,
    )
    assert summary.added_documents == ["09_mayoral_election"]
    index = load_index(out)
    assert not any(map(is_report, fake_llm.requests)), "no report is written before a query"
    assert is_lazy(index)
    prose = prose_communities(index.communities, built_settings(index))
    assert prose.any(), "some community is large enough for an LLM report"
    assert set(index.community_reports[S.COMMUNITY]) == set(
        index.communities.loc[~prose, S.COMMUNITY]
    )
    assert missing_communities(index, None) == sorted(index.communities.loc[prose, S.COMMUNITY])


def test_a_lazy_report_that_cannot_be_written_degrades_every_answer_that_wants_it(
    lazy_demo: Index, demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    index = copy.copy(lazy_demo)
    fake_llm.respond_with(
        lambda body: Reply("down", status=500) if is_report(body) else "An answer."
    )
    settings = make_settings(fake_llm.base_url)
    local = LocalSearch(index, settings, ChatLLM(settings), replay_embedder)
    question = "Who founded the Kestrel Bay Marine Institute?"

    first = local.answer(question)

    written = sum(is_report(r) for r in fake_llm.requests)
    assert written > 0 and first.text == "An answer."
    failed = set(index.errors.loc[index.errors[S.STAGE] == "reports", S.ITEM_ID])
    number = dict(zip(index.communities[S.ID], index.communities[S.COMMUNITY], strict=True))
    named = [
        re.fullmatch(r"lazy report of community (\d+): LLMError: .*500.*", f)
        for f in first.failures
    ]
    assert first.failures and all(named), first.failures
    communities = [int(m.group(1)) for m in named]
    assert communities == sorted(communities) and set(communities) <= {number[i] for i in failed}
    # the wanted reports the answer went without: those its entities' communities hold
    selected = set(local.select_entities(question))  # entity ids
    assert set(communities) == set(local.report_hits(selected)) & {number[i] for i in failed}

    again = local.answer(question)
    assert sum(is_report(r) for r in fake_llm.requests) == written, "a failed report is not retried"
    assert again.failures == first.failures, "every answer that wants it goes without it"
    eager = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(question)
    assert eager.failures == []
