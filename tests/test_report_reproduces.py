"""The committed demo report is reproduced, number for number, from the recorded cache."""

from __future__ import annotations

import math

import pandas as pd

from graphrag.config import REPO_ROOT
from graphrag.eval.metrics import JUDGE_FREE_METRICS
from graphrag.workbench import Workbench

CORPUS = REPO_ROOT / "data" / "kestrel_bay"
COMMITTED = REPO_ROOT / "reports" / "kestrel_bay"


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        # Embeddings of the same text differ by ~1e-7 with the batch they were computed in
        # (sentence-transformers pads per batch), which reaches answer relevancy.
        return (math.isnan(a) and math.isnan(b)) or abs(a - b) < 1e-6
    return list(a) == list(b) if hasattr(a, "__len__") and not isinstance(a, str) else a == b


def recorded(name: str) -> str:
    """Return what data/kestrel_bay/recorded_<name> says was recorded (scripts/demo.sh)."""
    return (CORPUS / f"recorded_{name}").read_text().strip()


def test_batch_evaluation_replays_the_committed_report(demo_index, replay_settings, tmp_path):
    # The demo as shipped: the defaults' index, and the methods, metrics and pairwise pairs
    # scripts/demo.sh evaluates (20 judge controls when a RAGAS metric is recorded).
    limit = int(recorded("eval_limit"))
    methods = recorded("methods").split(",")
    metrics = [] if recorded("metrics") == "none" else recorded("metrics").split(",")
    committed = pd.read_parquet(COMMITTED / "records.parquet")
    assert committed["question_id"].nunique() == limit, "recorded_eval_limit and report disagree"
    with Workbench(settings=replay_settings) as bench:
        bench.load(demo_index.path)
        result = bench.evaluate(
            CORPUS / "questions.jsonl",
            out=tmp_path / "report",
            methods=methods,
            metrics=metrics,
            limit=limit,
            progress=False,
            judge_controls=20 if metrics else 0,
            pairwise_pairs=recorded("pairwise"),
        )
    key = ["question_id", "method"]
    fresh = result.records.sort_values(key).reset_index(drop=True)
    committed = committed.sort_values(key).reset_index(drop=True)
    assert list(fresh[key].itertuples(index=False)) == list(committed[key].itertuples(index=False))
    columns = [
        "answer",
        "contexts",
        "sources",
        "ranking",
        *JUDGE_FREE_METRICS,
        "llm_calls",
        "prompt_tokens",
        "completion_tokens",
        "context_tokens",
        *metrics,
        *(f"{m}_error" for m in metrics),
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
