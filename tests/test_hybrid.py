"""Hybrid retrieval (graphrag/query/hybrid.py) and the hybrid first stage of the other methods
(``query.first_stage``): the fusion by hand, and on MuSiQue's real paragraphs a gold paragraph
that BM25 finds, the embedding misses and the fused ranking puts in the context."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import RANKING_DEPTH, items_tokens
from graphrag.query.hybrid import HybridRetrieval
from graphrag.query.rankers import hybrid_ranking
from graphrag.query.registry import METHODS, OPT_IN_METHODS, make_methods
from graphrag.settings import REPO_ROOT, Settings, SettingsError, load_settings
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "musique" / "questions.jsonl").set_index("id")
# "What county shares a border with the county where Black Hawk Township is located?": the
# gold paragraph on Portland, Dodge County shares the question's rare words, not its meaning.
LEXICAL_QUESTION = "2hop__334380_326459"
LEXICAL_GOLD = "portland_community_dodge_county_wisconsi_8b2d2657"


def hybrid_settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, query=settings.query.changed({"first_stage": "hybrid"}))


def test_rrf_fuses_the_dense_ranking_with_the_words_bm25_matched() -> None:
    # dense ranks rows 0, 2, 3, 1; BM25 matches rows 1 and 3 only (a 0 is no match).
    dense = np.array([0.9, 0.1, 0.5, 0.3])
    lexical = np.array([0.0, 3.0, 0.0, 1.0])
    rows, scores = hybrid_ranking(dense, lexical)
    # row 1: 1/64 + 1/61 = 0.03202 just beats row 3: 1/63 + 1/62 = 0.03200; then the rows BM25
    # did not match, in dense order: 0 (1/61), 2 (1/62)
    assert rows == [1, 3, 0, 2]
    assert scores == pytest.approx([1 / 61, 1 / 64 + 1 / 61, 1 / 62, 1 / 63 + 1 / 62])
    # a tie (ranks 1 and 2 swapped) keeps the dense order; no word matched: the dense ranking
    assert hybrid_ranking(np.array([0.9, 0.8]), np.array([1.0, 2.0]))[0] == [0, 1]
    assert hybrid_ranking(np.array([0.2, 0.8, 0.5]), np.zeros(3))[0] == [1, 2, 0]


def test_hybrid_is_opt_in_and_first_stage_is_dense_unless_set() -> None:
    assert OPT_IN_METHODS["hybrid"] is HybridRetrieval and "hybrid" not in METHODS
    assert Settings().query.first_stage == "dense"
    assert load_settings(env={"GRAPHRAG_QUERY__FIRST_STAGE": "hybrid"}).query.first_stage == (
        "hybrid"
    )
    with pytest.raises(SettingsError, match="first_stage"):
        load_settings(env={"GRAPHRAG_QUERY__FIRST_STAGE": "sparse"})


@pytest.fixture(scope="module")
def musique_methods(musique_index: Index, musique_settings: Settings, replay_embedder):
    """naive, bm25, hybrid and ppr over the small MuSiQue index, dense first stage."""
    llm = ChatLLM(musique_settings)
    names = ["naive", "bm25", "hybrid", "ppr"]
    return make_methods(musique_index, names, musique_settings, llm, replay_embedder)


def gold_unit(index: Index, document: str) -> int:
    return int(np.flatnonzero(index.text_units[S.DOCUMENT_IDS].map(lambda d: document in d))[0])


def test_hybrid_reads_a_gold_paragraph_bm25_finds_and_the_embedding_misses(
    musique_index: Index, musique_methods
) -> None:
    """Retrieval only, no model: the fused ranking fills naive RAG's budget."""
    question = QUESTIONS.loc[LEXICAL_QUESTION, "question"]
    assert LEXICAL_GOLD in QUESTIONS.loc[LEXICAL_QUESTION, "support"]
    gold = (
        f"text_unit:{musique_index.text_units[S.ID].iloc[gold_unit(musique_index, LEXICAL_GOLD)]}"
    )
    naive, hybrid = musique_methods["naive"], musique_methods["hybrid"]
    retrieved = {
        m: run_sync(musique_methods[m].aretrieve_ranked(question)) for m in musique_methods
    }
    sources = {m: [i.source for i in r.items] for m, r in retrieved.items()}

    assert gold in sources["bm25"][:10] and gold not in sources["naive"]
    assert gold in sources["hybrid"]
    # the same budget as naive RAG, filled in the fused order
    budget = naive.answer_budget(question)
    assert hybrid.answer_budget(question) == budget
    assert items_tokens(retrieved["hybrid"].items) <= budget
    ids = hybrid.ranking(question)
    ranked = hybrid.text_unit_ids(ids)
    assert sources["hybrid"] == [s for s in ranked if s in sources["hybrid"]]
    assert retrieved["hybrid"].ranking == ranked[:RANKING_DEPTH]
    assert sorted(ids) == sorted(musique_index.text_units[S.ID])


