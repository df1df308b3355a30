"""Local search (Microsoft GraphRAG's reading): the budget sized to the model's window, one
rolled-up level of reports, relationships ranked by links into the selection and capped.
Small frames pin the rules down; the demo index (rebuilt from the recorded cache) shows them
on real data, with an LLM that cannot reach a model (retrieval needs none) or the fake
endpoint for a whole answer."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from conftest import FakeLLM
from test_query import QUESTIONS, question

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import ContextItem, auto_budget, items_tokens, number_items
from graphrag.query.local import (
    MAX_RELATIONSHIPS,
    LocalSearch,
    ranked_relationships,
    selection_level,
    units_by_shared_mentions,
)
from graphrag.settings import Settings
from graphrag.text import tokens
from graphrag.text.tokens import message_tokens

DEMO_QUESTIONS = ["q01", "q08", "q11"]


def local_settings(settings: Settings, **query: Any) -> Settings:
    """Return a copy of ``settings`` with some query settings changed: shared ones by name,
    local search's own (``[query.local]``) by their name there."""
    changed = copy.deepcopy(settings)
    for key, value in query.items():
        shared = hasattr(changed.query, key)
        setattr(changed.query if shared else changed.query.methods["local"], key, value)
    return changed


def with_window(settings: Settings, window: int) -> Settings:
    changed = copy.deepcopy(settings)
    changed.llm.context_tokens = window
    return changed


def fixedmessage_tokens(q: str) -> int:
    """The answer prompt without context, at its longest (with the final-answer line)."""
    return message_tokens(prompts.with_final_answer_line(prompts.answer(q, "")))


def prompt_tokens(q: str, items: list[ContextItem]) -> int:
    """The tokens of the answer prompt that ``items`` make, chat template included."""
    return message_tokens(prompts.with_final_answer_line(prompts.answer(q, number_items(items))))


# --------------------------------------------------------------------------- budget


def test_auto_budget_is_the_window_less_the_answer_and_the_prompt_within_the_cap() -> None:
    assert auto_budget(4096, 250, 146, 10_000) == 4096 - 250 - 146
    assert auto_budget(4096, 250, 146, 3000) == 3000, "the cap bounds a large window"
    assert auto_budget(None, 250, 146, 3000) == 3000, "an unknown window: the cap alone"
    assert auto_budget(300, 250, 146, 3000) == 0, "a window too small gives no context"


@pytest.mark.parametrize(
    ("overrides", "window"),
    [
        ({"llm": {"context_tokens": 2048}}, 2048),
        # no llm.context_tokens: the embedded server's per-slot context (not started here)
        ({"llm": {"base_url": ""}, "embedded": {"ctx_size": 4096, "parallel": 2}}, 2048),
        ({"llm": {"base_url": ""}, "embedded": {"ctx_size": 3000, "parallel": 1}}, 3000),
    ],
)
def test_the_budget_is_sized_to_the_models_window(
    make_settings, overrides: dict[str, Any], window: int
) -> None:
    settings = make_settings(**overrides)
    settings = local_settings(settings, max_context_tokens=100_000)
    method = LocalSearch(SimpleNamespace(), settings, ChatLLM(settings), None)
    q = question("q01")
    budget = method.context_budget(q)
    assert budget == window - settings.query.answer_max_tokens - fixedmessage_tokens(q)
    assert 0 < budget < window - 250 - 100, "the fixed part is the prompt's, not zero"

    settings.query.max_context_tokens = 1000
    assert method.context_budget(q) == 1000
    settings.query.methods["local"].context_tokens = 700
    assert method.context_budget(q) == 700, "a positive query.local.context_tokens wins"


def test_an_unknown_window_uses_the_cap(make_settings) -> None:
    settings = make_settings()  # an endpoint whose window is unknown
    method = LocalSearch(SimpleNamespace(), settings, ChatLLM(settings), None)
    assert settings.query.methods["local"].context_tokens == 0
    assert method.context_budget("anything") == settings.query.max_context_tokens == 3000


# --------------------------------------------------------------------------- reports

# Two level-0 communities; community 1 is split at level 1 into 3 and 4; "z" is unclustered.
COMMUNITIES = pd.DataFrame(
    {
        S.COMMUNITY: [1, 2, 3, 4],
        S.LEVEL: [0, 0, 1, 1],
        S.PARENT: [-1, -1, 1, 1],
        S.CHILDREN: [[3, 4], [], [], []],
        S.ENTITY_IDS: [["a", "b", "c"], ["d", "e"], ["a", "b"], ["c"]],
    }
)
REPORTS = pd.DataFrame(
    {
        S.COMMUNITY: [1, 2, 3, 4],
        S.LEVEL: [0, 0, 1, 1],
        S.RANK: [5.0, 6.0, 7.0, 8.0],
        S.FULL_CONTENT: ["report one", "report two", "report three", "report four"],
    }
)


