"""Global search's reference behaviours (Microsoft GraphRAG) over real indexes: whole-graph
levels, report rank in the map context and a minimum rank, a tolerant map, and contexts that
are the reports the kept points came from. The demo index (rebuilt from the recorded cache)
has two small levels; levels and sub-communities are tested on the MuSiQue index (LLM-free,
levels 0-3). Model replies are scripted."""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pandas as pd
import pytest
from conftest import FakeLLM, Reply, prompt_kind

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.graph.communities import rolled_up_level
from graphrag.index.store import Index
from graphrag.llm.client import SEED, ChatLLM, LLMError
from graphrag.query.global_search import search
from graphrag.query.global_search.map_context import report_sentences
from graphrag.query.global_search.search import GlobalSearch
from graphrag.text import tokens

QUESTION = "What are the main themes?"
MAPPED = re.compile(r"(?m)^\[(\d+)\] ")


GLOBAL_PROMPTS = {
    "map": "You read community reports",
    "sentences": "You read numbered sentences",
    "reduce": "You write the final answer",
}


@pytest.fixture
def make_settings(make_settings):
    """Settings whose global map is Microsoft's (points written from the reports alone)
    unless a test asks for the extractive map or the entity facts: most tests here check
    the reference behaviours, and their scripted replies are points."""

    def build(*base_url: str, **sections):
        """``query``: global search's own settings (the [query.global] table)."""
        reference = {"map_style": "points", "report_facts_tokens": 0}
        own = {**reference, **sections.pop("query", {})}
        return make_settings(*base_url, **sections, query={"global": own})

    return build


def kind_of(body: dict) -> str:
    return prompt_kind(body, GLOBAL_PROMPTS)


def mapped(body: dict) -> list[int]:
    return [int(c) for c in MAPPED.findall(body["messages"][1]["content"].split("\n\nQuestion")[0])]


def map_calls(fake: FakeLLM) -> list[dict]:
    return [r for r in fake.requests if kind_of(r) == "map"]


def point_per_batch(body: dict) -> str:
    communities = mapped(body)
    return json.dumps({"points": [{"description": f"about {communities}", "score": 50}]})


def answer_maps(body: dict) -> str:
    return point_per_batch(body) if kind_of(body) == "map" else "An answer."


# --------------------------------------------------------------------------- levels


def every_entity_once(view: pd.DataFrame, clustered: set[str]) -> bool:
    members = [e for ids in view[S.ENTITY_IDS] for e in ids]
    return len(members) == len(set(members)) and set(members) == clustered


def test_every_rolled_up_level_covers_every_entity_exactly_once(musique_index: Index) -> None:
    # MuSiQue's graph: the demo's default one has no split community (five roots).
    communities = musique_index.communities
    clustered = {e for ids in communities[S.ENTITY_IDS] for e in ids}
    deepest = int(communities[S.LEVEL].max())
    assert deepest >= 1, "the demo graph has a split community"
    raw_deepest = communities[communities[S.LEVEL] == deepest]
    assert not every_entity_once(raw_deepest, clustered), "a raw deep level covers a part"
    for level in range(deepest + 2):
        assert every_entity_once(rolled_up_level(communities, level), clustered), level
    # Level 0 is the roots; past the deepest level, the view is the leaves.
    assert set(rolled_up_level(communities, 0)[S.COMMUNITY]) == set(
        communities.loc[communities[S.LEVEL] == 0, S.COMMUNITY]
    )
    leaves = communities[communities[S.CHILDREN].map(len) == 0]
    assert set(rolled_up_level(communities, deepest + 1)[S.COMMUNITY]) == set(leaves[S.COMMUNITY])


def test_rolled_up_level_by_hand() -> None:
    # 0 = {a, b} (never split), 1 = {c, d, e, f} split into 2 = {c, d} and 3 = {e, f};
    # 3 split again into 4 = {e} and 5 = {f}.
    communities = pd.DataFrame(
        {
            S.COMMUNITY: [0, 1, 2, 3, 4, 5],
            S.LEVEL: [0, 0, 1, 1, 2, 2],
            S.PARENT: [-1, -1, 1, 1, 3, 3],
            S.CHILDREN: [[], [2, 3], [], [4, 5], [], []],
            S.ENTITY_IDS: [["a", "b"], ["c", "d", "e", "f"], ["c", "d"], ["e", "f"], ["e"], ["f"]],
        }
    )
    views = {level: list(rolled_up_level(communities, level)[S.COMMUNITY]) for level in range(4)}
    assert views == {0: [0, 1], 1: [0, 2, 3], 2: [0, 2, 4, 5], 3: [0, 2, 4, 5]}


