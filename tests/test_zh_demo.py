"""The Chinese demo replays end to end: the recorded LLM index of data/zh_demo and one Chinese
question through naive RAG and local search, answered in Chinese from the right passage.

Recorded by ``ZH=1 scripts/record_demo.sh`` (three model calls in data/llm_cache); the same
commands run in ``scripts/demo.sh`` with ``--cache replay``.
"""

from __future__ import annotations

import json
import re

from graphrag.cli import main
from graphrag.settings import REPO_ROOT

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
