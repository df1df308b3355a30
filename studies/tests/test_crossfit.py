"""Cross-fitting a query setting on real data: PPR's passage weight over MuSiQue's paragraphs
and questions. Each fold must be scored under the candidate that was best on the *other*
folds, with exactly the records that candidate's own run produced."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pandas as pd
import pytest
from conftest import MUSIQUE

from studies.crossfit import SETTING_KEY, cross_fit, fold_of
from studies.report_prose import retrieval_section
from workbench.eval.retrieval import RetrievalEvalError
from workbench.session import Workbench

LIMIT = 12
WEIGHTS = (1.0, 0.05)  # the default first: it wins ties


@pytest.fixture(scope="module")
def candidate_runs(musique_index, musique_settings, tmp_path_factory):
    """Naive RAG and PPR on the first MuSiQue questions, once per passage weight."""
    folders = []
    for weight in WEIGHTS:
        query = musique_settings.query.changed({"ppr.passage_weight": weight})
        settings = dataclasses.replace(musique_settings, query=query)
        out = tmp_path_factory.mktemp("crossfit") / f"w{weight}"
        with Workbench(settings=settings) as bench:
            bench.load(musique_index.path)
            bench.evaluate_retrieval(
                MUSIQUE / "questions.jsonl",
                out=out,
                methods=["naive", "ppr"],
                limit=LIMIT,
                progress=False,
            )
        folders.append(out)
    return folders


def test_each_fold_takes_the_candidate_best_on_the_other_folds(candidate_runs, tmp_path) -> None:
    out = tmp_path / "crossfit"
    selection = cross_fit(candidate_runs, "ppr", out, folds=2, seed=7)
    runs = [pd.read_parquet(f / "retrieval.parquet") for f in candidate_runs]
    fold = fold_of(runs[0]["question_id"].tolist(), 2, 7)
    # the weight changes PPR's contexts on these questions, so the choice is a real one
    ppr = [r[r["method"] == "ppr"].set_index("question_id") for r in runs]
    assert any(
        list(ppr[0].loc[q, "sources"]) != list(ppr[1].loc[q, "sources"]) for q in ppr[0].index
    )

    records = pd.read_parquet(out / "retrieval.parquet")
    fitted = records[records["method"] == "ppr (cross-fitted)"].set_index("question_id")
    assert sorted(fitted.index) == sorted(fold)
    for k in (1, 2):
        training = [p[p.index.map(fold) != k - 1]["evidence_recall"].mean() for p in ppr]
        best = max(range(len(WEIGHTS)), key=lambda i: (training[i], -i))
        rows = selection[selection["fold"] == k].set_index("candidate")
        assert rows["training_mean"].tolist() == pytest.approx(training)
        assert rows["chosen"].tolist() == [i == best for i in range(len(WEIGHTS))]
        for question in [q for q, f in fold.items() if f == k - 1]:
            expected = ppr[best].loc[question]
            assert list(fitted.loc[question, "sources"]) == list(expected["sources"])
            assert fitted.loc[question, "evidence_recall"] == expected["evidence_recall"]

    naive = records[records["method"] == "naive"].reset_index(drop=True)
    original = runs[0][runs[0]["method"] == "naive"].reset_index(drop=True)
    assert naive["evidence_recall"].equals(original["evidence_recall"])
    tests = pd.read_csv(out / "tests.csv")
    assert set(tests["method"]) == {"ppr (cross-fitted)"}
    # every question is scored cross-fitted; the tests are the headline's, the test questions
    n_test = records.loc[records["split"] == "test", "question_id"].nunique()
    assert 0 < n_test < LIMIT and (tests["n"] == n_test).all()
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert "cross-fitted on evidence_recall over 2 folds" in run[SETTING_KEY]
    page = (out / "summary.md").read_text(encoding="utf-8")
    assert "## Cross-fitting" in page
    assert pd.read_csv(out / "selection.csv")["chosen"].tolist() == selection["chosen"].tolist()
    assert "| ppr (cross-fitted) |" in "\n".join(retrieval_section(out))


def test_folds_are_seeded_balanced_and_cover_every_question() -> None:
    ids = [f"q{i}" for i in range(11)]
    fold = fold_of(ids, 3, seed=1)
    assert fold == fold_of(list(reversed(ids)), 3, seed=1)
    assert sorted(fold) == sorted(ids)
    sizes = pd.Series(fold).value_counts()
    assert sizes.max() - sizes.min() <= 1
    assert fold != fold_of(ids, 3, seed=2)
    with pytest.raises(RetrievalEvalError, match="--folds 1"):
        fold_of(ids, 1, seed=1)


def test_candidates_that_disagree_are_refused_by_name(candidate_runs, tmp_path) -> None:
    # a candidate whose baseline scored differently: the swept setting moved naive RAG too
    moved = tmp_path / "moved"
    shutil.copytree(candidate_runs[1], moved)
    records = pd.read_parquet(moved / "retrieval.parquet")
    naive = records["method"] == "naive"
    records.loc[naive, "evidence_recall"] = 1.0 - records.loc[naive, "evidence_recall"]
    records.to_parquet(moved / "retrieval.parquet", index=False)
    with pytest.raises(RetrievalEvalError, match="moved: naive's scores differ"):
        cross_fit([candidate_runs[0], moved], "ppr", tmp_path / "out")

    other = tmp_path / "other"
    shutil.copytree(candidate_runs[1], other)
    run = json.loads((other / "run.json").read_text(encoding="utf-8"))
    run["questions"] = "elsewhere.jsonl (3)"
    (other / "run.json").write_text(json.dumps(run), encoding="utf-8")
    with pytest.raises(RetrievalEvalError, match="other: questions"):
        cross_fit([candidate_runs[0], other], "ppr", tmp_path / "out")

    with pytest.raises(RetrievalEvalError, match="no records of method 'local'"):
        cross_fit(candidate_runs, "local", tmp_path / "out")
    with pytest.raises(RetrievalEvalError, match="not a retrieval report"):
        cross_fit([candidate_runs[0], tmp_path], "ppr", tmp_path / "out")


def test_numeric_question_ids_keep_their_hop_rows(candidate_runs, tmp_path) -> None:
    """hops.csv is read back with string ids, so ids that look like numbers ("1", "2", ...)
    still match their records and every held-out question keeps its per-hop rows."""
    renamed = []
    for folder in candidate_runs:
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy)
        records = pd.read_parquet(copy / "retrieval.parquet")
        number = {q: str(i + 1) for i, q in enumerate(dict.fromkeys(records["question_id"]))}
        records["question_id"] = records["question_id"].map(number)
        records.to_parquet(copy / "retrieval.parquet", index=False)
        hop_rows = pd.read_csv(copy / "hops.csv")
        hop_rows["question_id"] = hop_rows["question_id"].map(number)
        hop_rows.to_csv(copy / "hops.csv", index=False)
        renamed.append(copy)
    out = tmp_path / "out"
    cross_fit(renamed, "ppr", out)
    hop_rows = pd.read_csv(out / "hops.csv", dtype={"question_id": str})
    fitted = hop_rows[hop_rows["method"] == "ppr (cross-fitted)"]
    assert fitted["question_id"].nunique() == LIMIT
