"""The query methods over the demo index (rebuilt from the recorded cache): what each one
retrieves, how local search packs its budget, how global search maps and reduces, and how an
answer cites its context and counts its LLM calls. Steps that need a model talk to the fake
endpoint; retrieval that needs none runs with an LLM that cannot reach any model."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import FakeLLM, index_texts, prompt_kind

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index, IndexLoadError, load_index
from graphrag.llm.client import SEED, ChatLLM, run_sync
from graphrag.prompts import neutralize_citations
from graphrag.query.base import (
    ITEM_OVERHEAD_TOKENS,
    RANKING_DEPTH,
    Answer,
    ContextItem,
    cited_numbers,
)
from graphrag.query.global_search.map_context import report_batches
from graphrag.query.global_search.search import GlobalSearch
from graphrag.query.hyde import HyDE
from graphrag.query.local import LocalSearch
from graphrag.query.multi_query import MultiQuery
from graphrag.query.naive import NaiveRAG
from graphrag.query.rankers import reciprocal_rank_fusion
from graphrag.query.registry import METHODS, make_methods
from graphrag.settings import REPO_ROOT, Settings
from graphrag.text import tokens
from workbench.eval.questions import load_questions
from workbench.session import Workbench

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")
# how a report opens in a global map prompt (with its rank, by default)
MAP_POINT = re.compile(r"(?m)^\[(\d+)\] (?:\(rank [^)]*\) )?# ")


def question(qid: str) -> str:
    return QUESTIONS.loc[qid, "question"]


def with_query(settings: Settings, **values: Any) -> Settings:
    """Return a copy of ``settings`` with some ``query`` settings changed, named as
    ``QuerySettings.flat`` names them (``**{"local.context_tokens": 300}``)."""
    changed = copy.deepcopy(settings)
    changed.query = changed.query.changed(values)
    return changed


def context_tokens(items: list[ContextItem]) -> int:
    return sum(tokens.count_tokens(i.text) + ITEM_OVERHEAD_TOKENS for i in items)


QUERY_PROMPTS = {
    "passage": "Write a short passage",
    "rephrase": "Rewrite the question",
    "map": "You read community reports",
    "reduce": "You write the final answer",
    "answer": "You answer a question using only",
}


def kind_of(body: dict) -> str:
    """Return which query prompt a request to the fake endpoint is."""
    return prompt_kind(body, QUERY_PROMPTS)


def map_communities(body: dict) -> list[int]:
    return [int(c) for c in MAP_POINT.findall(body["messages"][1]["content"])]


# global search's map as Microsoft GraphRAG's: points from the reports alone (scripted here)
MICROSOFT_MAP = {"map_style": "points", "report_facts_tokens": 0}  # [query.global]


@pytest.fixture
def offline_llm(replay_settings: Settings) -> ChatLLM:
    """An LLM that can answer nothing: retrieval that needs no model must not call one."""
    return ChatLLM(replay_settings)


@pytest.fixture
def fake_settings(make_settings, fake_llm: FakeLLM) -> Settings:
    """The defaults over a scripted endpoint, reading top_k chunks and mapping the demo's
    roots with Microsoft's map (points, as the script writes them): the tests using it count
    exact contexts and map calls."""
    query = {"chunk_context": "top_k", "global": {"level": 0, **MICROSOFT_MAP}}
    return make_settings(fake_llm.base_url, query=query)


@pytest.fixture
def unit_of_document(demo_index: Index) -> dict[str, tuple[str, str]]:
    """Return (id, text) of the first text unit of every document."""
    units = demo_index.text_units.sort_values(S.START_TOKEN, kind="stable")
    first: dict[str, tuple[str, str]] = {}
    for unit_id, text, docs in zip(units[S.ID], units[S.TEXT], units[S.DOCUMENT_IDS], strict=True):
        first.setdefault(docs[0], (unit_id, text))
    return first


# --------------------------------------------------------------------------- naive


@pytest.mark.parametrize("qid", ["q01", "q03", "q07", "q09"])
def test_naive_retrieves_the_most_similar_text_units(
    demo_index: Index, replay_settings: Settings, replay_embedder, offline_llm, qid: str
) -> None:
    """The defaults: the most similar text units that fit the answer budget, in rank order
    (chunk_context = "budget"; a chunk that does not fit is skipped for a later one)."""
    method = NaiveRAG(demo_index, replay_settings, offline_llm, replay_embedder)
    items = run_sync(method.aretrieve(question(qid)))
    units = demo_index.text_units
    budget = method.answer_budget(question(qid))

    assert items == run_sync(method.aretrieve(question(qid)))  # deterministic
    ids = [i.source.removeprefix("text_unit:") for i in items]
    assert all(i.source.startswith("text_unit:") for i in items)
    text_of = dict(zip(units[S.ID], units[S.TEXT], strict=True))
    assert [i.text for i in items] == [text_of[u] for u in ids]

    scores = np.stack(units[S.TEXT_EMBEDDING].to_list()) @ replay_embedder.embed_one(question(qid))
    ranking = list(units[S.ID].iloc[np.argsort(-scores, kind="stable")])
    assert ids == [u for u in ranking if u in ids] and ids[0] == ranking[0]
    used = context_tokens(items)
    assert used <= budget
    skipped = [u for u in ranking[: ranking.index(ids[-1])] if u not in ids]
    cost = {u: tokens.count_tokens(text_of[u]) + ITEM_OVERHEAD_TOKENS for u in skipped}
    assert all(used + cost[u] > budget for u in skipped)
    assert len(items) > replay_settings.query.top_k  # more than a top_k context
    # On the demo data, a single-document question finds its document.
    docs_of = dict(zip(units[S.ID], units[S.DOCUMENT_IDS], strict=True))
    assert QUESTIONS.loc[qid, "support"][0] in {d for u in ids for d in docs_of[u]}


# --------------------------------------------------------------------------- local


LOCAL_QUESTIONS = ["q01", "q05", "q11", "q16", "q19"]
BUDGETS = [300, 800, 1500]


def local_items(index: Index, settings: Settings, embedder, llm, qid: str, budget: int):
    method = LocalSearch(
        index, with_query(settings, **{"local.context_tokens": budget}), llm, embedder
    )
    return run_sync(method.aretrieve(question(qid)))


@pytest.mark.parametrize("qid", LOCAL_QUESTIONS)
def test_local_context_fits_every_budget_and_shrinks_with_it(
    demo_index: Index, replay_settings: Settings, replay_embedder, offline_llm, qid: str
) -> None:
    used = []
    for budget in BUDGETS:
        items = local_items(demo_index, replay_settings, replay_embedder, offline_llm, qid, budget)
        assert items, f"no context at budget {budget}"
        used.append(context_tokens(items))
        assert used[-1] <= budget
    assert used == sorted(used)
    assert used[-1] > used[0]


@pytest.mark.parametrize("qid", LOCAL_QUESTIONS)
def test_local_context_is_the_graph_around_the_closest_entities(
    demo_index: Index, replay_settings: Settings, replay_embedder, offline_llm, qid: str
) -> None:
    items = local_items(demo_index, replay_settings, replay_embedder, offline_llm, qid, 1500)
    known = index_texts(demo_index)
    for item in items:
        assert item.text == known[item.source], item.source

    kinds = [i.source.split(":")[0] for i in items]
    order = ["entity", "relationship", "report", "text_unit"]
    assert kinds == sorted(kinds, key=order.index), "kinds come grouped, in this order"
    assert {"entity", "text_unit"} <= set(kinds)

    entities = demo_index.entities
    scores = np.stack(entities[S.DESCRIPTION_EMBEDDING].to_list()) @ replay_embedder.embed_one(
        question(qid)
    )
    top = entities[S.ID].iloc[np.argsort(-scores, kind="stable")]
    selected = list(top[: replay_settings.query.methods["local"].top_entities])
    chosen = [i.source.removeprefix("entity:") for i in items if i.source.startswith("entity:")]
    assert chosen == [e for e in selected if e in chosen], "most similar entities, in order"

    relationships = demo_index.relationships.set_index(S.ID)
    for item in items:
        kind, _, ident = item.source.partition(":")
        if kind == "relationship":
            ends = {relationships.loc[ident, "source_id"], relationships.loc[ident, "target_id"]}
            assert ends & set(selected)
        elif kind == "report":
            members = demo_index.communities.set_index(S.COMMUNITY).loc[int(ident), S.ENTITY_IDS]
            assert set(members) & set(selected)
        elif kind == "text_unit":
            mentioned = entities.set_index(S.ID).loc[selected, S.TEXT_UNIT_IDS]
            assert any(ident in list(units) for units in mentioned)


def test_local_context_with_a_tiny_budget_is_empty_not_over(
    demo_index: Index, replay_settings: Settings, replay_embedder, offline_llm
) -> None:
    items = local_items(demo_index, replay_settings, replay_embedder, offline_llm, "q01", 3)
    assert context_tokens(items) <= 3


# --------------------------------------------------------------------------- hyde, multi-query


def test_hyde_retrieves_with_the_passage_it_asked_for(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, unit_of_document
) -> None:
    # The "hypothetical passage" is the festival document itself, while the question is about
    # the institute: only retrieval by the passage puts the festival first.
    festival_id, festival_text = unit_of_document["08_tide_festival"]
    fake_llm.script(festival_text, "KBMI was founded in 1998 [2].")
    method = HyDE(demo_index, fake_settings, ChatLLM(fake_settings), replay_embedder)

    answer = method.answer(question("q01"))

    assert [kind_of(r) for r in fake_llm.requests] == ["passage", "answer"]
    assert question("q01") in fake_llm.last_user(0)
    assert answer.sources[0] == f"text_unit:{festival_id}"
    assert len(answer.contexts) == fake_settings.query.top_k
    known = index_texts(demo_index)
    assert answer.contexts == [known[s] for s in answer.sources]
    for number, context in enumerate(answer.contexts, start=1):
        assert f"[{number}] {context}" in fake_llm.last_user()
    assert answer.usage.calls == 2


class RecordingEmbedder:
    """The real embedder, recording the texts each ``embed`` call is given."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.embedder.embed(texts)

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def test_multi_query_fuses_the_question_and_its_rephrasings(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, unit_of_document
) -> None:
    # Three "rephrasings" quote the storm document: fused with the question's own ranking,
    # the storm document must come first even though the question is about the institute.
    storm_id, storm_text = unit_of_document["03_storm_corvin"]
    words = storm_text.split()
    rephrasings = [" ".join(words[i : i + 25]) for i in (0, 30, 60)]
    fake_llm.script(json.dumps({"queries": rephrasings}), "An answer [1].")
    embedder = RecordingEmbedder(replay_embedder)
    method = MultiQuery(demo_index, fake_settings, ChatLLM(fake_settings), embedder)

    answer = method.answer(question("q01"))

    assert [kind_of(r) for r in fake_llm.requests] == ["rephrase", "answer"]
    assert embedder.calls == [[question("q01"), *rephrasings]]
    assert len(answer.contexts) == fake_settings.query.top_k
    assert len(set(answer.sources)) == len(answer.sources)
    known = index_texts(demo_index)
    assert all(s.startswith("text_unit:") for s in answer.sources)
    assert answer.contexts == [known[s] for s in answer.sources]
    assert answer.sources[0] == f"text_unit:{storm_id}"
    assert answer.usage.calls == 2


