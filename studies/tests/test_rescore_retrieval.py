"""A committed retrieval report rewritten from its own records gives the committed bytes: the
ranking scores come from the stored rankings, the recorded scores and p-values unchanged."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from graphrag.settings import REPO_ROOT
from studies.rescore_retrieval import corpus_evidence, rescore
from workbench.eval.retrieval import RetrievalEvalError

REPORT = REPO_ROOT / "reports" / "musique_retrieval_ppr_crossfit"
CONFIG = REPO_ROOT / "data" / "musique" / "graphrag.toml"


def test_rescoring_a_committed_report_gives_its_bytes(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(REPO_ROOT)  # the run's question path is relative to the repository
    folder = tmp_path / REPORT.name
    shutil.copytree(REPORT, folder)
    records = pd.read_parquet(folder / "retrieval.parquet")
    records.drop(columns=["mrr", "ndcg_at_5", "type"]).to_parquet(folder / "retrieval.parquet")

    rescore(folder, corpus_evidence(str(CONFIG), REPO_ROOT / "data" / "musique_full" / "docs"))

    for name in ("summary.md", "tests.csv", "hops.csv", "run.json", "selection.csv"):
        assert (folder / name).read_bytes() == (REPORT / name).read_bytes(), name
    again = pd.read_parquet(folder / "retrieval.parquet")
    pd.testing.assert_frame_equal(again, records)


def test_a_corpus_that_is_not_the_runs_is_refused(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    folder = tmp_path / REPORT.name
    shutil.copytree(REPORT, folder)
    other = corpus_evidence(str(CONFIG), REPO_ROOT / "data" / "musique" / "docs")
    with pytest.raises(RetrievalEvalError, match="the corpus's chunking does not give"):
        rescore(folder, other)
