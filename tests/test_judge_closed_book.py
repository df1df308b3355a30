"""benchmarks/judge_closed_book.py over the recorded thematic report: every closed-book answer
and its ratings replay from the cache, and each method's win rate over it is computed from the
report's own ratings of its answers."""

from __future__ import annotations

import asyncio
import json

import pandas as pd
import pytest
from conftest import REPO_ROOT, load_benchmark

from graphrag.eval import pairwise
from graphrag.workbench import Workbench

REPORT = REPO_ROOT / "reports" / "kestrel_bay_thematic"
THEMATIC = REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl"


@pytest.fixture(scope="module")
def closed(replay_settings) -> dict:
    questions = [json.loads(line) for line in THEMATIC.read_text().splitlines()]
    with Workbench(settings=replay_settings) as bench:
        return asyncio.run(
            load_benchmark("judge_closed_book").closed_book_ratings(bench, questions)
        )


def test_every_closed_book_answer_is_rated_on_every_criterion(closed) -> None:
    assert len(closed) == 18
    assert all(set(r) == set(pairwise.CRITERIA) for r in closed.values())
    assert all(1 <= v <= 5 for r in closed.values() for v in r.values())


def test_win_rates_over_the_closed_book_answer_come_from_the_report_ratings(closed) -> None:
    table = load_benchmark("judge_closed_book").against_closed_book(REPORT, closed)
    assert set(table["answer"]) == {"naive", "global", "local"}
    assert (table["n"] == 18).all() and len(table) == 3 * len(pairwise.CRITERIA)
    # one cell recomputed by hand from pairwise.csv
    judged = pd.read_csv(REPORT / "pairwise.csv")
    rows = judged[(judged["method_a"] == "global") & (judged["criterion"] == "diversity")]
    scores = [
        pairwise.score(r, closed[q]["diversity"])
        for q, r in zip(rows["question_id"], rows["rating_a"], strict=True)
    ]
    cell = table[(table["answer"] == "global") & (table["criterion"] == "diversity")]
    assert cell["win_rate"].item() == pytest.approx(sum(scores) / len(scores))