def test_reciprocal_rank_fusion_by_hand() -> None:
    # k = 60. a: 1/61 + 1/62 and b: 1/62 + 1/61 tie (a appeared first); c: 2/63 = 0.03175 is
    # just below them; d, in the third list only, at rank 1: 1/61 = 0.01639.
    assert reciprocal_rank_fusion([["a", "b", "c"], ["b", "a", "c"], ["d"]], k=60) == [
        "a",
        "b",
        "c",
        "d",
    ]
    # f is never first but in both lists: 2/62 = 0.03226 beats e and g, each 1/61 once.
    assert reciprocal_rank_fusion([["e", "f"], ["g", "f"]], k=60) == ["f", "e", "g"]
    # k sets how much the top rank counts. q at ranks 2 and 3, p and r first once, s second:
    # k = 60: q 1/62 + 1/63 = 0.03200 > p = r 1/61 = 0.01639 > s 1/62 = 0.01613;
    # k = 0:  p = r 1/1 > q 1/2 + 1/3 = 0.833 > s 1/2.
    rankings = [["p", "q"], ["r", "s", "q"]]
    assert reciprocal_rank_fusion(rankings, k=60) == ["q", "p", "r", "s"]
    assert reciprocal_rank_fusion(rankings, k=0) == ["p", "r", "q", "s"]
    assert reciprocal_rank_fusion([], k=60) == []


