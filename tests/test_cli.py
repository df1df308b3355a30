"""The command line turns bad input into one clear line naming the file or setting."""

from __future__ import annotations

import pytest

from graphrag.cli import main


def test_help_lists_every_command(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for command in ("llm", "index", "query", "eval"):
        assert command in out


def test_missing_index_is_one_line_naming_the_folder(tmp_path, capsys) -> None:
    missing = tmp_path / "nowhere"
    assert main(["query", "--index", str(missing), "a question"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: index folder") and str(missing) in err


def test_binary_document_is_named(tmp_path, capsys) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    assert main(["index", "--input", str(corpus), "--out", str(tmp_path / "idx")]) == 1
    assert "blob.txt: looks binary" in capsys.readouterr().err


def test_bad_setting_from_the_environment_is_named(monkeypatch, capsys) -> None:
    monkeypatch.setenv("GRAPHRAG_LLM__CONCURRENCY", "many")
    assert main(["llm", "hi"]) == 2
    assert "llm.concurrency='many'" in capsys.readouterr().err


def test_malformed_question_set_names_the_line(demo_index, tmp_path, capsys) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "q1", "question": "Who?", "reference": "X"}\n{"id": "q2"}\n')
    code = main(
        [
            "--cache",
            "replay",
            "eval",
            "--index",
            str(demo_index.path),
            "--questions",
            str(questions),
            "--out",
            str(tmp_path / "report"),
        ]
    )
    assert code == 1
    assert (
        f"{questions}:2: missing or empty field(s) question, reference" in capsys.readouterr().err
    )
