"""Global search's reduce over several orders of the same points
(``query.global.reduce_seeds``): the orders are the ones other report-shuffle seeds give,
with no new map call; one draft per distinct order, one merge call over the distinct
drafts, and failures that cost a draft, not the answer. Orders are checked on the recorded
demo map; drafts and the merge with scripted replies."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re

import pandas as pd
import pytest
from conftest import REPO_ROOT, FakeLLM, Reply, prompt_kind

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, LLMError
from graphrag.query.global_search import search
from graphrag.query.global_search.map_context import (
    Pick,
    batch_ranks,
    cited_sentences,
    ranked,
    shuffled,
)
from graphrag.query.global_search.search import GlobalSearch

QUESTION = "What are the main themes?"
KINDS = {
    "sentences": "You read numbered sentences",
    "reduce": "You write the final answer",
    "merge": "You merge draft answers",
}
REPORT_HEAD = re.compile(r"(?m)^Report \[(\d+)\]")
POINT_CITATION = re.compile(r"\[(\d+)\]$")
THEMATIC = REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl"


def with_query(settings, **query):
    """Return ``settings`` with global search's own settings ([query.global]) changed."""
    return dataclasses.replace(
        settings, query=settings.query.changed({f"global.{k}": v for k, v in query.items()})
    )


def seeded(seed: int, *args) -> GlobalSearch:
    """Return a global search whose reports are shuffled with ``seed`` rather than llm.seed
    (which every request carries: changing it would change every recorded prompt)."""
    return type("SeededGlobalSearch", (GlobalSearch,), {"shuffle_seed": seed})(*args)


# --------------------------------------------------------------------------- orders


def test_picks_rank_by_score_then_batch_rank_then_map_order() -> None:
    picks = [
        Pick(100, "a", [4], 0),
        Pick(80, "b", [4], 0),
        Pick(100, "c", [2], 1),
        Pick(100, "d", [2], 1),
        Pick(100, "e", [9], 2),
    ]
    assert [p.text for p in ranked(picks, [0, 1, 2])] == ["a", "c", "d", "e", "b"]
    assert [p.text for p in ranked(picks, [2, 0, 1])] == ["c", "d", "e", "a", "b"]


def test_batch_ranks_follow_the_shuffle_of_the_reports() -> None:
    reports = pd.DataFrame({S.COMMUNITY: [10, 11, 12, 13]})
    batches = [reports.iloc[[i]] for i in shuffled(4, 7)]  # packed under seed 7, one a batch
    assert batch_ranks(reports, batches, 7) == [0, 1, 2, 3]
    ranks = batch_ranks(reports, batches, 1)
    place = {int(reports[S.COMMUNITY].iloc[row]): p for p, row in enumerate(shuffled(4, 1))}
    assert ranks == [place[int(b[S.COMMUNITY].iloc[0])] for b in batches]
    pairs = [reports.iloc[[0, 3]], reports.iloc[[1, 2]]]  # a batch ranks by its earliest report
    assert batch_ranks(reports, pairs, 1) == [
        min(place[10], place[13]),
        min(place[11], place[12]),
    ]


def test_a_sentence_picked_twice_is_read_once_at_its_first_place() -> None:
    picks = [Pick(100, "Kelp grew.", [3], 0), Pick(90, "kelp grew.", [1], 1)]
    assert cited_sentences(picks) == [(100, "Kelp grew. [3]", [3])]