# --------------------------------------------------------------------------- global


def level_reports(index: Index, level: int) -> pd.DataFrame:
    reports = index.community_reports
    return reports[reports[S.LEVEL] == level]


@pytest.mark.parametrize("budget", [150, 400, 2000])
def test_report_batches_pack_every_report_once_within_the_budget(
    demo_index: Index, budget: int
) -> None:
    reports = demo_index.community_reports
    batches = report_batches(reports, budget, seed=7)
    cost = {
        c: tokens.count_tokens(t) + 6
        for c, t in zip(reports[S.COMMUNITY], reports[S.FULL_CONTENT], strict=True)
    }
    packed = [c for b in batches for c in b[S.COMMUNITY]]
    assert sorted(packed) == sorted(reports[S.COMMUNITY])
    for batch in batches:
        used = sum(cost[c] for c in batch[S.COMMUNITY])
        assert used <= budget or len(batch) == 1
    for batch, following in zip(batches, batches[1:], strict=False):
        used = sum(cost[c] for c in batch[S.COMMUNITY])
        assert used + cost[following[S.COMMUNITY].iloc[0]] > budget, "a batch closes only when full"
    again = report_batches(reports, budget, seed=7)
    assert [list(b[S.COMMUNITY]) for b in again] == [list(b[S.COMMUNITY]) for b in batches]


