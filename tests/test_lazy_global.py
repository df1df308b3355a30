"""Global search at a budget (graphrag/query/lazy_global.py, LazyGraphRAG's query): the
community ranking, the batches of relevance tests, the deepening into relevant communities
only, the stop after z misses and the budget of calls, over a hand-made hierarchy whose chunk
ranks are set by their vectors; then over the demo index with a scripted model. The model is
a fake endpoint; the method is real."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import FakeLLM, Reply, prompt_kind
from scripted_model import scripted_model

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import run_sync
from graphrag.query import lazy_global
from graphrag.query.lazy_global import (
    LazyGlobalSearch,
    LazyGlobalSettings,
    Search,
    chunk_sentences,
    planned_tests,
    ranked_communities,
)
from graphrag.query.registry import METHODS, OPT_IN_METHODS, make_methods
from graphrag.settings import REPO_ROOT, SettingsError, load_settings
from workbench.eval import dry_run
from workbench.eval.dry_run import estimate_eval

KINDS = {"test": "You test whether a text helps", "answer": "You answer a question"}
SENTENCE = re.compile(r"(?m)^\((\d+)\) (.*)$")


def kind_of(body: dict) -> str:
    return prompt_kind(body, KINDS)


def sentences_tested(fake: FakeLLM) -> list[list[str]]:
    """Return the numbered sentences of every relevance test, in the order sent."""
    return [
        [s for _, s in SENTENCE.findall(r["messages"][1]["content"])]
        for r in fake.requests
        if kind_of(r) == "test"
    ]


# --------------------------------------------------------------------------- a hand-made index

# u<i> is the i-th nearest chunk to the question (its vector is i * 0.1 rad away from it).
UNITS = [f"u{i}" for i in range(8)]
# (community, level, parent, children, text units): roots A=0, B=1, C=2 best-first B (u0),
# C (u1), A (u2); A's children 3 and 4, B's child 5, C has none.
HIERARCHY = [
    (0, 0, -1, [3, 4], ["u2", "u3", "u6"]),
    (1, 0, -1, [5], ["u0", "u5", "u7"]),
    (2, 0, -1, [], ["u1", "u4"]),
    (3, 1, 0, [], ["u3"]),
    (4, 1, 0, [], ["u2", "u6"]),
    (5, 1, 1, [], ["u5", "u7"]),
]


def unit_text(unit: str) -> str:
    return f"# Report {unit}\nThe chunk {unit} tells one thing. It tells {unit} a second thing."


def small_index(communities: bool = True) -> Index:
    angles = [i * 0.1 for i in range(len(UNITS))]
    units = pd.DataFrame(
        {
            S.ID: UNITS,
            S.TEXT: [unit_text(u) for u in UNITS],
            S.TEXT_EMBEDDING: [[math.cos(a), math.sin(a)] for a in angles],
        }
    )
    rows = HIERARCHY if communities else []
    table = pd.DataFrame(
        rows, columns=[S.COMMUNITY, S.LEVEL, S.PARENT, S.CHILDREN, S.TEXT_UNIT_IDS]
    )
    empty = pd.DataFrame()
    return Index(Path("."), empty, units, empty, empty, table, empty, empty, empty)


class TowardsTheFirstChunk:
    """The embedder of the question: the direction of u0."""

    def embed_one(self, text: str) -> np.ndarray:
        return np.array([1.0, 0.0], dtype=np.float32)


def relevant_units(*units: str, fail: str | None = None):
    """A model whose relevance test finds sentence 2 of ``units``' chunks relevant (``fail``:
    that chunk's test answers 500), and whose answer names its context."""

    def reply(body: dict) -> str | Reply:
        text = body["messages"][1]["content"]
        if kind_of(body) != "test":
            return "The answer [1]."
        unit = re.search(r"Report (u\d)", text).group(1)
        if unit == fail:
            return Reply("down", status=500)
        return json.dumps({"relevant": [2, 99] if unit in units else []})

    return reply


@pytest.fixture(autouse=True)
def one_test_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """One relevance test at a time unless a test says (the tests of a batch reach the
    endpoint in any order)."""
    monkeypatch.setattr(lazy_global, "BATCH_SIZE", 1)


def lazy(make_settings, fake: FakeLLM, index: Index | None = None, **own) -> LazyGlobalSearch:
    """The method over ``index`` (the hand-made one)."""
    settings = make_settings(fake.base_url, query={"lazy_global": own})
    return LazyGlobalSearch(
        index or small_index(), settings, ChatLLM(settings), TowardsTheFirstChunk()
    )


