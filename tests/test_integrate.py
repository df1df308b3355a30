"""Integration (graphrag/query/integrate.py): naive RAG's and a graph method's contexts
interleaved by rank in naive RAG's one budget; by hand, and on MuSiQue's real paragraphs, where
local search brings a gold paragraph naive RAG's budget did not hold."""

from __future__ import annotations

import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import RANKING_DEPTH, items_tokens
from graphrag.query.integrate import Integrate, IntegrateSettings, interleave
from graphrag.query.registry import METHODS, OPT_IN_METHODS, make_methods
from graphrag.settings import REPO_ROOT, Settings, SettingsError, load_settings
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "musique" / "questions.jsonl").set_index("id")
# "What county shares a border with the county where Black Hawk Township is located?"
QUESTION = "2hop__334380_326459"
GOLD = "portland_community_dodge_county_wisconsi_8b2d2657"


def test_interleave_takes_each_rank_in_turn_and_each_item_once() -> None:
    assert interleave([["a", "b", "c"], ["x", "b", "y", "z"]]) == ["a", "x", "b", "c", "y", "z"]
    # b, second of both, is counted once, where it came first; a shorter list just ends
    assert interleave([["a"], ["a", "b"]]) == ["a", "b"]
    assert interleave([[], ["x"]]) == ["x"]
    assert interleave([]) == []


def test_integrate_is_opt_in_and_refuses_a_method_without_one_ranked_context() -> None:
    assert OPT_IN_METHODS["integrate"] is Integrate and "integrate" not in METHODS
    assert Settings().query.methods["integrate"] == IntegrateSettings(graph_method="local")
    env = "GRAPHRAG_QUERY__INTEGRATE__GRAPH_METHOD"
    assert load_settings(env={env: "ppr"}).query.methods["integrate"].graph_method == "ppr"
    for method in ("global", "drift", "integrate", "graph_magic"):
        with pytest.raises(SettingsError, match=f"graph_method='{method}'"):
            load_settings(env={env: method})


@pytest.fixture(scope="module")
def retrieved(musique_index: Index, musique_settings: Settings, replay_embedder):
    """The three methods' retrievals of QUESTION over the small MuSiQue index (no model)."""
    llm = ChatLLM(musique_settings)
    names = ["naive", "local", "integrate"]
    methods = make_methods(musique_index, names, musique_settings, llm, replay_embedder)
    question = QUESTIONS.loc[QUESTION, "question"]
    return methods, {m: run_sync(methods[m].aretrieve_ranked(question)) for m in names}


def test_integrate_fills_naives_budget_alternating_naive_and_local_items(retrieved) -> None:
    methods, result = retrieved
    question = QUESTIONS.loc[QUESTION, "question"]
    naive, local, integrated = result["naive"], result["local"], result["integrate"]
    sources = [i.source for i in integrated.items]
    naive_sources = [i.source for i in naive.items]
    local_sources = [i.source for i in local.items]

    # one budget, naive RAG's, and nearly full; every row once
    budget = methods["naive"].answer_budget(question)
    assert budget - 200 < items_tokens(integrated.items) <= budget
    assert len(sources) == len(set(sources))
    # naive's first, local's first (an entity), naive's second, ...
    assert sources[:3] == [naive_sources[0], local_sources[0], naive_sources[1]]
    assert local_sources[0].startswith("entity:")
    assert any(s.startswith("entity:") for s in sources)
    assert any(s.startswith("text_unit:") and s not in naive_sources for s in sources)
    # the ranking: the two methods' ranked text units, interleaved
    assert integrated.ranking == interleave([naive.ranking, local.ranking])[:RANKING_DEPTH]


def test_integrate_reads_a_gold_paragraph_of_local_search_naive_left_out(
    musique_index: Index, retrieved
) -> None:
    _, result = retrieved
    assert GOLD in QUESTIONS.loc[QUESTION, "support"]
    documents = musique_index.text_units.set_index(S.ID)[S.DOCUMENT_IDS]
    gold = {f"text_unit:{u}" for u, d in documents.items() if GOLD in d}
    read = {m: {i.source for i in r.items} for m, r in result.items()}
    assert gold & read["local"] and gold & read["integrate"]
    assert not gold & read["naive"]