def split_budget(index: Index, level: int = 0) -> int:
    """Return a batch budget that splits the level's reports into about three batches."""
    costs = [tokens.count_tokens(t) + 6 for t in level_reports(index, level)[S.FULL_CONTENT]]
    return max(max(costs), sum(costs) // 3)


def roots_in_batches(budget: int) -> dict:
    """Query settings that map the demo's roots with Microsoft's map in batches of ``budget``
    tokens (as many reports per call as the budget holds)."""
    batches = {"batch_tokens": budget, "level": 0, "reports_per_call": 0}
    return {"global": {**batches, **MICROSOFT_MAP}}


def scored_map(body: dict) -> str:
    """A map reply: one useful point naming the batch's communities, one scored 0."""
    communities = map_communities(body)
    return json.dumps(
        {
            "points": [
                {"description": f"useful {communities}", "score": 10 + min(communities)},
                {"description": f"noise {communities}", "score": 0},
            ]
        }
    )


def test_global_drops_zero_score_points_and_reduces_the_rest(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    budget = split_budget(demo_index)
    settings = make_settings(fake_llm.base_url, query=roots_in_batches(budget))
    level = level_reports(demo_index, 0)
    first = int(level[S.COMMUNITY].min())
    fake_llm.respond_with(
        lambda body: (
            scored_map(body)
            if kind_of(body) == "map"
            else f"The answer, from [{first}] and [987654]."
        )
    )
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer("What are the main themes?")

    maps = [r for r in fake_llm.requests if kind_of(r) == "map"]
    reduces = [r for r in fake_llm.requests if kind_of(r) == "reduce"]
    assert len(maps) == len(report_batches(level, budget, SEED)) > 1
    assert len(reduces) == 1
    batches = [map_communities(r) for r in maps]
    assert sorted(c for b in batches for c in b) == sorted(level[S.COMMUNITY])
    useful = sorted(batches, key=lambda b: -min(b))
    # the contexts: the reports each useful point cites (here its whole batch), best first
    text_of = dict(zip(level[S.COMMUNITY], level[S.FULL_CONTENT], strict=True))
    assert answer.contexts == [text_of[c] for b in useful for c in b]
    reduce_prompt = reduces[0]["messages"][1]["content"]
    for batch in batches:
        assert f"useful {batch}" in reduce_prompt
        assert f"noise {batch}" not in reduce_prompt
    assert answer.sources and set(answer.sources) == {f"report:{c}" for c in level[S.COMMUNITY]}
    assert answer.cited == [f"report:{first}"]
    assert answer.usage.calls == fake_llm.calls == len(maps) + 1


def test_global_point_sources_are_the_reports_of_its_batch(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    budget = split_budget(demo_index)
    settings = make_settings(fake_llm.base_url, query=roots_in_batches(budget))
    fake_llm.respond_with(scored_map)
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    items = run_sync(method.aretrieve("What are the main themes?"))

    assert items
    for item in items:
        named = json.loads(item.text.split("useful ", 1)[1])
        assert item.source == ",".join(f"report:{c}" for c in named)


def test_global_without_relevant_points_answers_so_without_a_reduce(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    budget = split_budget(demo_index)
    settings = make_settings(fake_llm.base_url, query=roots_in_batches(budget))
    replies = iter(
        [
            {"points": []},
            {"points": [{"description": "nothing here", "score": 0}]},
            {"points": [{"description": "   ", "score": 50}]},  # blank: not a point
        ]
        * 50
    )
    fake_llm.respond_with(lambda body: json.dumps(next(replies)))
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer("Who won the regatta of 1850?")

    n_batches = len(report_batches(level_reports(demo_index, 0), budget, SEED))
    assert n_batches > 1
    assert answer.text == prompts.NO_RELEVANT_REPORTS["en"]
    assert [kind_of(r) for r in fake_llm.requests] == ["map"] * n_batches
    assert answer.contexts == [] and answer.sources == [] and answer.cited == []
    assert answer.usage.calls == n_batches


# --------------------------------------------------------------------------- citations


def test_cited_numbers_reads_bracketed_numbers_only() -> None:
    assert cited_numbers("Founded in 1998 [1].") == [1]
    assert cited_numbers("Both [2, 3] agree, as does [3,4] and [ 5 ].") == [2, 3, 4, 5]
    assert cited_numbers("[2] first, then [1, 2] again [2].") == [2, 1]
    assert cited_numbers("No citations: (1), 1998, [a], [see 2], [], [1-2], {3}.") == []
    assert cited_numbers("") == []


def test_chinese_answers_cite_in_their_own_brackets() -> None:
    assert cited_numbers("研究所成立于1998年【1】，由两家机构创办【2、3】。") == [1, 2, 3]
    assert cited_numbers("见[4，5]。") == [4, 5]
    # a context item cannot fake a citation in full-width brackets either
    assert neutralize_citations("据【2】与【1、3】所述") == "据(2)与(1、3)所述"


def test_answer_cited_names_the_sources_of_the_cited_numbers(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    fake_llm.script("Founded in 1998 [2]; a partnership [1, 2]. Not context: [7], [0], (3).")
    method = NaiveRAG(demo_index, fake_settings, ChatLLM(fake_settings), replay_embedder)

    answer = method.answer(question("q01"))

    assert len(answer.sources) == 3
    assert answer.cited == [answer.sources[1], answer.sources[0]]
    assert answer.to_dict()["cited"] == answer.cited


# --------------------------------------------------------------------------- registry, errors


def test_make_methods_names_an_unknown_method(
    demo_index: Index, replay_settings: Settings, replay_embedder, offline_llm
) -> None:
    with pytest.raises(ValueError, match="graph_magic"):
        make_methods(
            demo_index, ["naive", "graph_magic"], replay_settings, offline_llm, replay_embedder
        )
    made = make_methods(demo_index, list(METHODS), replay_settings, offline_llm, replay_embedder)
    assert {name: type(m) for name, m in made.items()} == METHODS
    assert all(m.name == name for name, m in made.items())
    assert len({id(m.stores) for m in made.values()}) == 1, "one set of stores, shared"


def test_loading_a_missing_index_names_the_folder(
    tmp_path: Path, replay_settings: Settings
) -> None:
    missing = tmp_path / "no_index_here"
    with pytest.raises(IndexLoadError, match="no_index_here"):
        Workbench(settings=replay_settings).load(missing)


@pytest.mark.parametrize("table", ["entities", "text_units", "community_reports"])
def test_a_corrupt_or_missing_table_names_its_file(
    demo_index: Index,
    tmp_path: Path,
    replay_settings: Settings,
    replay_embedder,
    offline_llm,
    table: str,
) -> None:
    broken = tmp_path / "index"
    shutil.copytree(demo_index.path, broken)
    (broken / f"{table}.parquet").write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(IndexLoadError, match=rf"{table}\.parquet"):
        Workbench(settings=replay_settings).load(broken)
    with pytest.raises(IndexLoadError, match=rf"{table}\.parquet.*corrupt"):
        load_index(broken)

    (broken / f"{table}.parquet").unlink()
    with pytest.raises(IndexLoadError, match=rf"{table}\.parquet is missing"):
        load_index(broken)


# --------------------------------------------------------------------------- usage


def scripted_model(body: dict) -> str:
    """Answer any query prompt plausibly."""
    kind = kind_of(body)
    if kind == "passage":
        return "The institute was founded in 1998 by a university and a council."
    if kind == "rephrase":
        return json.dumps({"queries": ["When was KBMI set up?", "Who founded KBMI?", "KBMI?"]})
    if kind == "map":
        return json.dumps({"points": [{"description": "a fact", "score": 40}]})
    return "The answer [1]."


def scripted_method(index: Index, settings: Settings, fake_llm: FakeLLM, embedder, name: str):
    """Return the named method over ``index``, its LLM the fake endpoint of scripted_model."""
    fake_llm.respond_with(scripted_model)
    return make_methods(index, [name], settings, ChatLLM(settings), embedder)[name]


@pytest.mark.parametrize("name", list(METHODS))
def test_answer_usage_counts_the_methods_calls(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, name: str
) -> None:
    method = scripted_method(demo_index, fake_settings, fake_llm, replay_embedder, name)

    answer = method.answer(question("q01"))

    assert isinstance(answer, Answer) and answer.method == name
    own = fake_settings.query.methods["global"]
    batches = len(
        report_batches(
            level_reports(demo_index, own.level),
            own.batch_tokens,
            SEED,
            own.reports_per_call,
        )
    )
    # global: the map's batches, then the reduce. Every scripted map call returns the same
    # point, so every report order (query.global.reduce_seeds) gives the reduce the same
    # prompt, and it is written once: no draft repeats another's prompt
    assert own.reduce_seeds
    expected = {"naive": 1, "local": 1, "hyde": 2, "multi_query": 2, "global": batches + 1}
    assert answer.usage.calls == fake_llm.calls == expected[name]
    assert answer.usage.cache_hits == 0
    # The fake reports a quarter of the prompt's characters as its prompt tokens.
    reported = sum(
        sum(len(m["content"]) for m in body["messages"]) // 4 for body in fake_llm.requests
    )
    assert answer.usage.prompt_tokens == reported
    assert answer.context_tokens == sum(tokens.count_tokens(c) for c in answer.contexts)
    assert answer.seconds > 0

    # Asked again, every call is answered by the recorded cache: still counted, none live.
    again = method.answer(question("q01"))
    assert fake_llm.calls == expected[name]
    assert again.usage.calls == again.usage.cache_hits == expected[name]
    assert again.text == answer.text and again.contexts == answer.contexts


# --------------------------------------------------------------------------- benchmark prompts


@pytest.mark.parametrize("name", list(METHODS))
def test_only_short_answer_sets_ask_for_a_final_answer_line(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, name: str
) -> None:
    """The demo's prompts stay byte-identical (so its recorded answers replay); a benchmark set
    adds the final-line instruction to the answer (or reduce) prompt and nothing else."""
    method = scripted_method(demo_index, fake_settings, fake_llm, replay_embedder, name)

    method.answer(question("q01"))
    plain = fake_llm.requests[-1]["messages"]
    method.answer(question("q01"), short_answer=True)
    short = fake_llm.requests[-1]["messages"]

    assert plain[0]["content"] in (
        prompts.answer("q", "")[0]["content"],
        prompts.global_reduce("q", "p")[0]["content"],
    )
    # The instruction follows the question, the system prompt stays the plain one.
    assert short[:-1] == plain[:-1]
    assert short[-1]["content"] == f"{plain[-1]['content']}\n\n{prompts.FINAL_ANSWER_INSTRUCTION}"


@pytest.mark.parametrize("name", [*METHODS, "ppr"])
def test_answer_style_paragraphs_changes_only_the_answer_prompt_s_length_rule(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, name: str
) -> None:
    """``query.answer_style = "paragraphs"`` asks every method's final answer (global's
    reduce too) for paragraphs in ``answer_max_tokens``; the context and question it shows
    stay those of the default, so the two styles differ in the answer's form alone."""
    default = scripted_method(demo_index, fake_settings, fake_llm, replay_embedder, name)
    default.answer(question("q19"))
    plain = fake_llm.requests[-1]
    styled = with_query(fake_settings, answer_style="paragraphs", answer_max_tokens=600)
    method = scripted_method(demo_index, styled, fake_llm, replay_embedder, name)
    method.answer(question("q19"))
    body = fake_llm.requests[-1]

    assert plain["max_tokens"] == 250 and body["max_tokens"] == 600
    assert body["messages"][1:] == plain["messages"][1:]
    assert body["messages"][0]["content"] in (
        prompts.answer("q", "", "paragraphs")[0]["content"],
        prompts.global_reduce("q", "p", "paragraphs")[0]["content"],
    )
    assert "paragraphs" in body["messages"][0]["content"]
    assert "paragraphs" not in plain["messages"][0]["content"]


def test_paragraph_answers_of_the_thematic_set_replay_from_the_recorded_cache(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    """data/kestrel_bay/paragraphs.toml's answers are recorded: over the demo index, naive
    RAG and global search answer a thematic question in paragraphs from the committed cache
    (no model), each longer than its recorded sentence-form answer to the same question."""
    thematic = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl")
    text = thematic.set_index("id").loc["t01", "question"]
    # recorded with one reduce call (paragraphs.toml pins it), as the sentence form
    single = with_query(replay_settings, **{"global.reduce_seeds": []})
    styled = with_query(single, answer_style="paragraphs", answer_max_tokens=600)
    names = ["naive", "global"]
    short = make_methods(demo_index, names, single, ChatLLM(single), replay_embedder)
    long = make_methods(demo_index, names, styled, ChatLLM(styled), replay_embedder)
    for name in names:
        sentences, paragraphs = short[name].answer(text), long[name].answer(text)
        assert paragraphs.usage.cache_hits == paragraphs.usage.calls > 0
        assert paragraphs.contexts == sentences.contexts
        assert tokens.count_tokens(paragraphs.text) > tokens.count_tokens(sentences.text)


@pytest.mark.parametrize("name", ["naive", "hyde", "multi_query", "local"])
def test_the_ranking_starts_with_the_prompt_s_text_units(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder, name: str
) -> None:
    method = scripted_method(demo_index, fake_settings, fake_llm, replay_embedder, name)
    answer = method.answer(question("q11"))
    in_prompt = [s for s in answer.sources if s.startswith("text_unit:")]
    assert in_prompt and len(set(answer.ranking)) == len(answer.ranking)
    assert all(s.startswith("text_unit:") for s in answer.ranking)
    if name == "local":  # units are packed by budget: every one in the prompt was ranked
        assert set(in_prompt) <= set(answer.ranking)
    else:  # the top_k of a ranking RANKING_DEPTH deep
        assert answer.ranking[: len(in_prompt)] == in_prompt
        assert len(answer.ranking) == min(RANKING_DEPTH, len(demo_index.text_units))


def test_global_search_ranks_no_text_units(
    demo_index: Index, fake_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    fake_llm.respond_with(scripted_model)
    method = GlobalSearch(demo_index, fake_settings, ChatLLM(fake_settings), replay_embedder)
    assert method.answer(question("q19")).ranking == []


@pytest.mark.parametrize("name", ["naive", "hyde", "multi_query", "ppr"])
def test_chunk_methods_fill_the_shared_budget_in_rank_order(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, name: str
) -> None:
    """chunk_context = "budget": the ranked chunks that fit the answer budget local search
    fills (capped here at 1,300 tokens, two to three of the demo's chunks), packed in the
    order of the method's own ranking; "top_k" keeps exactly top_k."""
    budget_settings = make_settings(
        fake_llm.base_url, query={"chunk_context": "budget", "max_context_tokens": 1300}
    )
    method = scripted_method(demo_index, budget_settings, fake_llm, replay_embedder, name)
    answer = method.answer(question("q01"))
    budget = method.answer_budget(question("q01"))
    text_of = dict(zip(demo_index.text_units[S.ID], demo_index.text_units[S.TEXT], strict=True))

    def cost(source: str) -> int:
        return tokens.count_tokens(text_of[source.removeprefix("text_unit:")]) + (
            ITEM_OVERHEAD_TOKENS
        )

    assert budget == 1300
    used = sum(cost(s) for s in answer.sources)
    assert used <= budget and len(answer.sources) >= 2
    # Kept in rank order, and every better-ranked chunk left out would not have fitted.
    ranks = [answer.ranking.index(s) for s in answer.sources]
    assert ranks == sorted(ranks)
    assert all(
        used + cost(s) > budget for s in answer.ranking[: ranks[-1]] if s not in answer.sources
    )

    top_k_settings = make_settings(fake_llm.base_url, query={"chunk_context": "top_k", "top_k": 3})
    top_k = scripted_method(demo_index, top_k_settings, fake_llm, replay_embedder, name)
    assert len(top_k.answer(question("q01")).contexts) == 3
