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
from studies.chinese_prompts import example_names, in_chinese
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


def test_the_chinese_prompts_index_the_demo_in_chinese_with_no_example_names(
    tmp_path, capsys
) -> None:
    """The recorded index of data/zh_demo with the _zh extraction prompts (the packaged
    default for a Chinese text): its descriptions are Chinese and none names a worked
    example's people or places; with the English prompts (data/zh_demo/english_prompt.toml,
    the same replies as before the _zh prompts) they were English, and two described 林海燕
    and 浙江大学 with the English example's Dunmore Rowing Club and Harbour Cup."""
    replay, docs = ["--cache", "replay"], ["--input", str(ZH_DEMO / "docs")]
    english = ["--config", str(ZH_DEMO / "english_prompt.toml")]
    assert main([*replay, "index", *docs, "--out", str(tmp_path / "zh"), "--quiet"]) == 0
    assert main([*english, *replay, "index", *docs, "--out", str(tmp_path / "en"), "--quiet"]) == 0
    names = example_names()
    assert {"Lena Ortiz", "何秋菊", "石岚"} <= names
    shares = {}
    for arm in ("zh", "en"):
        descriptions = pd.read_parquet(tmp_path / arm / "entities.parquet")["description"]
        shares[arm] = descriptions.map(in_chinese).mean()
        leaked = [d for d in descriptions if any(name in d for name in names)]
        assert (arm == "en") == bool(leaked), (arm, leaked)
    assert shares["zh"] > 0.8 and shares["en"] == 0.0, shares
