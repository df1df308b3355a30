"""Degraded answers counted: an answer that lost a step (``Answer.failures``) is saved in the
records' ``failures`` column and shown per method as "degraded n" beside "failed n", each
listed with what it lost. Real data: the demo index and global search replayed
from the committed cache, one map batch failed by a fault in the LLM client; the other map
and answer replies are the recorded model's (the reduce after the loss, never recorded, is
scripted)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, Completion, LLMError
from graphrag.query.global_search.search import GlobalSearch
from graphrag.query.naive import NaiveRAG
from graphrag.settings import REPO_ROOT
from workbench.eval.questions import load_questions
from workbench.eval.runner import run_evaluation
from workbench.report.degraded import failure_lists
from workbench.report.eval_report import write_evaluation, write_report

QUESTIONS_FILE = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
FAULT = "scripted fault: the map call fell over"


REDUCE_OPENING = "You write the final answer"  # global search's reduce prompt
REDUCED = "A reduce written from the points the map kept."


class FailingMap(ChatLLM):
    """The replaying client, but the map call of ``question`` that reads report
    ``community`` fails (a fault of the model, not of the cache); the reduce of that question,
    whose points then differ from any recorded prompt, is scripted."""

    def __init__(self, settings, question: str, community: int) -> None:
        super().__init__(settings)
        self.question, self.community = question, community

    async def achat(self, messages, **options):
        system, user = messages[0]["content"], messages[-1]["content"]
        if system.startswith(REDUCE_OPENING) and self.question in user:
            return Completion(REDUCED)
        return await super().achat(messages, **options)

    async def ajson(self, messages, schema, **options):
        text = messages[-1]["content"]
        hit = f"Report [{self.community}]" in text and self.question in text
        if options.get("name") == "map_sentences" and hit:
            raise LLMError(FAULT)
        return await super().ajson(messages, schema, **options)


def section(summary: str, title: str) -> str:
    return summary.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def row(text: str, *first: str) -> list[str]:
    start = "| " + " | ".join(first) + " |"
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [c.strip() for c in line.strip("|").split("|")]


@pytest.fixture(scope="module")
def degraded_run(demo_index: Index, replay_settings, replay_embedder, tmp_path_factory):
    """Global search and naive RAG on the first two global questions of the demo, replayed;
    one map batch of the first question fails. Returns (records, report folder)."""
    questions = load_questions(QUESTIONS_FILE)
    first = questions[questions["type"] == "global"].iloc[0]["question"]
    probe = GlobalSearch(demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder)
    community = int(probe.map_batches(probe.level_reports(first))[0][S.COMMUNITY].iloc[0])
    llm = FailingMap(replay_settings, first, community)
    methods = {
        "global": GlobalSearch(demo_index, replay_settings, llm, replay_embedder),
        "naive": NaiveRAG(demo_index, replay_settings, llm, replay_embedder),
    }
    run = run_evaluation(
        replay_settings,
        llm,
        replay_embedder,
        demo_index,
        methods,
        QUESTIONS_FILE,
        metrics=[],
        limit=2,
        progress=False,
        types=["global"],
    )
    out = write_evaluation(run, tmp_path_factory.mktemp("degraded") / "report").out
    return run.records, out, community


def test_a_failed_map_batch_is_saved_in_the_record(degraded_run) -> None:
    records, _, community = degraded_run
    assert len(records) == 4 and records["answer_error"].isna().all()
    by_pair = records.set_index(["question_id", "method"])["failures"]
    degraded = {pair: f for pair, f in by_pair.items() if f}
    assert list(degraded) == [("q19", "global")]
    [failure] = degraded[("q19", "global")]
    assert failure.startswith(f"map batch of reports [{community}]: LLMError: ")
    assert FAULT in failure
    assert all(f == [] for pair, f in by_pair.items() if pair != ("q19", "global"))


def test_the_failures_column_round_trips_through_parquet_and_csv(degraded_run) -> None:
    records, out, _ = degraded_run
    parquet = pd.read_parquet(out / "records.parquet")
    assert list(failure_lists(parquet)) == list(records["failures"])
    csv = pd.read_csv(out / "records.csv")
    assert [json.loads(f) for f in csv["failures"]] == list(records["failures"])
    assert list(failure_lists(csv)) == list(records["failures"])


def test_the_report_counts_the_degraded_answer_beside_the_failed_ones(degraded_run) -> None:
    _, out, community = degraded_run
    summary = (out / "summary.md").read_text(encoding="utf-8")

    scores = section(summary, "Scores by method")
    header = row(scores, "Method")
    assert header[1:3] == ["Failed answers", "Degraded answers"]
    assert row(scores, "global")[1:3] == ["0", "1"]
    assert row(scores, "naive")[1:3] == ["0", "0"]

    failures = section(summary, "Failures")
    degraded = row(failures, "global", "answer degraded")
    assert degraded[2] == "1 / 2"
    assert degraded[3] == "—"  # "not recorded" is for judgements only
    assert (
        degraded[4].startswith(f"map batch of reports [{community}]: LLMError")
        and "(×1)" in (degraded[4])
    )
    assert row(failures, "naive", "answer degraded")[2:] == ["0 / 2", "—", "—"]

    listed = section(summary, "Degraded answers")
    assert "- global: failed 0, degraded 1 of 2 answers" in listed
    assert "- naive: failed 0, degraded 0 of 2 answers" in listed
    assert row(listed, "q19", "global")[2].startswith(f"map batch of reports [{community}]")
    # the table of complete answers only and a reading line are our own reports' prose
    # (studies/tests/test_report_prose.py)


def test_records_without_the_failures_column_still_report(degraded_run, tmp_path: Path) -> None:
    records, _, _ = degraded_run
    old = records.drop(columns=["failures"])
    out = write_report(old, tmp_path / "old", [], {"methods": "global, naive"})
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert row(section(summary, "Scores by method"), "global")[1:3] == ["0", "0"]
    assert "## Degraded answers" not in summary