@pytest.mark.parametrize(
    ("selected", "level"),
    [
        ({"a", "b"}, 1),  # both split further: the finer level
        ({"a", "c"}, 1),
        ({"a", "d"}, 0),  # d's community is never split: the level where both have one
        ({"a", "z"}, 1),  # an unclustered entity does not hold the level back
        ({"z"}, 0),
    ],
)
def test_selection_level_is_the_deepest_holding_every_clustered_selected_entity(
    selected: set[str], level: int
) -> None:
    assert selection_level(COMMUNITIES, selected) == level


@pytest.mark.parametrize(
    ("selected", "reports"),
    [
        ({"a", "b", "c"}, ["report three", "report four"]),  # most selected entities first
        ({"a", "d", "e"}, ["report two", "report one"]),
    ],
)
def test_reports_are_read_from_one_rolled_up_level(
    make_settings, selected: set[str], reports: list[str]
) -> None:
    settings = make_settings()
    index = SimpleNamespace(communities=COMMUNITIES, community_reports=REPORTS)
    method = LocalSearch(index, settings, None, None)
    assert [i.text for i in method.report_items(selected)] == reports


# --------------------------------------------------------------------------- relationships


def relationship_frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            S.ID: [f"{s}-{t}" for s, t, _ in rows],
            S.HUMAN_ID: range(len(rows)),
            S.SOURCE_ID: [s for s, _, _ in rows],
            S.TARGET_ID: [t for _, t, _ in rows],
            S.WEIGHT: [w for _, _, w in rows],
            S.COMBINED_DEGREE: [1] * len(rows),
        }
    )


# Selected: A, B, C. X is linked to all three, Z to two, Y to one (by the heaviest edge).
RELATIONSHIPS = relationship_frame(
    [
        ("Y", "A", 9.0),
        ("A", "B", 1.0),
        ("A", "Z", 2.0),
        ("X", "A", 1.0),
        ("B", "C", 5.0),
        ("B", "X", 1.5),
        ("P", "Q", 9.0),  # touches no selected entity
        ("Z", "B", 3.0),
        ("C", "X", 1.0),
        ("A", "Z", 1.0),  # a second edge to Z: links count entities, not edges
    ]
)


def test_relationships_rank_inside_first_then_by_links_into_the_selection() -> None:
    ranked = ranked_relationships(RELATIONSHIPS, {"A", "B", "C"}, cap=20)
    assert list(ranked[S.ID]) == [
        "B-C",  # between selected entities, by weight
        "A-B",
        "B-X",  # X links to 3 selected entities, by weight then human id
        "X-A",
        "C-X",
        "Z-B",  # Z links to 2
        "A-Z",
        "A-Z",
        "Y-A",  # Y links to 1, however heavy
    ]


def test_relationships_to_unselected_entities_are_capped_inside_ones_are_not() -> None:
    ranked = ranked_relationships(RELATIONSHIPS, {"A", "B", "C"}, cap=2)
    assert list(ranked[S.ID]) == ["B-C", "A-B", "B-X", "X-A"]
    assert list(ranked_relationships(RELATIONSHIPS, {"A", "B", "C"}, cap=0)[S.ID]) == [
        "B-C",
        "A-B",
    ]


def test_shared_mention_order_puts_units_naming_most_selected_entities_first() -> None:
    units_of = [["u1", "u3"], ["u4", "u1"], ["u4", "u1", "u2"]]
    assert units_by_shared_mentions(units_of) == ["u1", "u4", "u3", "u2"]


# --------------------------------------------------------------------------- the demo index


def selected_entities(method: LocalSearch, q: str) -> list[str]:
    return method.select_entities(q)


