"""CMRC 2018 conversion: a hand-made SQuAD-style item with known outputs, the seeded split by
document, and the committed slice (data/cmrc2018) checked against its own documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag.settings import REPO_ROOT
from graphrag.text.documents import chunk_documents, load_documents
from workbench.cli import main
from workbench.eval.benchmarks import BenchmarkError, convert_benchmark, read_cmrc2018
from workbench.eval.questions import load_questions

CMRC = REPO_ROOT / "data" / "cmrc2018"


def squad(passages: int) -> dict:
    """A SQuAD-format file: ``passages`` passages of two questions, three answers each."""
    articles = []
    for i in range(passages):
        qas = [
            {
                "id": f"DEV_{i}_QUERY_{q}",
                "question": f"第{i}段的第{q}个问题是什么？",
                "answers": [{"text": t, "answer_start": 0} for t in ("光荣", "光荣", "光荣公司")],
            }
            for q in range(2)
        ]
        context = f"《战国无双{i}》是由光荣开发的游戏。"
        articles.append(
            {
                "id": f"DEV_{i}",
                "title": f"战国无双{i}" if i else "锣鼓经",
                "paragraphs": [{"id": f"DEV_{i}", "context": context, "qas": qas}],
            }
        )
    return {"version": "v1.0", "data": articles}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "cmrc2018_dev.json").write_text(json.dumps(squad(6), ensure_ascii=False))
    (folder / "LICENCE").write_text("Attribution-ShareAlike 4.0 International\n")
    return folder


def test_one_question_per_passage_with_aliases_and_a_readable_id(source: Path) -> None:
    questions = read_cmrc2018(source)
    assert [q.id for q in questions] == [f"DEV_{i}_QUERY_0" for i in range(6)]
    first = questions[0]
    assert (first.answer, first.aliases, first.kind, first.hops) == (
        "光荣",
        ["光荣公司"],
        "local",
        1,
    )
    # a title with no Latin letter or digit falls back to CMRC's own passage id
    assert first.paragraphs[0].doc_id.startswith("dev_0_")
    assert questions[3].paragraphs[0].doc_id.startswith("3_")


def test_split_by_document_is_seeded_and_half_and_half(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = convert_benchmark("cmrc2018", source, out, 6, 0, split_seed=62)
    assert (summary.questions, summary.documents, summary.gold_documents) == (6, 6, 6)
    records = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert sorted(r["split"] for r in records) == ["dev"] * 3 + ["test"] * 3
    again = tmp_path / "again"
    convert_benchmark("cmrc2018", source, again, 6, 0, split_seed=62)
    assert (again / "questions.jsonl").read_bytes() == (out / "questions.jsonl").read_bytes()
    assert (out / "SOURCE_LICENCE").is_file()
    text = next((out / "docs").glob("dev_0_*.md")).read_text(encoding="utf-8")
    assert text == "# 锣鼓经\n\n《战国无双0》是由光荣开发的游戏。\n"


def test_the_command_and_a_file_that_is_not_squad(source: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli"
    argv = ["convert", "cmrc2018", "--source", str(source), "--out", str(out)]
    assert main([*argv, "--questions", "4", "--distractors", "0", "--split-seed", "1"]) == 0
    assert "4 questions (1-hop 4); 4 documents (4 gold, 0 distractors)" in capsys.readouterr().out
    bad = tmp_path / "list.json"
    bad.write_text("[]")
    with pytest.raises(BenchmarkError, match="list.json.*SQuAD"):
        read_cmrc2018(bad)


def test_the_committed_slice_is_consistent() -> None:
    documents = {p.stem for p in (CMRC / "docs").glob("*.md")}
    questions = load_questions(CMRC / "questions.jsonl", documents=documents)
    assert len(questions) == 300 and len(documents) == 300
    assert (questions["type"] == "local").all()
    assert questions["split"].value_counts().to_dict() == {"dev": 150, "test": 150}
    assert {d for s in questions["support"] for d in s} == documents  # one question a passage
    loaded = load_documents(CMRC / "docs").documents
    assert 300 <= len(chunk_documents(loaded)) <= 340  # most passages are one chunk
    for row in questions.itertuples(index=False):
        (doc,) = row.support
        text = (CMRC / "docs" / f"{doc}.md").read_text(encoding="utf-8")
        assert row.reference in text  # span extraction: the answer is in its passage
    readme = (CMRC / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme and "Cui" in readme
    assert (CMRC / "SOURCE_LICENCE").is_file()


def test_the_llm_index_slice_is_the_first_forty_passages() -> None:
    """data/cmrc2018_slice is what its README says: the first 40 passages of data/cmrc2018,
    byte for byte, each with its question, split 20 / 20, with the licence kept."""
    sliced = CMRC.parent / "cmrc2018_slice"
    documents = {p.stem for p in (sliced / "docs").glob("*.md")}
    questions = load_questions(sliced / "questions.jsonl", documents=documents)
    assert len(documents) == len(questions) == 40
    assert questions["split"].value_counts().to_dict() == {"dev": 20, "test": 20}
    whole = load_questions(CMRC / "questions.jsonl").set_index("id")
    for row in questions.itertuples(index=False):
        (doc,) = row.support
        assert (sliced / "docs" / f"{doc}.md").read_bytes() == (
            CMRC / "docs" / f"{doc}.md"
        ).read_bytes()
        assert whole.loc[row.id, "question"] == row.question
    assert set(whole.index[:40]) == set(questions["id"])  # the first 40, in file order
    readme = (sliced / "README.md").read_text(encoding="utf-8")
    assert "CC BY-SA 4.0" in readme and "Cui" in readme
    assert (sliced / "SOURCE_LICENCE").is_file()
