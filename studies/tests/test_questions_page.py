"""The generated-questions page (docs/questions.md) is written from the generated sets and
their filter logs: the filter table, the kept counts by split and a seeded sample."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from graphrag.settings import REPO_ROOT
from studies import questions_page
from studies.generated_ranking import HANDWRITTEN, agreement, compare, mean_scores, render
from studies.questions_page import SAMPLE, corpus_section
from workbench.session import Workbench

SET = Path("data/x/generated.jsonl")
GENERATED = REPO_ROOT / "data/kestrel_bay/generated_questions.jsonl"


def _write_set(root: Path, n: int) -> None:
    records = [
        {
            "id": f"L{i:02d}",
            "question": f"Which boat | number {i}?",
            "reference": f"Boat {i}.",
            "type": "local" if i % 2 else "multi_hop",
            "split": "dev" if i % 3 else "test",
            "support": [f"doc{i}"],
            "answer_keywords": [f"{i}"],
        }
        | ({} if i % 2 else {"bridge_entity": "Port Aldry"})
        for i in range(1, n + 1)
    ]
    (root / SET).parent.mkdir(parents=True)
    (root / SET).write_text("".join(json.dumps(r) + "\n" for r in records))
    counts = [
        {
            "kind": "all",
            "candidates": 40,
            "malformed": 2,
            "duplicate": 1,
            "closed-book": 3,
            "unanswerable": 4,
            "kept": n,
            "share kept": round(n / 40, 3),
        }
    ]
    log = {"seed": 5, "counts": counts, "candidates": []}
    (root / "data/x/generated.filter_log.json").write_text(json.dumps(log))


def test_the_section_holds_the_filter_counts_and_a_seeded_sample(tmp_path: Path) -> None:
    _write_set(tmp_path, 30)
    lines = corpus_section("X", SET, "graphrag questions generate ...", tmp_path)
    assert "| all | 40 | 2 | 3 | 4 | 1 | 30 | 0.75 |" in lines
    dev = sum(1 for i in range(1, 31) if i % 3)
    assert f"Kept: 30 ({dev} dev, {30 - dev} test)." in lines
    rows = [line for line in lines if line.startswith("| L")]
    assert len(rows) == SAMPLE and len(set(rows)) == SAMPLE
    assert rows == [
        line for line in corpus_section("X", SET, "c", tmp_path) if line.startswith("| L")
    ]
    assert "Which boat \\| number" in rows[0]  # a pipe in a question does not split its cell
    assert any("(bridge: Port Aldry)" in row for row in rows)


def test_a_small_set_is_printed_whole(tmp_path: Path) -> None:
    _write_set(tmp_path, 5)
    rows = [line for line in corpus_section("X", SET, "c", tmp_path) if line.startswith("| L")]
    assert [row.split(" | ")[0] for row in rows] == [f"| L{i:02d}" for i in range(1, 6)]


def test_the_committed_page_is_the_one_the_sets_give() -> None:
    assert questions_page.main(["--check"]) == 0


def test_generated_ranking_compares_the_methods_mean_scores_across_sets() -> None:
    def records(scores: dict[str, list[float]], prefix: str) -> pd.DataFrame:
        rows = [
            {"question_id": f"{prefix}{i}", "method": method, "keyword_hit_rate": value}
            for method, values in scores.items()
            for i, value in enumerate(values)
        ]
        return pd.DataFrame(rows)

    hand = records({"naive": [0.2, 0.3, 0.1], "local": [0.6, 0.5, 0.7], "ppr": [0.9, 1, 0.8]}, "q")
    same = records({"naive": [0, 0.5, 0.1], "local": [0.4, 0.6, 0.5], "ppr": [1, 0.7, 0.9]}, "L")
    result = agreement(hand, same)
    assert result.tau == 1.0 and result.methods == ("naive", "local", "ppr")
    assert (result.n_first, result.n_second) == (3, 3)
    assert render(result).startswith("Kendall's tau between the rankings of naive, local, ppr")
    flipped = records({"naive": [1, 0.9, 1], "local": [0.5, 0.5, 0.4], "ppr": [0, 0.1, 0]}, "L")
    assert agreement(hand, flipped).tau == -1.0


def test_the_ranking_section_prints_both_sets_means_and_the_tau_line(tmp_path: Path) -> None:
    saved = {
        "command": "python -m studies.generated_ranking --retrieval",
        "metric": "recall_at_5",
        "means": {
            "handwritten": {"naive": 0.8, "ppr": 0.9},
            "generated": {"naive": 0.5, "ppr": 0.7},
        },
        "line": "Kendall's tau between the rankings of naive, ppr by mean recall_at_5: 1.00",
    }
    (tmp_path / "r.json").write_text(json.dumps(saved))
    answers = {**saved, "command": "python -m studies.generated_ranking", "metric": "hit"}
    (tmp_path / "a.json").write_text(json.dumps(answers))
    lines = questions_page.ranking_section((Path("r.json"), Path("none.json")), tmp_path)
    assert "| set | naive | ppr |" in lines and "### By retrieval only: recall_at_5" in lines
    assert "| generated | 0.500 | 0.700 |" in lines
    assert lines[-2].startswith("Mean recall_at_5 per method. Kendall's tau")
    both = questions_page.ranking_section((Path("r.json"), Path("a.json")), tmp_path)
    assert both.index("### By retrieval only: recall_at_5") < both.index("### By answers: hit")
    assert both[-2].startswith("Mean hit per method. Kendall's tau")


@pytest.mark.parametrize(
    "saved", questions_page.RANKINGS, ids=lambda path: path.stem.removeprefix("generated_")
)
def test_the_saved_ranking_comparisons_replay_on_the_demo(
    saved: Path, demo_index, replay_settings, tmp_path: Path
) -> None:
    """Real data: both committed comparisons (by retrieval and by the recorded answers to
    the 24 hand-written and 27 generated demo questions) come back from the committed cache
    with the same means and the same tau line."""
    committed = json.loads((REPO_ROOT / saved).read_text())
    with Workbench(settings=replay_settings) as bench:  # replay: a missing answer fails
        bench.load(demo_index.path)
        records = compare(
            bench,
            {"handwritten": REPO_ROOT / HANDWRITTEN, "generated": GENERATED},
            list(committed["means"]["handwritten"]),
            tmp_path,
            retrieval="--retrieval" in committed["command"],
        )
    metric = committed["metric"]
    assert mean_scores(records, metric) == committed["means"]
    assert (
        render(agreement(records["handwritten"], records["generated"], metric), metric)
        == (committed["line"])
    )