# Microsoft's text-unit share (with a fifth for reports, as before session 27), and the
# defaults (0.85 and 0.05)
@pytest.mark.parametrize("shares", [(0.5, 0.2), None])
@pytest.mark.parametrize("window", [2048, 4096])
@pytest.mark.parametrize("qid", DEMO_QUESTIONS)
def test_context_on_the_demo_fits_the_window_and_reads_the_selection(
    demo_index: Index,
    replay_settings: Settings,
    replay_embedder,
    window: int,
    qid: str,
    shares: tuple[float, float] | None,
) -> None:
    settings = with_window(replay_settings, window)
    if shares:
        settings = local_settings(settings, text_unit_share=shares[0], community_share=shares[1])
    method = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    q = question(qid)
    budget = method.context_budget(q)
    retrieval = run_sync(method.aretrieve_ranked(q))
    items = retrieval.items

    assert budget == min(3000, window - 250 - fixedmessage_tokens(q))
    assert items_tokens(items) <= budget
    assert prompt_tokens(q, items) + settings.query.answer_max_tokens <= window
    # The budget is read, not left empty: each kind packs its share in its order, and what it
    # leaves out would not fit in the room left (the default demo's summaries, reports and
    # chunks are long: in a 2,048-token window not every selected entity's description or
    # any report fits its share).
    sources = [i.source for i in items]
    unit_share = int(budget * settings.query.methods["local"].text_unit_share)
    report_share = int(budget * settings.query.methods["local"].community_share)
    graph_share = budget - unit_share - report_share
    selected = selected_entities(method, q)
    selected_set = set(selected)
    candidates = {
        "entity": method.entity_items(method.select_entities(q)),
        "report": method.report_items(selected_set),
        "text_unit": method.text_unit_items_for(method.select_entities(q), q),
    }
    assert [u.source for u in candidates["text_unit"]] == retrieval.ranking
    rooms = {
        "entity": graph_share,
        "report": report_share,
        "text_unit": budget - items_tokens([i for i in items if "text_unit:" not in i.source]),
    }
    kept_of = {}
    for kind, offered in candidates.items():
        kept = [i for i in items if i.source.startswith(f"{kind}:")]
        assert kept == [i for i in offered if i in kept], f"{kind}: packed in their order"
        room = rooms[kind] - items_tokens(kept)
        assert room >= 0 and all(items_tokens([i]) > room for i in offered if i not in kept), kind
        kept_of[kind] = kept
    entities = [i.source.removeprefix("entity:") for i in kept_of["entity"]]
    assert entities and entities == [e for e in selected if e in entities]
    assert len(kept_of["text_unit"]) >= 1 and len(kept_of["text_unit"]) < len(retrieval.ranking)
    if window == 4096:
        if shares:  # the graph's 0.3 of the budget holds every description
            assert entities == selected, "every selected entity's description, in order"
            assert kept_of["report"], "a report of the selection fits a fifth of the budget"

    communities = demo_index.communities.set_index(S.COMMUNITY)
    reports = [int(s.removeprefix("report:")) for s in sources if s.startswith("report:")]
    assert len({communities.loc[c, S.LEVEL] for c in reports}) <= 1
    for c in reports:
        assert set(communities.loc[c, S.ENTITY_IDS]) & selected_set

    rel = demo_index.relationships.set_index(S.ID)
    ends = [
        (rel.loc[s.removeprefix("relationship:"), S.SOURCE_ID] in selected)
        + (rel.loc[s.removeprefix("relationship:"), S.TARGET_ID] in selected)
        for s in sources
        if s.startswith("relationship:")
    ]
    assert ends == sorted(ends, reverse=True), "relationships between selected ones first"
    assert ends.count(1) <= MAX_RELATIONSHIPS


def test_local_search_finds_the_festival_answer_on_the_demo(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    # q08's answer (12,000 visitors, a kelp and cod chowder) is in its document's text, which
    # a 4,096-token window's budget reaches.
    q = question("q08")
    support = QUESTIONS.loc["q08", "support"]
    units = demo_index.text_units.set_index(S.ID)[S.DOCUMENT_IDS]
    settings = with_window(replay_settings, 4096)
    method = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    items = run_sync(method.aretrieve(q))
    text = " ".join(i.text for i in items).lower()
    docs = {d for i in items if i.source.startswith("text_unit:") for d in units[i.source[10:]]}
    assert [k for k in QUESTIONS.loc["q08", "answer_keywords"] if k.lower() in text] == (
        QUESTIONS.loc["q08", "answer_keywords"]
    )
    assert set(support) <= docs


def test_answer_through_the_fake_endpoint_fits_the_window(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    window = 2048
    settings = local_settings(make_settings(fake_llm.base_url, llm={"context_tokens": window}))
    fake_llm.respond_with(lambda body: "Founded in 1998 [1].")
    method = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    q = question("q01")
    answer = method.answer(q)

    assert fake_llm.calls == 1
    body = fake_llm.requests[0]
    assert body["max_tokens"] == settings.query.answer_max_tokens
    assert message_tokens(body["messages"]) + body["max_tokens"] <= window
    assert answer.contexts and all(c in body["messages"][1]["content"] for c in answer.contexts)
    assert answer.context_tokens <= method.context_budget(q)
    assert answer.cited == [answer.sources[0]]
    assert sum(tokens.count_tokens(c) for c in answer.contexts) == answer.context_tokens


@pytest.mark.parametrize("qid", ["q02", "q03", "q12"])
def test_question_order_reads_the_selections_units_nearest_the_question_first(
    demo_index: Index, replay_settings: Settings, replay_embedder, qid: str
) -> None:
    import numpy as np

    settings = local_settings(replay_settings, text_unit_order="question")
    method = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    q = question(qid)
    rows = method.select_entities(q)
    ranking = run_sync(method.aretrieve_ranked(q)).ranking
    units = [s.removeprefix("text_unit:") for s in ranking]
    entities = demo_index.entities
    units_of = dict(zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True))
    candidates = {u for e in rows for u in units_of[e]}
    assert set(units) == candidates and len(units) == len(candidates)
    position = {u: i for i, u in enumerate(demo_index.text_units[S.ID])}
    vectors = np.stack(demo_index.text_units[S.TEXT_EMBEDDING].to_list())
    scores = vectors[[position[u] for u in units]] @ replay_embedder.embed_one(q)
    assert all(a >= b - 1e-6 for a, b in zip(scores, scores[1:], strict=False))
    # the same candidates as the other orders: only the order differs
    for order in ("shared_mentions",):
        other = LocalSearch(
            demo_index,
            local_settings(replay_settings, text_unit_order=order),
            ChatLLM(settings),
            replay_embedder,
        )
        assert set(run_sync(other.aretrieve_ranked(q)).ranking) == set(ranking)
