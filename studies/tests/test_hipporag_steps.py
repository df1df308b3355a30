"""The HippoRAG step study's table and page block (studies/hipporag_steps.py) on small records."""

from __future__ import annotations

import pandas as pd
import pytest

from studies.hipporag_steps import PAGE_END, PAGE_START, STEPS, step_table, steps_block


def records() -> pd.DataFrame:
    rows = []
    for step, value in (("recognition", 0.6), ("naive", 0.5), ("ppr", 0.4)):
        for split in ("test", "dev"):
            for q in range(2):
                rows.append(
                    {
                        "method": step,
                        "split": split,
                        "question_id": f"{split}{q}",
                        "evidence_recall": value + q / 10,
                        "recall_at_2": value,
                        "recall_at_5": value + 0.1,
                    }
                )
    return pd.DataFrame(rows)


def test_the_table_keeps_the_steps_in_order_per_split() -> None:
    table = step_table(records())
    assert list(table["method"]) == ["naive", "ppr", "recognition"] * 2
    assert list(table["split"]) == ["dev"] * 3 + ["test"] * 3
    assert table["evidence_recall"].iloc[0] == pytest.approx(0.55)


def test_the_page_block_shows_dev_and_test_side_by_side_for_the_steps_run() -> None:
    table = step_table(records())
    record = {
        "index": "idx",
        "questions": "q.jsonl (4)",
        "command": "python -m studies.hipporag_steps",
        "steps": [{"step": s, "adds": a} for s, a, *_ in STEPS],
        "table": table.to_dict(orient="records"),
        "n": [
            {"method": m, "split": sp, "n": 2}
            for m in ("naive", "ppr", "recognition")
            for sp in ("dev", "test")
        ],
    }
    block = steps_block([record])
    assert block.startswith(PAGE_START) and block.endswith(PAGE_END)
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[0] for r in rows[1:]] == ["| naive", "| ppr", "| recognition"]
    assert "| 2 / 2 | 0.550 / 0.550 | 0.500 / 0.500 | 0.600 / 0.600 |" in rows[1]
