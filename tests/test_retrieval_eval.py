"""The retrieval-only evaluation on real data: MuSiQue's paragraphs, questions and gold
evidence. Scoring a method's context without an answer must give the very numbers the
recorded answer report computed from what those answers showed the model."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import DEMO_DOCS, MUSIQUE

from graphrag.settings import REPO_ROOT
from workbench.eval.retrieval import SCORES, RetrievalEvalError
from workbench.session import Workbench

REPORTS = REPO_ROOT / "reports"
DEMO_QUESTIONS = DEMO_DOCS.parent / "questions.jsonl"
LIMIT = 12


def _run(bench: Workbench, questions, methods: list[str], out, limit=None):
    return bench.evaluate_retrieval(
        questions, out=out, methods=methods, limit=limit, progress=False
    )


@pytest.fixture(scope="module")
def musique_run(musique_index, musique_settings, tmp_path_factory):
    """Naive RAG and local search on the first MuSiQue questions (real paragraphs)."""
    out = tmp_path_factory.mktemp("retrieval") / "musique"
    with Workbench(settings=musique_settings) as bench:
        bench.load(musique_index.path)
        records = _run(bench, MUSIQUE / "questions.jsonl", ["naive", "local"], out, LIMIT)
    return records, out


@pytest.fixture(scope="module")
def demo_run(demo_index, replay_settings, tmp_path_factory):
    """Naive RAG and PPR on every demo question (PPR embeds each relationship as a fact:
    the demo's graph is small, MuSiQue's takes minutes)."""
    out = tmp_path_factory.mktemp("retrieval") / "demo"
    with Workbench(settings=replay_settings) as bench:
        bench.load(demo_index.path)
        records = _run(bench, DEMO_QUESTIONS, ["naive", "ppr"], out)
    return records, out


@pytest.mark.parametrize(
    ("run", "report"), [("musique_run", "musique"), ("demo_run", "kestrel_bay")]
)
def test_retrieval_scores_equal_those_of_the_recorded_answers(request, run, report) -> None:
    records, _ = request.getfixturevalue(run)
    committed = pd.read_parquet(REPORTS / report / "records.parquet")
    answered = committed.set_index(["question_id", "method"])

    assert records["question_id"].nunique() == (LIMIT if report == "musique" else 24)
    for key, row in records.set_index(["question_id", "method"]).iterrows():
        recorded = answered.loc[key]
        assert list(row["sources"]) == list(recorded["sources"]), key
        for score in ("evidence_recall", "recall_at_5"):
            assert row[score] == recorded[score] or (
                pd.isna(row[score]) and pd.isna(recorded[score])
            ), key
    # naive, PPR and local search over a built index ask no model for their context
    assert (records["llm_calls"] == 0).all()
    # recall@2 looks at fewer ranked units than recall@5
    assert (records["recall_at_2"] <= records["recall_at_5"]).all()
    assert records["recall_at_2"].lt(records["recall_at_5"]).any()
    # nDCG@5 is 0 exactly where no gold paragraph is in the first 5; MRR exceeds 1/5 only
    # where the first gold unit is above rank 5
    assert ((records["ndcg_at_5"] == 0) == (records["recall_at_5"] == 0)).all()
    assert ((records["mrr"] > 0.2) <= (records["recall_at_5"] > 0)).all()


def test_retrieval_page_tests_every_method_against_naive(musique_run) -> None:
    records, out = musique_run
    text = (out / "summary.md").read_text(encoding="utf-8")
    tests = pd.read_csv(out / "tests.csv")

    assert set(tests["method"]) == {"local"}
    assert set(tests["metric"]) == set(SCORES)
    # The tests and the first table are of the test questions (the headline); every
    # question is kept in the files and in a secondary table.
    n_test = records.loc[records["split"] == "test", "question_id"].nunique()
    assert 0 < n_test < LIMIT and (tests["n"] == n_test).all()
    assert f"**Headline: the {n_test} test questions**" in text
    assert "All questions, dev and test" in text
    assert pd.read_parquet(out / "retrieval.parquet")["question_id"].nunique() == LIMIT
    assert (tests["p_holm"] >= tests["p_value"]).all()
    for method in ("naive", "local"):
        assert f"| {method} | " in text
    assert "## Evidence per hop" in text
    assert len(pd.read_csv(out / "hops.csv")) >= 2 * LIMIT * 2  # every hop of every record


def test_report_methods_are_refused_by_name(musique_index, musique_settings, tmp_path) -> None:
    with Workbench(settings=musique_settings) as bench:
        bench.load(musique_index.path)
        with pytest.raises(RetrievalEvalError, match="global, drift"):
            bench.evaluate_retrieval(
                MUSIQUE / "questions.jsonl",
                out=tmp_path / "out",
                methods=["naive", "global", "drift"],
                progress=False,
            )


def test_retrieval_runs_inside_a_running_event_loop(demo_index, replay_settings, tmp_path):
    """A notebook's cell runs inside an event loop: the evaluation must not start its own
    with asyncio.run (it did, and failed with "cannot be called from a running event loop")."""
    import asyncio

    async def in_a_notebook():
        with Workbench(settings=replay_settings) as bench:
            bench.load(demo_index.path)
            return _run(bench, DEMO_QUESTIONS, ["naive"], tmp_path / "in_loop", limit=3)

    records = asyncio.run(in_a_notebook())
    assert list(records["method"]) == ["naive"] * 3
    assert records["evidence_recall"].notna().all()