def units_tested(fake: FakeLLM) -> list[str]:
    return [texts[0].removeprefix("Report ") for texts in sentences_tested(fake)]


def test_communities_rank_by_their_top_k_chunks_and_a_community_without_chunks_is_last() -> None:
    units_of = {0: [2, 3, 6], 1: [0, 6, 7], 2: [1, 4], 9: []}
    rank_of = {r: r for r in range(8)}
    assert ranked_communities([0, 1, 2, 9], units_of, rank_of, 1) == [1, 2, 0, 9]
    # top-2: B (0, 6: mean 3) falls behind C (1, 4) and A (2, 3), tied at 2.5, C's best first
    assert ranked_communities([0, 1, 2, 9], units_of, rank_of, 2) == [2, 0, 1, 9]
    tied = {0: [4], 1: [4]}
    assert ranked_communities([1, 0], tied, {4: 0}, 1) == [0, 1]


def test_a_batch_plans_the_best_untested_chunks_once_each_within_the_budget() -> None:
    units_of = {0: [3, 1, 2], 1: [1, 4]}
    rank_of = {r: r for r in range(5)}
    search = Search(verdicts={1: []}, spent=1)
    assert planned_tests([0, 1], units_of, rank_of, search, 1, 10) == {0: [2], 1: [4]}
    assert planned_tests([0, 1], units_of, rank_of, search, 2, 10) == {0: [2, 3], 1: [4]}
    # one test left: the first community takes it
    assert planned_tests([0, 1], units_of, rank_of, search, 2, 2) == {0: [2], 1: []}


def test_chunk_sentences_keep_the_heading_and_split_sentences() -> None:
    assert chunk_sentences("# Minutes of May\n\nItem 1: fund. It grew.\n- A list item here.") == [
        "Minutes of May",
        "Item 1: fund.",
        "It grew.",
        "A list item here.",
    ]