def test_each_order_is_the_one_its_seed_gives_with_no_new_map_call(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    """On the recorded thematic map: the order for seed 1 is exactly the map of a global
    search whose reports were shuffled with seed 1 (every map prompt replayed)."""
    question = json.loads(THEMATIC.read_text().splitlines()[0])["question"]
    default = GlobalSearch(demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder)
    orders = asyncio.run(default.amap_orders(question, [default.shuffle_seed, 1, 2]))
    assert orders[0] == asyncio.run(default.amap(question))
    for seed, order in zip((1, 2), orders[1:], strict=True):
        settings = replay_settings
        other = seeded(seed, demo_index, settings, ChatLLM(settings), replay_embedder)
        assert order == asyncio.run(other.amap(question))
        assert sorted(order) == sorted(orders[0]) and order != orders[0]


def test_the_recorded_merge_reads_the_seed_runs_answers_as_its_drafts(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    """With seeds [1, 2], the drafts are the answers global search gives under those seeds
    alone (replayed), and the merge that reads them replays too."""
    question = json.loads(THEMATIC.read_text().splitlines()[0])["question"]
    settings = with_query(replay_settings, reduce_seeds=[1, 2])
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    retrieval = asyncio.run(method.aretrieve_ranked(question))
    assert len(retrieval.orders) == 3
    drafts = [asyncio.run(method.agenerate(question, items)) for items in retrieval.orders]
    for seed, draft in zip((7, 1, 2), drafts, strict=True):
        alone = with_query(replay_settings, reduce_seeds=[])
        single = seeded(seed, demo_index, alone, ChatLLM(alone), replay_embedder)
        assert draft == single.answer(question).text
    answer = method.answer(question)
    assert answer.text not in drafts and answer.failures == []
    shown = {s for items in retrieval.orders for i in items for s in i.source.split(",")}
    assert set(answer.sources) == shown


# --------------------------------------------------------------------------- drafts and merge


def scripted(fail: callable = lambda kind, body: False, reduce_reply=None):
    """Every map call picks sentences 1 and 2 at score 100 (so only the batch order tells
    equal picks apart); a draft names the reports of its points in the order it read them."""

    def reply(body: dict) -> str | Reply:
        kind = prompt_kind(body, KINDS)
        if fail(kind, body):
            return Reply("the model fell over", status=500)
        if kind == "sentences":
            return json.dumps({"sentences": [{"n": 1, "score": 100}, {"n": 2, "score": 100}]})
        if kind == "reduce":
            return reduce_reply(body) if reduce_reply else f"Draft {read_order(body)}."
        return "Merged."

    return reply


def read_order(body: dict) -> str:
    """The report numbers of a reduce prompt's points, first appearance order."""
    points = body["messages"][1]["content"].split("Points:\n", 1)[1].split("\n\nQuestion")[0]
    cited = [POINT_CITATION.search(line).group(1) for line in points.splitlines()]
    return " ".join(dict.fromkeys(cited))


@pytest.fixture
def reduce_reads_every_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "REDUCE_TOKENS", 100_000)


def ensemble(make_settings, fake_llm: FakeLLM, seeds: list[int]) -> object:
    query = {
        "global": {
            "level": 0,
            "map_style": "sentences",
            "reduce_seeds": seeds,
        }
    }
    return make_settings(fake_llm.base_url, query=query)


def requests_of(fake: FakeLLM, kind: str) -> list[dict]:
    return [r for r in fake.requests if prompt_kind(r, KINDS) == kind]


def first_report(seed: int, index: Index) -> str:
    roots = index.communities[index.communities[S.LEVEL] == 0].sort_values(S.COMMUNITY)
    return str(int(roots[S.COMMUNITY].iloc[shuffled(len(roots), seed)[0]]))


SEEDS = [1, 3]  # on the demo's five roots, seeds 7, 1 and 3 each put another report first


@pytest.mark.usefixtures("reduce_reads_every_point")
def test_distinct_drafts_are_merged_in_seed_order(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    assert len({first_report(s, demo_index) for s in (7, *SEEDS)}) == 3
    settings = ensemble(make_settings, fake_llm, SEEDS)
    fake_llm.respond_with(scripted())
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    answer = method.answer(QUESTION)

    assert answer.text == "Merged." and answer.failures == []
    drafts = [f"Draft {read_order(r)}." for r in requests_of(fake_llm, "reduce")]
    assert len(drafts) == 3 and len(requests_of(fake_llm, "sentences")) == 5  # mapped once
    (merge,) = requests_of(fake_llm, "merge")
    shown = re.findall(r"(?m)^Draft [A-Z]:\n(.*)$", merge["messages"][1]["content"])
    assert sorted(shown) == sorted(drafts)
    assert [d.split()[1] for d in shown] == [first_report(s, demo_index) for s in (7, *SEEDS)]
    assert merge["messages"][1]["content"].endswith(f"Question: {QUESTION}")
    assert set(answer.sources) == {
        f"report:{c}" for c in demo_index.communities.query("level == 0")[S.COMMUNITY]
    }


@pytest.mark.usefixtures("reduce_reads_every_point")
def test_no_merge_when_the_orders_or_the_drafts_are_the_same(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    # The shuffle's own seed again: one order, one reduce call, as with no seeds.
    settings = ensemble(make_settings, fake_llm, [7])
    fake_llm.respond_with(scripted())
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    assert method.answer(QUESTION).text.startswith("Draft ")
    assert len(requests_of(fake_llm, "reduce")) == 1 and not requests_of(fake_llm, "merge")

    fake_llm.reset()  # three orders whose drafts say the same: that draft, no merge
    settings = ensemble(make_settings, fake_llm, SEEDS)
    fake_llm.respond_with(scripted(reduce_reply=lambda body: "An answer."))
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    other = "What else happened?"  # not the cached question above: every call is new
    assert method.answer(other).text == "An answer."
    assert len(requests_of(fake_llm, "reduce")) == 3 and not requests_of(fake_llm, "merge")


@pytest.mark.usefixtures("reduce_reads_every_point")
def test_a_failed_draft_is_named_and_the_others_still_answer(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = ensemble(make_settings, fake_llm, SEEDS)
    lead = first_report(SEEDS[0], demo_index)
    fake_llm.respond_with(
        scripted(fail=lambda kind, body: kind == "reduce" and read_order(body).split()[0] == lead)
    )
    answer = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(QUESTION)
    assert answer.text == "Merged."
    assert len(answer.failures) == 1 and answer.failures[0].startswith("reduce draft 2")
    (merge,) = requests_of(fake_llm, "merge")
    assert len(re.findall(r"(?m)^Draft [A-Z]:$", merge["messages"][1]["content"])) == 2


@pytest.mark.usefixtures("reduce_reads_every_point")
def test_a_failed_merge_leaves_the_first_draft_and_every_failed_draft_fails_the_answer(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = ensemble(make_settings, fake_llm, SEEDS)
    fake_llm.respond_with(scripted(fail=lambda kind, body: kind == "merge"))
    answer = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(QUESTION)
    assert answer.text.startswith(f"Draft {first_report(7, demo_index)} ")
    assert len(answer.failures) == 1 and answer.failures[0].startswith("merge of the drafts")

    fake_llm.reset()  # another question: the drafts above are cached
    fake_llm.respond_with(scripted(fail=lambda kind, body: kind == "reduce"))
    with pytest.raises(LLMError):
        method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
        method.answer("What else happened?")