def test_first_stage_hybrid_makes_naive_retrieve_as_hybrid_and_reseeds_ppr(
    musique_index: Index, musique_settings: Settings, replay_embedder, musique_methods
) -> None:
    settings = hybrid_settings(musique_settings)
    llm = ChatLLM(settings)
    switched = make_methods(
        musique_index,
        ["naive", "ppr"],
        settings,
        llm,
        replay_embedder,
        musique_methods["ppr"].stores,
    )
    question = QUESTIONS.loc[LEXICAL_QUESTION, "question"]
    vector = replay_embedder.embed_one(question)

    hybrid = run_sync(musique_methods["hybrid"].aretrieve_ranked(question))
    naive = run_sync(switched["naive"].aretrieve_ranked(question))
    assert naive.items == hybrid.items and naive.ranking == hybrid.ranking

    # PPR's passage seeds: dense similarity by default (as recorded), the fused score when hybrid
    dense_ppr, hybrid_ppr = musique_methods["ppr"], switched["ppr"]
    units = [f"text_unit:{u}" for u in musique_index.text_units[S.ID]]
    dense_seeds = dense_ppr.seeds(vector, dense_ppr.first_stage(vector, question)[1])
    hybrid_seeds = hybrid_ppr.seeds(vector, hybrid_ppr.first_stage(vector, question)[1])
    cosine = dense_ppr.stores.text_units.scores(vector).to_numpy()
    expected = (cosine - cosine.min()) / (cosine.max() - cosine.min())
    assert [dense_seeds[u] for u in units] == pytest.approx(expected.tolist(), abs=1e-6)
    fused = hybrid_ppr.hybrid_ranking(vector, question)[1]
    assert [hybrid_seeds[u] for u in units] == pytest.approx(
        ((fused - fused.min()) / (fused.max() - fused.min())).tolist()
    )
    # the entity seeds (facts) stay dense; the gold paragraph BM25 found is seeded higher
    assert {s: w for s, w in hybrid_seeds.items() if s.startswith("entity:")} == {
        s: w for s, w in dense_seeds.items() if s.startswith("entity:")
    }
    gold = units[gold_unit(musique_index, LEXICAL_GOLD)]
    rank = {
        name: sorted(units, key=lambda u, s=seeds: -s[u]).index(gold)
        for name, seeds in (("dense", dense_seeds), ("hybrid", hybrid_seeds))
    }
    assert rank["hybrid"] < rank["dense"]
    assert dense_ppr.ranking(question) != hybrid_ppr.ranking(question)


def test_first_stage_hybrid_reorders_local_searchs_text_units_by_the_fused_ranking(
    musique_index: Index, musique_settings: Settings, replay_embedder, musique_methods
) -> None:
    """Local search's "question" order of its entities' text units follows the first stage:
    the same units, in the order the fused ranking of every text unit gives them."""
    question = QUESTIONS.loc[LEXICAL_QUESTION, "question"]
    stores = musique_methods["naive"].stores
    order = {}
    for stage in ("dense", "hybrid"):
        query = musique_settings.query.changed(
            {"first_stage": stage, "local.text_unit_order": "question"}
        )
        settings = dataclasses.replace(musique_settings, query=query)
        local = make_methods(
            musique_index, ["local"], settings, ChatLLM(settings), replay_embedder, stores
        )["local"]
        order[stage] = run_sync(local.aretrieve_ranked(question)).ranking
    assert sorted(order["dense"]) == sorted(order["hybrid"]) and order["dense"] != order["hybrid"]
    fused = musique_methods["hybrid"].ranking(question)
    position = {u: i for i, u in enumerate(musique_methods["hybrid"].text_unit_ids(fused))}
    assert order["hybrid"] == sorted(order["hybrid"], key=position.__getitem__)