@pytest.mark.parametrize("level", [0, 1, 5])
def test_global_with_rolled_up_levels_maps_the_whole_graph_view(
    musique_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, level: int, monkeypatch
) -> None:
    # Levels need a hierarchy: MuSiQue's graph has one, the demo's default one has two small levels.
    # a reduce budget every point fits in: each mapped batch's point reaches the answer
    monkeypatch.setattr(search, "REDUCE_TOKENS", 100_000)
    query = {"level": level}
    settings = make_settings(fake_llm.base_url, query=query)
    fake_llm.respond_with(answer_maps)
    method = GlobalSearch(musique_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    view = set(rolled_up_level(musique_index.communities, level)[S.COMMUNITY])
    assert sorted(c for r in map_calls(fake_llm) for c in mapped(r)) == sorted(view)
    assert set(answer.sources) == {f"report:{c}" for c in view}


def test_level_chosen_by_the_data_is_the_deepest_that_fits_the_map_budget(
    musique_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    from graphrag.query.global_search.map_context import report_batches
    from graphrag.text import tokens

    index = musique_index  # a hierarchy to choose from: the demo has two small levels

    def chosen(max_batches: int, batch_tokens: int) -> set[int]:
        settings = make_settings(
            fake_llm.base_url,
            query={
                "level": -1,
                "max_batches": max_batches,
                "batch_tokens": batch_tokens,
            },
        )
        method = GlobalSearch(index, settings, ChatLLM(settings), replay_embedder)
        return set(method.level_reports(QUESTION)[S.COMMUNITY])

    # Each level's batch count at 2,000 tokens: allowing exactly a level's count chooses the
    # deepest level that fits in it.
    communities, seed = index.communities, SEED
    reports = index.community_reports
    views = {
        level: set(rolled_up_level(communities, level)[S.COMMUNITY])
        for level in range(int(communities[S.LEVEL].max()) + 1)
    }
    batches = {
        level: len(report_batches(reports[reports[S.COMMUNITY].isin(view)], 2000, seed))
        for level, view in views.items()
    }
    assert batches[0] < batches[max(views)], "deeper levels need more batches"
    for count in batches.values():
        fitting = [lv for lv, n in batches.items() if n <= count]
        assert chosen(count, 2000) == views[max(fitting)]
    # A budget too small for every level: the root reports closest to the question that fit.
    roots = set(rolled_up_level(index.communities, 0)[S.COMMUNITY])
    reports = index.community_reports.set_index(S.COMMUNITY)
    sizes = {c: tokens.count_tokens(reports.loc[c, S.FULL_CONTENT]) for c in roots}
    budget = max(sizes.values()) + 10
    kept = chosen(1, budget)
    assert kept and kept < roots
    assert sum(sizes[c] + 6 for c in kept) <= budget
    question_vector = replay_embedder.embed_one(QUESTION)
    vectors = {c: reports.loc[c, S.FULL_CONTENT_EMBEDDING] for c in roots}
    best = max(roots, key=lambda c: float(np.dot(question_vector, vectors[c])))
    if sizes[best] + 6 <= budget:
        assert best in kept


# --------------------------------------------------------------------------- rank


@pytest.fixture
def ranked_index(demo_index: Index) -> Index:
    """The demo index with each report ranked by its community number (0, 1, 2, ...)."""
    index = copy.copy(demo_index)
    reports = demo_index.community_reports.copy()
    reports[S.RANK] = reports[S.COMMUNITY].astype(float)
    index.community_reports = reports
    return index


def test_map_context_shows_each_reports_rank(
    ranked_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    # levels roll up; the level is fixed at the roots
    settings = make_settings(fake_llm.base_url, query={"level": 0})
    fake_llm.respond_with(answer_maps)
    method = GlobalSearch(ranked_index, settings, ChatLLM(settings), replay_embedder)

    method.answer(QUESTION)

    view = rolled_up_level(ranked_index.communities, 0)[S.COMMUNITY]
    shown = [c for r in map_calls(fake_llm) for c in mapped(r)]
    assert sorted(shown) == sorted(view)
    prompt = "\n".join(r["messages"][1]["content"] for r in map_calls(fake_llm))
    reports = ranked_index.community_reports.set_index(S.COMMUNITY)
    for community in shown:
        title = reports.loc[community, S.FULL_CONTENT].splitlines()[0]
        assert f"[{community}] (rank {community}) {title}" in prompt


# --------------------------------------------------------------------------- reports per call


@pytest.mark.parametrize("per_call", [1, 2])
def test_each_map_call_reads_at_most_reports_per_call_and_every_report_is_read(
    musique_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, per_call: int
) -> None:
    # The root level: the budget holds several reports per batch, the cap splits them.
    query = {"level": 0, "reports_per_call": per_call}
    settings = make_settings(fake_llm.base_url, query=query)
    fake_llm.respond_with(answer_maps)
    method = GlobalSearch(musique_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    view = set(rolled_up_level(musique_index.communities, 0)[S.COMMUNITY])
    calls = [mapped(r) for r in map_calls(fake_llm)]
    assert all(1 <= len(c) <= per_call for c in calls)
    assert sorted(c for call in calls for c in call) == sorted(view)
    assert len(calls) == -(-len(view) // per_call)  # full calls, in the shuffled order
    assert set(answer.sources) == {f"report:{c}" for c in view}
    uncapped = make_settings(fake_llm.base_url, query={"level": 0, "reports_per_call": 0})
    packed = GlobalSearch(musique_index, uncapped, ChatLLM(uncapped), replay_embedder)
    assert len(packed.level_reports(QUESTION)) == len(view)
    fake_llm.requests.clear()
    packed.answer(QUESTION)
    assert len(map_calls(fake_llm)) < len(calls), "the cap, not the budget, made these calls"


# --------------------------------------------------------------------------- tolerant map


def small_batches(make_settings, fake_llm: FakeLLM, **query) -> object:
    # One report per batch (reports_per_call's default): every batch can fail on its own; the
    # roots, all mapped.
    query = {"level": 0, **query}
    return make_settings(fake_llm.base_url, query=query)


def failing_on(community: int):
    def reply(body: dict) -> str | Reply:
        if kind_of(body) == "map" and community in mapped(body):
            return Reply("the model fell over", status=500)
        return answer_maps(body)

    return reply


def test_tolerant_map_drops_a_failed_batch_and_names_it(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = small_batches(make_settings, fake_llm)
    fake_llm.respond_with(failing_on(2))
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    level = demo_index.community_reports
    roots = sorted(level.loc[level[S.LEVEL] == 0, S.COMMUNITY])
    assert len(map_calls(fake_llm)) == len(roots)
    assert answer.text == "An answer."
    assert len(answer.failures) == 1 and "[2]" in answer.failures[0]
    assert "report:2" not in answer.sources
    assert set(answer.sources) == {f"report:{c}" for c in roots if c != 2}


def test_the_map_fails_when_every_batch_fails(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    tolerant = small_batches(make_settings, fake_llm)
    fake_llm.respond_with(lambda body: Reply("down", status=500))
    with pytest.raises(LLMError):
        GlobalSearch(demo_index, tolerant, ChatLLM(tolerant), replay_embedder).answer(QUESTION)


def test_report_text_the_batch_budget_cuts_is_named(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    budget = 200  # smaller than three of the demo's five root reports
    settings = small_batches(make_settings, fake_llm, batch_tokens=budget)
    fake_llm.respond_with(answer_maps)
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    shown = method.with_facts(method.level_reports(QUESTION))
    sizes = dict(
        zip(shown[S.COMMUNITY], map(tokens.count_tokens, shown[S.FULL_CONTENT]), strict=True)
    )
    too_long = {c for c, n in sizes.items() if n > budget}
    assert too_long and too_long != set(sizes), "the demo has reports on both sides"
    named = {
        int(re.fullmatch(r"map: report \[(\d+)\] cut to batch_tokens 200", f)[1])
        for f in answer.failures
    }
    assert named == too_long


def test_sentences_the_batch_budget_leaves_out_are_named(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    budget = 120
    query = {"batch_tokens": budget, "map_style": "sentences"}
    settings = small_batches(make_settings, fake_llm, **query)
    shown: dict[int, int] = {}  # report -> sentences the map call numbered

    def reply(body: dict) -> str:
        if kind_of(body) == "sentences":
            text = body["messages"][1]["content"]
            [community] = re.findall(r"Report \[(\d+)\]", text)
            shown[int(community)] = len(re.findall(r"(?m)^\(\d+\) ", text))
            return json.dumps({"sentences": [{"n": 1, "score": 50}]})
        return "An answer."

    fake_llm.respond_with(reply)
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    reports = method.with_facts(method.level_reports(QUESTION)).set_index(S.COMMUNITY)
    every = {c: len(report_sentences(reports.loc[c, S.FULL_CONTENT])) for c in shown}
    cut = {c: every[c] - n for c, n in shown.items() if every[c] > n}
    assert cut and len(cut) < len(shown), "the demo has reports on both sides"
    expected = {
        f"map batch of reports [{c}]: {n} sentences cut to batch_tokens {budget}"
        for c, n in cut.items()
    }
    assert set(answer.failures) == expected


# --------------------------------------------------------------------------- contexts


def test_report_contexts_are_the_reports_the_kept_points_cite(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    reports = demo_index.community_reports
    roots = sorted(reports.loc[reports[S.LEVEL] == 0, S.COMMUNITY])

    def cite_first(body: dict) -> str:
        if kind_of(body) != "map":
            return "An answer."
        first = mapped(body)[0]
        return json.dumps(
            {
                "points": [
                    {"description": f"cites [{first}] and [999]", "score": 60},
                    {"description": "cites nothing", "score": 0},
                ]
            }
        )

    # batches of several reports: a point's contexts are the ones it cites, not its batch
    packed = {"level": 0, "reports_per_call": 0}
    settings = make_settings(fake_llm.base_url, query=packed)
    fake_llm.respond_with(cite_first)

    answer = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(QUESTION)

    cited = sorted({mapped(r)[0] for r in map_calls(fake_llm)})
    assert len(cited) < len(roots), "some batch of the demo's roots holds several reports"
    # each source once, in the order of its point (equal scores: the batches' order)
    assert sorted(answer.sources) == [f"report:{c}" for c in cited]
    assert len(set(answer.sources)) == len(answer.sources)
    text_of = dict(zip(reports[S.COMMUNITY], reports[S.FULL_CONTENT], strict=True))
    assert answer.contexts == [text_of[int(s.removeprefix("report:"))] for s in answer.sources]
    reduce = next(r for r in fake_llm.requests if kind_of(r) == "reduce")
    assert f"cites [{cited[0]}] and [999]" in reduce["messages"][1]["content"]


# --------------------------------------------------------------------------- echoes


def test_points_that_restate_the_question_never_reach_the_reduce(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    """A map point whose every content word is the question's ("The main themes [3].")
    is dropped; one that adds a name or a number is kept; when only echoes are left, the
    answer says so without a reduce call."""
    echo = "The main themes [3]."

    def reply(points: list[str]):
        def respond(body: dict) -> str:
            if kind_of(body) != "map":
                return "An answer."
            return json.dumps({"points": [{"description": p, "score": 90} for p in points]})

        return respond

    settings = make_settings(fake_llm.base_url, query={"level": 0})
    fake_llm.respond_with(reply([echo, "Kelp farming grew after 2017 [3]."]))
    GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(QUESTION)
    reduce = [r for r in fake_llm.requests if kind_of(r) == "reduce"]
    assert len(reduce) == 1
    points = reduce[0]["messages"][-1]["content"]
    assert "Kelp farming grew after 2017" in points and echo not in points

    fake_llm.reset()  # another question: no map reply comes from the cache
    fake_llm.respond_with(reply(["Themes recur [2].", "Which themes recur?"]))
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    answer = method.answer("Which themes recur?")
    assert map_calls(fake_llm) and len(map_calls(fake_llm)) == len(fake_llm.requests)
    assert answer.text == prompts.NO_RELEVANT_REPORTS["en"]


def test_the_recorded_map_replies_hold_echoes_and_answers_that_look_like_them() -> None:
    """The data behind the rule: the 1.5B model's recorded map replies restate the question
    as a point, with a high score; a point that answers with a new name or number, though
    worded from the question ("... is Dutch."), is not an echo."""
    from conftest import RECORDED_CACHE

    from graphrag.query.global_search.map_context import restates_question
    from studies.recorded import recorded_replies

    echoes = high = kept = 0
    for record in recorded_replies(RECORDED_CACHE, "map_points"):
        question = record["request"]["messages"][-1]["content"].rpartition("\n\nQuestion: ")[2]
        reply = json.loads(record["response"]["choices"][0]["message"]["content"])
        for point in reply.get("points", []):
            if restates_question(point["description"], question):
                echoes += 1
                high += point["score"] >= 50
            else:
                kept += 1
    assert echoes >= 20 and high >= echoes // 2 and kept > 5 * echoes
    assert not restates_question(
        "The native language of the person who broke the salt law in Belgium in 1930 is Dutch.",
        "What is the native language of the person who broke the salt law in Belgium in 1930?",
    )


# --------------------------------------------------------------------------- entity facts


def test_report_facts_follow_llm_reports_within_budget_and_are_the_contexts(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    from graphrag.text import tokens

    budget = 120
    # one report of the view marked a template (an entity list): it is shown as it is
    index = copy.copy(demo_index)
    view = list(rolled_up_level(demo_index.communities, 1)[S.COMMUNITY])
    reports = demo_index.community_reports.copy()
    reports.loc[reports[S.COMMUNITY] == view[0], S.CONTEXT_SOURCE] = "template"
    index.community_reports = reports
    query = {"level": 1, "report_facts_tokens": budget}
    settings = make_settings(fake_llm.base_url, query=query)
    fake_llm.respond_with(answer_maps)
    method = GlobalSearch(index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    reports = reports.set_index(S.COMMUNITY)
    members = demo_index.communities.set_index(S.COMMUNITY)[S.ENTITY_IDS]
    entities = demo_index.entities.set_index(S.ID)
    prompts_by_report = {mapped(r)[0]: r["messages"][1]["content"] for r in map_calls(fake_llm)}
    sources = reports.loc[list(prompts_by_report), S.CONTEXT_SOURCE]
    assert sorted(prompts_by_report) == sorted(view) and "template" in set(sources)
    with_facts = 0
    for community, prompt in prompts_by_report.items():
        report = reports.loc[community, S.FULL_CONTENT]
        if sources[community] == "template":
            assert "\n\nFacts:\n" not in prompt
            continue
        facts = prompt.split("\n\nFacts:\n", 1)[1].split("\n\nQuestion")[0].splitlines()
        with_facts += 1
        assert tokens.count_tokens("\n".join(facts)) <= budget + len(facts)
        titles = [line[2:].split(": ", 1)[0] for line in facts]
        community_entities = entities.loc[list(members[community])]
        assert set(titles) <= set(community_entities[S.TITLE])
        degree = community_entities.set_index(S.TITLE)[S.DEGREE]
        assert list(degree[titles]) == sorted(degree[titles], reverse=True)
        for line in facts:  # a description the report already quotes is not repeated
            assert line.split(": ", 1)[1][:60] not in report
    assert with_facts
    # the contexts are the texts the map read, facts included
    for source, context in zip(answer.sources, answer.contexts, strict=True):
        community = int(source.removeprefix("report:"))
        assert context in prompts_by_report[community]
        assert context.startswith(reports.loc[community, S.FULL_CONTENT])


# --------------------------------------------------------------------------- extractive map


def test_report_sentences_keep_the_report_words_and_label_each_list_item() -> None:
    from graphrag.query.global_search.map_context import report_sentences

    text = (
        "# Storm Corvin and the Harbour\n\n"
        "Storm Corvin struck Port Aldry on 14 October 2022. It breached the harbour wall.\n\n"
        "- The wall failed.: The storm breached the old harbour wall in two places.\n\n"
        "Facts:\n"
        "- Storm Corvin: Storm that struck on 14 October 2022. It sank four boats.\n"
        "- Desmond Hale: Former harbourmaster elected mayor in 2023.\n"
        "- Storm Corvin: Storm that struck on 14 October 2022."
    )
    assert report_sentences(text) == [
        "Storm Corvin struck Port Aldry on 14 October 2022.",
        "It breached the harbour wall.",
        "The storm breached the old harbour wall in two places.",
        "Storm Corvin: Storm that struck on 14 October 2022.",
        "Storm Corvin: It sank four boats.",
        "Desmond Hale: Former harbourmaster elected mayor in 2023.",
    ]
    template = (
        "# A, B\n\n2 entities (1 person, 1 geo) linked by 1 relationships; most connected: A, "
        "B.\n\n- A: Mayor of the old port town."
    )
    assert report_sentences(template) == ["A: Mayor of the old port town."]


def test_report_sentences_of_every_demo_report_come_from_its_text(demo_index: Index) -> None:
    from graphrag.query.global_search.map_context import report_sentences

    for text in demo_index.community_reports[S.FULL_CONTENT]:
        sentences = report_sentences(text)
        assert sentences, text[:200]
        flat = " ".join(text.split())
        for sentence in sentences:
            words = sentence.split(": ", 1)[-1]  # a list item's label is prefixed
            assert " ".join(words.split()) in flat.replace(".: ", ". "), sentence


NUMBERED = re.compile(r"(?m)^\((\d+)\) (.*)$")
REPORT_HEAD = re.compile(r"(?m)^Report \[(\d+)\]")


def test_extractive_map_hands_the_picked_sentences_verbatim_to_the_reduce(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, monkeypatch
) -> None:
    from graphrag.query.global_search.map_context import report_sentences

    shown: dict[int, list[str]] = {}

    def pick(body: dict) -> str:
        if kind_of(body) == "reduce":
            return "An answer."
        assert kind_of(body) == "sentences", body["messages"][0]["content"][:80]
        user = body["messages"][1]["content"]
        (community,) = [int(c) for c in REPORT_HEAD.findall(user)]  # one report per call
        shown[community] = [s for _, s in NUMBERED.findall(user)]
        count = len(shown[community])
        # scores differ across reports, so the reduce's order does not depend on arrival
        picks = [{"n": 1, "score": 40 + community}, {"n": count, "score": 90 - community}]
        picks += [{"n": count + 1, "score": 99}, {"n": 2, "score": 0}]  # out of range; zero
        return json.dumps({"sentences": picks})

    monkeypatch.setattr(search, "REDUCE_TOKENS", 100_000)
    query = {"level": 0, "map_style": "sentences"}
    settings = make_settings(fake_llm.base_url, query=query)
    fake_llm.respond_with(pick)
    answer = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(QUESTION)

    reports = demo_index.community_reports.set_index(S.COMMUNITY)
    view = list(rolled_up_level(demo_index.communities, 0)[S.COMMUNITY])
    assert sorted(shown) == sorted(view)
    for community, listed in shown.items():  # every sentence of the report, numbered in order
        assert listed == report_sentences(reports.loc[community, S.FULL_CONTENT])
    reduce = next(r for r in fake_llm.requests if kind_of(r) == "reduce")
    points = reduce["messages"][1]["content"].split("Points:\n", 1)[1].split("\n\nQuestion")[0]
    expected = []
    for community, listed in shown.items():
        expected += [
            (90 - community, listed[-1], community),
            (40 + community, listed[0], community),
        ]
    seen, lines = set(), []
    for score, sentence, community in sorted(expected, key=lambda p: -p[0]):
        if sentence.casefold() not in seen:  # a parent repeating its child is read once
            seen.add(sentence.casefold())
            lines.append(f"- (importance {score}) {sentence} [{community}]")
    assert points.splitlines() == lines
    assert set(answer.sources) == {f"report:{c}" for c in shown}


def test_a_replay_miss_ends_the_answer_rather_than_counting_as_a_failed_map_batch(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    # The tolerant map drops a failed batch and goes on; a map call that was never recorded
    # is no failure of the model, and counted as one it would give answers nobody recorded.
    from graphrag.llm.client import CacheMissError

    query = {"level": 0}
    settings = make_settings(fake_llm.base_url, cache={"mode": "replay"}, query=query)
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    with pytest.raises(CacheMissError):
        method.answer(QUESTION)
    assert fake_llm.requests == []


def test_a_chinese_question_is_mapped_and_reduced_in_chinese(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    """A Chinese question's map and reduce calls use the Chinese prompts; with no useful
    point the canned answer is Chinese."""
    settings = make_settings(fake_llm.base_url, query={"level": 0})
    systems: list[str] = []

    def respond(points: list[dict]):
        def reply(body: dict) -> str:
            systems.append(body["messages"][0]["content"])
            if systems[-1].startswith("你阅读社区报告"):
                return json.dumps({"points": points})
            return "海藻养殖是反复出现的主题 [1]。"

        return reply

    question = "青澜湾反复出现哪些主题？"
    fake_llm.respond_with(respond([{"description": "海藻养殖 [1]。", "score": 80}]))
    answer = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder).answer(question)
    assert answer.text == "海藻养殖是反复出现的主题 [1]。"
    assert systems[-1].startswith("你根据分析员给出的要点写出问题的最终答案")
    assert all(s.startswith("你阅读社区报告") for s in systems[:-1]) and len(systems) >= 2

    fake_llm.reset()
    fake_llm.respond_with(respond([]))
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    assert method.answer(question + "？").text == prompts.NO_RELEVANT_REPORTS["zh"]
