"""The Chinese demo replays end to end: the recorded LLM index of data/zh_demo and one Chinese
question through naive RAG and local search, answered in Chinese from the right passage.

Recorded by ``ZH=1 scripts/record_demo.sh`` (three model calls in data/llm_cache); the same
commands run in ``scripts/demo.sh`` with ``--cache replay``.
"""

from __future__ import annotations

import json
import re

import pandas as pd

from graphrag.settings import REPO_ROOT
from workbench.cli import main

ZH_DEMO = REPO_ROOT / "data" / "zh_demo"
HAN = re.compile(r"[\u4e00-\u9fff]")


def test_chinese_demo_question_replays_in_chinese_with_its_sources(tmp_path, capsys) -> None:
    index = tmp_path / "zh_demo"
    replay = ["--cache", "replay"]
    assert main([*replay, "index", "--input", str(ZH_DEMO / "docs"), "--out", str(index)]) == 0
    capsys.readouterr()
    question = (ZH_DEMO / "recorded_question").read_text(encoding="utf-8").strip()
    args = [*replay, "query", "--index", str(index), "--method", "naive,local", "--json"]
    assert main([*args, question]) == 0
    answers = json.loads(capsys.readouterr().out)
    assert set(answers) == {"naive", "local"}
    for answer in answers.values():
        text = answer["text"]
        # Hand-checked against 01_cooperative.md: founded in 2015, agreement with 浙江大学海洋学院.
        assert "2015" in text and "浙江大学" in text, text
        assert len(HAN.findall(text)) > len(text) / 2, text
        files = [p["file"].replace("\\", "/") for c in answer["citations"] for p in c["places"]]
        assert any(f.endswith("zh_demo/docs/01_cooperative.md") for f in files), files


def test_chinese_dev_questions_replay_with_the_chinese_answer_prompt(tmp_path, capsys) -> None:
    """The six dev questions were recorded with answer_zh (a replay of any other prompt would
    miss the cache): every answer is Chinese and holds its keywords (hand-checked in
    data/zh_demo/questions.jsonl against the passages)."""
    index, out = tmp_path / "zh_demo", tmp_path / "report"
    replay = ["--cache", "replay"]
    assert main([*replay, "index", "--input", str(ZH_DEMO / "docs"), "--out", str(index)]) == 0
    args = [*replay, "eval", "--index", str(index), "--questions", str(ZH_DEMO / "questions.jsonl")]
    args += ["--methods", "naive", "--metrics", "none", "--out", str(out), "--quiet"]
    assert main(args) == 0
    records = pd.read_parquet(out / "records.parquet")
    assert len(records) == 6 and records["answer_error"].isna().all()
    for text in records["answer"]:
        assert len(HAN.findall(text)) > len(text) / 2, text
    assert records["keyword_hit_rate"].mean() == 1.0