def test_roots_are_tested_best_first_then_the_relevant_ones_children(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(relevant_units(*UNITS))
    method = lazy(make_settings, fake_llm, relevance_budget=20)

    answer = method.answer("What happened?")

    # roots B, C, A by their best chunk; then the children of all three, best-first:
    # 4 (u2 tested, u6 not), 3 (u3), 5 (u5); u4 and u7 are never the best untested chunk
    assert units_tested(fake_llm) == ["u0", "u1", "u2", "u6", "u3", "u5"]
    assert [kind_of(r) for r in fake_llm.requests].count("answer") == 1
    assert fake_llm.calls == 7 and answer.usage.calls == 7
    assert answer.failures == []
    # the answer reads the relevant chunks grouped by community, in the order found
    assert answer.sources == [f"text_unit:{u}" for u in ["u0", "u5", "u1", "u2", "u3", "u6"]]
    assert answer.ranking[:6] == answer.sources


@pytest.mark.parametrize("batch_size", [1, 2, 3])
@pytest.mark.parametrize("budget", [1, 2, 3, 4, 5, 6, 7])
def test_the_calls_never_exceed_the_budget_and_one_answer(
    make_settings, fake_llm: FakeLLM, budget: int, batch_size: int, monkeypatch
) -> None:
    fake_llm.respond_with(relevant_units(*UNITS))
    monkeypatch.setattr(lazy_global, "BATCH_SIZE", batch_size)
    method = lazy(make_settings, fake_llm, relevance_budget=budget)

    answer = method.answer("What happened?")

    tests = len(sentences_tested(fake_llm))
    assert tests == min(budget, 6)
    assert answer.usage.calls == fake_llm.calls == tests + 1


def test_only_relevant_communities_are_deepened(make_settings, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(relevant_units("u0", "u3"))
    method = lazy(make_settings, fake_llm, relevance_budget=20)

    answer = method.answer("What happened?")

    # B alone was relevant: its child 5 is tested, A's children (u3's community) are not
    assert units_tested(fake_llm) == ["u0", "u1", "u2", "u5"]
    assert answer.sources == ["text_unit:u0"]


def test_z_successive_misses_end_the_level_and_nothing_relevant_falls_back(
    make_settings, fake_llm: FakeLLM, monkeypatch
) -> None:
    fake_llm.respond_with(relevant_units())
    monkeypatch.setattr(lazy_global, "MISSES_BEFORE_DEEPENING", 2)
    method = lazy(make_settings, fake_llm, relevance_budget=20)

    answer = method.answer("What happened?")

    assert units_tested(fake_llm) == ["u0", "u1"]  # A is never tested
    assert fake_llm.calls == 3
    assert answer.failures == [
        "relevance tests: none of 2 chunks tested was relevant; answered from the chunks "
        "nearest the question"
    ]
    assert answer.sources[0] == "text_unit:u0"


def test_a_batch_runs_its_tests_together_and_a_miss_in_it_still_counts(
    make_settings, fake_llm: FakeLLM, monkeypatch
) -> None:
    fake_llm.respond_with(relevant_units())
    fake_llm.delay = 0.2  # long enough for the two to overlap
    monkeypatch.setattr(lazy_global, "MISSES_BEFORE_DEEPENING", 1)
    monkeypatch.setattr(lazy_global, "BATCH_SIZE", 2)
    lazy(make_settings, fake_llm, relevance_budget=20).answer("Q?")
    # z = 1 is reached by B, but C was tested in the same batch of two, at once
    assert sorted(units_tested(fake_llm)) == ["u0", "u1"] and fake_llm.max_in_flight == 2


def test_a_failed_test_is_named_spent_and_not_relevant(make_settings, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(relevant_units(*UNITS, fail="u1"))
    answer = lazy(make_settings, fake_llm, relevance_budget=3).answer("What happened?")

    assert units_tested(fake_llm) == ["u0", "u1", "u2"]
    assert len(answer.failures) == 1 and answer.failures[0].startswith(
        "relevance test of text unit u1: "
    )
    assert "text_unit:u1" not in answer.sources


def test_the_context_is_the_relevant_sentences_widened_to_chunks_as_the_budget_holds(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(relevant_units(*UNITS))
    wide = lazy(make_settings, fake_llm, relevance_budget=2).answer("What happened?")
    assert wide.contexts == [unit_text("u0"), unit_text("u1")]

    fake_llm.reset()
    fake_llm.respond_with(relevant_units(*UNITS))
    settings = {"max_context_tokens": 30, "lazy_global": {"relevance_budget": 2}}
    tight = make_settings(fake_llm.base_url, query=settings)
    method = LazyGlobalSearch(small_index(), tight, ChatLLM(tight), TowardsTheFirstChunk())
    narrow = method.answer("What happened?")
    # sentence 2 only (the model's out-of-range 99 is dropped), both chunks
    assert narrow.contexts == ["The chunk u0 tells one thing.", "The chunk u1 tells one thing."]


def test_an_index_without_communities_tests_its_nearest_chunks(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(relevant_units("u1"))
    index = small_index(communities=False)
    answer = lazy(make_settings, fake_llm, index, relevance_budget=4).answer("What happened?")
    assert units_tested(fake_llm) == ["u0", "u1", "u2", "u3"]
    assert answer.sources == ["text_unit:u1"]


def test_lazy_global_is_opt_in_and_its_settings_are_checked() -> None:
    assert OPT_IN_METHODS["lazy_global"] is LazyGlobalSearch and "lazy_global" not in METHODS
    assert LazyGlobalSettings().relevance_budget == 6
    with pytest.raises(SettingsError, match="query.lazy_global.relevance_budget"):
        load_settings(env={"GRAPHRAG_QUERY__LAZY_GLOBAL__RELEVANCE_BUDGET": "0"})


# --------------------------------------------------------------------------- the demo index

DEMO_QUESTIONS = REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl"


def keyword_model(word: str):
    """The scripted model, but its relevance test finds the sentences naming ``word``."""

    def reply(body: dict) -> str:
        if kind_of(body) != "test":
            return scripted_model(body)
        picks = [int(n) for n, s in SENTENCE.findall(body["messages"][1]["content"]) if word in s]
        return json.dumps({"relevant": picks[:8]})

    return reply


def test_on_the_demo_the_chunks_of_the_evident_document_are_tested_first(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    question = "How did Storm Corvin shape later events and decisions in Kestrel Bay?"
    fake_llm.respond_with(keyword_model("Corvin"))
    settings = make_settings(fake_llm.base_url)
    method = make_methods(demo_index, ["lazy_global"], settings, ChatLLM(settings),
                          replay_embedder)["lazy_global"]  # fmt: skip

    answer = method.answer(question)

    units = demo_index.text_units.set_index(S.ID)
    storm = units[units[S.DOCUMENT_IDS].map(lambda d: "03_storm_corvin" in d)][S.TEXT]
    first_batch = sentences_tested(fake_llm)[:2]  # two tests at once: in either order
    assert any(all(s in storm.iloc[0] for s in sentences) for sentences in first_batch)
    tests = len(sentences_tested(fake_llm))
    assert tests <= LazyGlobalSettings().relevance_budget and fake_llm.calls == tests + 1
    # every chunk read names the storm, the storm's own among them
    assert answer.contexts and all("Corvin" in c for c in answer.contexts)
    assert f"text_unit:{storm.index[0]}" in answer.sources
    assert answer.failures == []


def test_on_the_demo_the_budget_is_spent_over_the_roots_then_their_children(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    """The scripted model finds every chunk relevant: the five roots are tested best-first,
    then the budget's last test goes one level down."""
    fake_llm.respond_with(scripted_model)
    settings = make_settings(fake_llm.base_url)
    method = LazyGlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    question = "What are the main themes?"
    rank_of = {r: i for i, r in enumerate(method.unit_ranks(question))}

    search = run_sync(method.asearch(question, rank_of))

    communities = demo_index.communities.set_index(S.COMMUNITY)
    roots = list(communities[communities[S.LEVEL] == 0].index)
    units_of, _, _ = method.hierarchy()
    assert search.spent == fake_llm.calls == 6
    assert search.relevant[:5] == ranked_communities(roots, units_of, rank_of, 1)
    # the last test's batch of two children: one tested, the other read from its chunks' tests
    deeper = search.relevant[5:]
    assert deeper and all(communities.loc[c, S.LEVEL] == 1 for c in deeper)
    assert all(communities.loc[c, S.PARENT] in roots for c in deeper)


@pytest.mark.parametrize("recorded", [True, False])
def test_the_dry_run_costs_lazy_global_from_its_records_or_its_budget(
    demo_index: Index, replay_settings, monkeypatch, recorded: bool
) -> None:
    # Its recorded answers (the second held-out thematic set) give its measured cost; without
    # them (a fresh checkout of an older cost file) the budget its settings allow is costed.
    if not recorded:
        figures = copy.deepcopy(dry_run.measured("workbench.eval", dry_run.ASSUMPTIONS))
        del figures["eval"]["methods"]["lazy_global"]
        monkeypatch.setattr(dry_run, "measured", lambda *_: figures)
    estimate = estimate_eval(
        replay_settings, ChatLLM(replay_settings), demo_index, DEMO_QUESTIONS,
        ["naive", "lazy_global"], [], None, None, limit=4,
    )  # fmt: skip
    stages = {s.stage: s for s in estimate.stages}
    naive, lazy_global = stages["answer naive"], stages["answer lazy_global"]
    assert lazy_global.calls == 4 * (6 + 1)  # every recorded answer spent its whole budget
    basis = "measured on recorded runs" if recorded else "the calls its settings allow"
    assert basis in lazy_global.basis
    # six tests of a demo chunk (~430 tokens) cost less than two naive answers
    assert naive.prompt_tokens < lazy_global.prompt_tokens < 3 * naive.prompt_tokens


def test_on_an_nlp_index_without_reports_it_goes_down_the_relevant_levels(
    musique_index: Index, musique_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    """The LLM-free graph (MuSiQue, levels 0-3) with its reports taken away: nothing the
    search does needs one; the chunks naming the World Series are relevant."""
    index = copy.copy(musique_index)
    index.community_reports = musique_index.community_reports.iloc[0:0]
    fake_llm.respond_with(keyword_model("World Series"))
    settings = copy.deepcopy(musique_settings)
    settings.llm.base_url = fake_llm.base_url
    settings.cache.mode = "off"
    settings.query.methods["lazy_global"].relevance_budget = 30
    method = LazyGlobalSearch(index, settings, ChatLLM(settings), replay_embedder)
    question = "Which teams played in the 2017 World Series?"
    rank_of = {r: i for i, r in enumerate(method.unit_ranks(question))}

    search = run_sync(method.asearch(question, rank_of))

    assert 0 < search.spent == fake_llm.calls <= 30
    communities = index.communities.set_index(S.COMMUNITY)
    levels = list(communities.loc[search.relevant, S.LEVEL])
    assert levels == sorted(levels) and max(levels) >= 1
    found = set(search.relevant)
    assert all(
        communities.loc[c, S.PARENT] in found
        for c in search.relevant
        if communities.loc[c, S.LEVEL]
    )
    text = dict(zip(index.text_units[S.ID], index.text_units[S.TEXT], strict=True))
    assert all("World Series" in text[u] for u, picks in search.verdicts.items() if picks)
