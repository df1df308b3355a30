"""The BM25 baseline (graphrag/query/bm25.py), the docs' example of a method in one module:
registered opt-in and listed by the CLI, and its retrieval over the demo index (no model)."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import RANKING_DEPTH, items_tokens
from graphrag.query.bm25 import BM25Retrieval
from graphrag.query.rankers import tokenize
from graphrag.query.registry import ALL_METHODS, METHODS, OPT_IN_METHODS, make_methods
from graphrag.settings import REPO_ROOT, Settings, SettingsError, load_settings
from workbench.cli import main
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")


def test_bm25_is_registered_opt_in_with_no_settings_of_its_own() -> None:
    assert OPT_IN_METHODS["bm25"] is BM25Retrieval and "bm25" not in METHODS
    assert BM25Retrieval.name == "bm25"
    assert "bm25" not in Settings().query.methods
    with pytest.raises(SettingsError, match="method bm25 has no settings of its own"):
        load_settings(env={"GRAPHRAG_QUERY__BM25__K1": "1.2"})


def test_the_cli_lists_bm25_among_the_methods(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"{', '.join(ALL_METHODS)}, a comma list, or all" in help_text
    assert "router, bm25" in help_text


def test_words_are_lower_cased_and_stop_words_dropped() -> None:
    assert tokenize(["Who founded the Kestrel Bay Marine Institute?"]) == [
        ["who", "founded", "kestrel", "bay", "marine", "institute"]
    ]


@pytest.mark.parametrize("qid", ["q01", "q07", "q09"])
def test_bm25_on_the_demo_ranks_by_shared_words_and_fills_the_budget(
    demo_index: Index, replay_settings: Settings, replay_embedder, qid: str
) -> None:
    """Retrieval only: no model is asked (the replay settings' endpoint is a closed port)."""
    llm = ChatLLM(replay_settings)
    method = make_methods(demo_index, ["bm25"], replay_settings, llm, replay_embedder)["bm25"]
    question = QUESTIONS.loc[qid, "question"]

    retrieval = run_sync(method.aretrieve_ranked(question))

    units = demo_index.text_units
    ids = method.ranking(question)
    assert sorted(ids) == sorted(units[S.ID])
    rows = [list(units[S.ID]).index(u) for u in ids]
    scores = method.stores.bm25.get_scores(tokenize([question])[0])
    assert list(scores[rows]) == sorted(scores, reverse=True)
    # the best-scored unit shares a word with the question; the context is the ranked units
    # that fit the shared answer budget, in rank order, as naive RAG's
    best = set(tokenize([units[S.TEXT].iloc[rows[0]]])[0])
    assert best & set(tokenize([question])[0])
    ranked = [f"text_unit:{u}" for u in ids]
    assert retrieval.ranking == ranked[:RANKING_DEPTH]
    sources = [i.source for i in retrieval.items]
    assert sources and sources == [s for s in ranked if s in sources]
    assert items_tokens(retrieval.items) <= method.answer_budget(question)
    # the supporting document is reached within the ranking
    support = set(QUESTIONS.loc[qid, "support"])
    documents = units.set_index(S.ID)[S.DOCUMENT_IDS]
    assert support & {d for s in retrieval.ranking for d in documents[s[10:]]}


def test_a_question_of_stop_words_alone_keeps_the_index_order(
    demo_index: Index, replay_settings: Settings, replay_embedder
) -> None:
    method = BM25Retrieval(demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder)
    assert method.ranking("Is it to be?") == list(demo_index.text_units[S.ID])
    assert np.all(method.stores.bm25.get_scores(["kestrel"]) >= 0)
