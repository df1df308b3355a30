"""The committed demo report is reproduced, number for number, from the recorded cache."""

from __future__ import annotations

import math

import pandas as pd

from graphrag.settings import REPO_ROOT
from studies.recorded import recorded_run
from workbench.eval.metrics import JUDGE_FREE_METRICS
from workbench.report.eval_report import machine_independent
from workbench.session import Workbench

CORPUS = REPO_ROOT / "data" / "kestrel_bay"
COMMITTED = REPO_ROOT / "reports" / "kestrel_bay"


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        # Exact, answer relevancy included: its embeddings come from the committed vector
        # packs (computed, they differ by ~1e-7 from one CPU to another, which moved the
        # sixth decimal of 8 of the demo report's scores between an AMD and an Intel machine).
        return (math.isnan(a) and math.isnan(b)) or a == b
    return list(a) == list(b) if hasattr(a, "__len__") and not isinstance(a, str) else a == b


def test_batch_evaluation_replays_the_committed_report(demo_index, replay_settings, tmp_path):
    # The demo as shipped: the defaults' index, and the methods, metrics and pairwise pairs
    # scripts/demo.sh evaluates (20 judge controls when a RAGAS metric is recorded).
    run = recorded_run(CORPUS)
    committed = pd.read_parquet(COMMITTED / "records.parquet")
    assert committed["question_id"].nunique() == run.limit, (
        "recorded_eval_limit and report disagree"
    )
    with Workbench(settings=replay_settings) as bench:
        bench.load(demo_index.path)
        result = bench.evaluate(
            CORPUS / "questions.jsonl",
            out=tmp_path / "report",
            progress=False,
            **run.evaluate_options(),
        )
    key = ["question_id", "method"]
    fresh, _ = machine_independent(result.records, None)  # as the report writes them
    fresh = fresh.sort_values(key).reset_index(drop=True)
    committed = committed.sort_values(key).reset_index(drop=True)
    assert list(fresh[key].itertuples(index=False)) == list(committed[key].itertuples(index=False))
    columns = [
        "answer",
        "contexts",
        "sources",
        "ranking",
        *(m for m in JUDGE_FREE_METRICS if m in committed),  # declined: planted sets only
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "context_tokens",
        *run.metrics,
        *(f"{m}_error" for m in run.metrics),
    ]
    for column in columns:
        for row, (new, old) in enumerate(zip(fresh[column], committed[column], strict=True)):
            assert _same(new, old), f"{column} differs for {fresh.loc[row, key].tolist()}"

    # The summary's tables are the same too (only the run's cache mode line may differ).
    def tables(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("|")]

    assert tables(result.summary) == tables((COMMITTED / "summary.md").read_text())
    # The judge's planted controls replay too (the ones recorded, and the same not-recorded).
    for table in ("judge_controls.csv", "pairwise.csv"):  # and the pairwise judgements
        fresh_table = pd.read_csv(result.out / table)
        pd.testing.assert_frame_equal(fresh_table, pd.read_csv(COMMITTED / table))


def test_a_recorded_run_without_metrics_or_pairwise_files_asks_no_judge(tmp_path) -> None:
    """A corpus folder that names only its questions and methods (or says "none" for the
    metrics) asks no RAGAS metric, no judge control and no pairwise judge; one whose metrics
    are recorded gets the planted controls that say whether its judge is informative."""
    (tmp_path / "recorded_eval_limit").write_text("5\n")
    (tmp_path / "recorded_methods").write_text("naive,local\n")
    run = recorded_run(tmp_path)
    assert run.metrics == [] and run.pairwise is None
    assert (run.limit, run.methods, run.method_limits) == (5, ["naive", "local"], {})
    options = run.evaluate_options()
    assert options["judge_controls"] == 0 and options["metrics"] == []
    (tmp_path / "recorded_metrics").write_text("none\n")
    assert recorded_run(tmp_path).evaluate_options()["judge_controls"] == 0
    assert recorded_run(CORPUS).evaluate_options()["judge_controls"] > 0
    # the planted control cases a report keeps are one more recorded file, when there is one
    assert options["keep_controls"] is None
    musique = recorded_run(REPO_ROOT / "data" / "musique").evaluate_options()
    assert musique["keep_controls"].name == "recorded_judge_controls.csv"


def test_a_corpus_without_recorded_files_is_no_recorded_run(tmp_path) -> None:
    """A user's corpus has no recorded_* file: that is no recorded run, evaluated as its
    settings say (notebook 3 once failed on it with int("") for the missing limit); a folder
    naming some files only leaves the others to the defaults (every question, the settings'
    methods) instead of failing."""
    assert recorded_run(tmp_path) is None
    (tmp_path / "recorded_methods").write_text("naive,local\n")
    run = recorded_run(tmp_path)
    assert (run.limit, run.methods, run.metrics) == (None, ["naive", "local"], [])
    assert run.evaluate_options()["limit"] is None
    (tmp_path / "recorded_methods").unlink()
    (tmp_path / "recorded_eval_limit").write_text("4\n")
    assert (recorded_run(tmp_path).limit, recorded_run(tmp_path).methods) == (4, None)
