"""Replay of the RAGAS triad: a judge call the cache does not hold makes that metric "not
recorded" (the record and the report say so; the metric is not dropped), while a missing
answer still stops the run (tests/test_eval.py); and the seeded judge sample."""

from __future__ import annotations

import dataclasses
import math
import shutil
from pathlib import Path

import pandas as pd
from conftest import FakeLLM

from graphrag.llm.cache import FORMAT_FILE, ResponseCache
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.naive import NaiveRAG
from graphrag.settings import REPO_ROOT
from workbench.eval.judge import NOT_RECORDED, NOT_SAMPLED, Judge
from workbench.eval.questions import load_questions
from workbench.eval.runner import evaluate_pair, judge_sample_ids
from workbench.report.eval_report import write_report

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
TRIAD = ["faithfulness", "answer_relevancy", "context_recall"]


def test_a_demo_question_replays_its_relevancy_and_says_faithfulness_is_not_recorded(
    demo_index, replay_settings, replay_embedder, monkeypatch, tmp_path: Path
) -> None:
    """A real demo question, replayed from a cache that holds its answer and its answer
    relevancy judgement (copied from the committed cache) but no faithfulness or context
    recall judgement: the record scores relevancy as the committed cache does and marks the
    other two not recorded; the report shows all three."""
    question = QUESTIONS.set_index("id", drop=False).loc["q01"]
    used: list[str] = []
    get = ResponseCache.get

    def spy(self: ResponseCache, key: str):
        found = get(self, key)
        if found is not None:
            used.append(key)
        return found

    monkeypatch.setattr(ResponseCache, "get", spy)

    def record(settings, metrics: list[str]) -> dict:
        llm = ChatLLM(settings)
        method = NaiveRAG(demo_index, settings, llm, replay_embedder)
        judge = Judge(settings, llm, replay_embedder, metrics)
        return run_sync(evaluate_pair(method, judge, question, metrics))

    full = record(replay_settings, ["answer_relevancy"])
    assert full["answer_relevancy_error"] is None and not math.isnan(full["answer_relevancy"])
    partial = tmp_path / "cache"
    committed = Path(replay_settings.cache.path)
    for key in used:
        source = committed / key[:2] / f"{key}.json"
        (partial / key[:2]).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, partial / key[:2] / source.name)
    shutil.copy(committed / FORMAT_FILE, partial / FORMAT_FILE)  # keyed as the committed cache
    cache = dataclasses.replace(replay_settings.cache, path=str(partial))
    triad = record(dataclasses.replace(replay_settings, cache=cache), TRIAD)

    assert triad["answer"] == full["answer"] and triad["answer_error"] is None
    assert triad["answer_relevancy"] == full["answer_relevancy"]
    for metric in ("faithfulness", "context_recall"):
        assert math.isnan(triad[metric]) and triad[f"{metric}_error"] == NOT_RECORDED

    out = write_report(pd.DataFrame([triad]), tmp_path / "report", TRIAD, {"methods": "naive"})
    summary = (out / "summary.md").read_text(encoding="utf-8")
    header = next(line for line in summary.splitlines() if line.startswith("| Method | Failed"))
    assert all(f" {metric} |" in header for metric in TRIAD)
    naive = next(line for line in summary.splitlines() if line.startswith("| naive | 0 |"))
    assert naive.count("not recorded (0 of 1 judged)") == 2
    assert "| naive | faithfulness | 0 / 1 | 1 / 1 | — |" in summary


def test_the_judge_sample_is_seeded_and_drawn_from_the_test_split() -> None:
    ids = [f"q{i:02d}" for i in range(50)]
    questions = pd.DataFrame({"id": ids})
    first = judge_sample_ids(questions, 20, seed=2024)
    assert first == judge_sample_ids(questions, 20, seed=2024) and len(first) == 20
    assert first != judge_sample_ids(questions, 20, seed=7)
    assert judge_sample_ids(questions, 0, seed=2024) is None  # 0: every question
    assert judge_sample_ids(questions, 50, seed=2024) is None  # as many as there are
    split = questions.assign(split=["test" if i % 2 else "dev" for i in range(50)])
    tests = set(split.loc[split["split"] == "test", "id"])
    drawn = judge_sample_ids(split, 20, seed=2024)
    assert len(drawn) == 20 and drawn <= tests
    assert judge_sample_ids(split, 40, seed=2024) == tests  # all 25 test questions, no dev


def test_an_answer_outside_the_judge_sample_is_judged_on_relevancy_only(
    demo_index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    fake_llm.respond_with(lambda body: "KBMI was founded in 1998 [1].")
    settings = make_settings(fake_llm.base_url)
    llm = ChatLLM(settings)
    method = NaiveRAG(demo_index, settings, llm, replay_embedder)
    judge = Judge(settings, llm, replay_embedder, ["faithfulness", "context_recall"])
    question = QUESTIONS.set_index("id", drop=False).loc["q01"]
    metrics = ["faithfulness", "context_recall"]
    record = run_sync(evaluate_pair(method, judge, question, metrics, sampled=False))
    assert record["answer"] == "KBMI was founded in 1998 [1]."
    for metric in metrics:
        assert math.isnan(record[metric]) and record[f"{metric}_error"] == NOT_SAMPLED
        assert record[f"{metric}_calls"] == 0
    assert fake_llm.calls == 1, "the answer only: no judge call"


def test_a_run_states_its_judge_sample(tmp_path: Path) -> None:
    """The report's scores section names the sample and its n."""
    size = 3
    rows = [
        {
            "question_id": f"q{i}",
            "type": "local",
            "method": "naive",
            "answer_error": None,
            "faithfulness": 1.0 if i < size else math.nan,
            "faithfulness_error": None if i < size else NOT_SAMPLED,
        }
        for i in range(5)
    ]
    out = write_report(pd.DataFrame(rows), tmp_path / "r", ["faithfulness"], {})
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"faithfulness judged on a seeded sample of {size} of 5 questions" in summary
    assert f"(n={size})" in summary
