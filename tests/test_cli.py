"""The command line turns bad input into one clear line naming the file or setting."""

from __future__ import annotations

import json
import shlex

import pytest
from conftest import empty_settings_file

from graphrag.query.registry import METHODS, OPT_IN_METHODS, method_names
from graphrag.settings import REPO_ROOT
from workbench.cli import build_parser, main
from workbench.eval.judge_validity import DEFAULT_PAIRS
from workbench.eval.pairwise import DEFAULT_CONTROLS
from workbench.session import Workbench


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


Q04 = (
    "At the Regional Council meeting of 8 December 2022, which councillor moved to defer the "
    "decision on Tidewell's Harrow Shoal application until a survey was done?"
)


# q04's answers are recorded for the five default methods and ppr on the defaults (the demo as
# shipped). A miss would fail in replay.
def test_query_prints_every_methods_cost_beside_its_answer(
    demo_index, tmp_path, monkeypatch, capsys
) -> None:
    index = demo_index
    config = empty_settings_file(tmp_path)
    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "vectors.sqlite"))
    args = ["--config", str(config), "--cache", "replay", "query"]
    args += ["--index", str(index.path), Q04]
    assert main([*args, "--method", "all,ppr", "--json"]) == 0
    answers = json.loads(capsys.readouterr().out)
    assert list(answers) == [*METHODS, "ppr"], "all is the five default methods"

    assert main([*args, "--method", "all,ppr"]) == 0
    out = capsys.readouterr().out
    headers = [line for line in out.splitlines() if line.startswith("=== ")]
    assert len(headers) == len(answers)
    for header, (method, answer) in zip(headers, answers.items(), strict=True):
        usage = answer["usage"]
        assert header.startswith(f"=== {method}  ")
        assert (
            f"cost: {usage['calls']} LLM calls, {usage['prompt_tokens']} prompt + "
            f"{usage['completion_tokens']} completion tokens, " in header
        )
        assert usage["calls"] >= 1 and usage["prompt_tokens"] > 0
        assert usage["completion_tokens"] > 0
        assert answer["text"].strip() in out
    # under each answer the numbered sources: file, character span, the nearest sentence
    assert out.count("sources (* cited):") == len(answers)
    naive = answers["naive"]["citations"]
    assert [c["number"] for c in naive] == list(range(1, len(answers["naive"]["contexts"]) + 1))
    first = naive[0]["places"][0]
    assert first["file"].endswith(f"{first['document']}.md")
    assert f'[1] {first["file"]} chars {first["start"]}-{first["end"]}: "{first["snippet"]}"' in out


def test_method_names_keep_opt_in_methods_out_of_all_unless_asked() -> None:
    assert method_names(["all"], []) == list(METHODS)
    assert method_names(["all"], ["drift", "ppr"]) == [*METHODS, "drift", "ppr"]
    assert method_names(["ppr"], ["drift"]) == ["ppr"], "opt-in only widens all"
    assert method_names(["naive", "all", "naive"], ["ppr"]) == [*METHODS, "ppr"]
    assert set(OPT_IN_METHODS) == {
        "lazy_global",
        "drift",
        "ppr",
        "hipporag",
        "minirag",
        "router",
        "bm25",
        "hybrid",
        "integrate",
        "cypher",
        "step_back",
        "decomposition",
    }
    assert not set(OPT_IN_METHODS) & set(METHODS)


def test_unknown_method_is_one_line_naming_the_known_ones(demo_index, capsys) -> None:
    args = ["--cache", "replay", "query", "--index", str(demo_index.path)]
    assert main([*args, "--method", "graph_magic", "Who?"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown method(s) graph_magic; known: ")
    assert "drift, ppr" in err


@pytest.mark.parametrize(
    ("extra", "env", "expected"),
    [
        ([], {}, list(METHODS)),
        (["--opt-in"], {}, [*METHODS, *OPT_IN_METHODS]),
        # eval.methods may name an opt-in method (eval.opt_in_methods is gone)
        ([], {"GRAPHRAG_EVAL__METHODS": '["naive", "ppr"]'}, ["naive", "ppr"]),
        (["--methods", "naive,ppr"], {}, ["naive", "ppr"]),
        (
            ["--methods", "all", "--opt-in"],
            {},
            [*METHODS, *OPT_IN_METHODS],
        ),
    ],
)
def test_eval_evaluates_the_recorded_methods_unless_opt_in_is_asked(
    isolated_cwd, monkeypatch, tmp_path, extra, env, expected
) -> None:
    # Only the method list is under test here: the evaluation itself is replaced.
    seen = {}

    class Done:
        def render(self) -> str:
            return "done"

    def capture(self, questions, *, methods, **kwargs):
        seen["methods"] = methods
        return Done()

    monkeypatch.setattr("workbench.session.Workbench.evaluate", capture)
    monkeypatch.setattr("workbench.session.Workbench.load", lambda self, path: None)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    args = ["eval", "--index", "i", "--questions", "q.jsonl", "--out", str(tmp_path), *extra]
    assert main(args) == 0
    assert seen["methods"] == expected


def test_eval_control_counts_default_to_the_eval_packages(demo_index, monkeypatch, tmp_path):
    """Unset, --judge-controls and --pairwise-controls are the eval package's own defaults
    (judge_validity.DEFAULT_PAIRS, pairwise.DEFAULT_CONTROLS), defined there once."""
    passed: list[dict] = []

    def evaluate(self, questions, **options):  # in place of Workbench.evaluate
        passed.append(options)
        return type("Result", (), {"render": lambda self: "evaluated"})()

    monkeypatch.setattr(Workbench, "evaluate", evaluate)
    questions = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
    args = ["--config", str(empty_settings_file(tmp_path)), "--cache", "replay", "eval"]
    args += ["--index", str(demo_index.path), "--questions", str(questions), "--out", "unused"]
    assert main(args) == 0
    assert main([*args, "--judge-controls", "3", "--pairwise-controls", "2"]) == 0
    assert passed[0]["judge_controls"] == DEFAULT_PAIRS
    assert passed[0]["pairwise_controls"] == DEFAULT_CONTROLS
    assert (passed[1]["judge_controls"], passed[1]["pairwise_controls"]) == (3, 2)


@pytest.mark.parametrize(
    "argv",
    [
        ["--root", "proj", "index"],
        ["index", "--root", "proj"],
        ["query", "--root", "proj", "a question", "--method", "all"],
        ["--root", "elsewhere", "eval", "--root", "proj"],  # the nearer one wins
    ],
)
def test_root_may_come_before_or_after_the_command(argv) -> None:
    assert build_parser().parse_args(argv).root == "proj"


def test_no_root_anywhere_leaves_the_default() -> None:
    assert build_parser().parse_args(["index"]).root is None


@pytest.mark.parametrize("command", [["index"], ["query", "Who?"], ["eval"], ["settings"]])
def test_global_options_parse_before_or_after_the_command(command) -> None:
    given = ["--root", "proj", "--config", "v.toml", "--cache", "off", "--quiet"]
    for argv in ([*given, *command], [*command, *given]):
        args = build_parser().parse_args(argv)
        assert (args.root, args.config, args.cache, args.quiet) == ("proj", "v.toml", "off", True)
    args = build_parser().parse_args(command)
    assert (args.root, args.config, args.cache, args.quiet) == (None, None, None, False)


@pytest.mark.parametrize("command", ["index", "query"])
def test_index_and_query_help_name_the_cache_modes(command, capsys) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--cache {on,off,replay}" in text
    assert "replay (recorded replies only" in text and "off (ask the model" in text


def test_an_unindexed_project_suggests_the_command_in_the_users_form(tmp_path, capsys) -> None:
    assert main(["init", str(tmp_path / "proj")]) == 0
    capsys.readouterr()
    assert main(["query", "--root", str(tmp_path / "proj"), "Who?"]) == 1
    assert f"`graphrag index --root {tmp_path / 'proj'}`" in capsys.readouterr().err
    assert main(["query", "--index", str(tmp_path / "nowhere"), "Who?"]) == 1
    err = capsys.readouterr().err
    assert f"`graphrag index --input <corpus> --out {tmp_path / 'nowhere'}`" in err


def test_skip_bad_names_every_skipped_file_and_why(tmp_path, capsys) -> None:
    assert main(["init", str(tmp_path / "proj")]) == 0
    inputs = tmp_path / "proj" / "input"
    (inputs / "good.txt").write_text("Ada Lovelace wrote notes on the Analytical Engine.")
    (inputs / "blob.txt").write_bytes(b"\x00\x01\x02binary")
    (inputs / "empty.md").write_text("")
    capsys.readouterr()
    root = ["--root", str(tmp_path / "proj"), "--cache", "replay"]
    assert main(["index", *root, "--skip-bad", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "blob.txt: looks binary" in out and "empty.md: " in out


def test_the_next_steps_init_prints_parse(tmp_path, capsys) -> None:
    """What `graphrag init` tells a new user to type next is a command the CLI accepts."""
    assert main(["init", str(tmp_path / "proj")]) == 0
    lines = [x.strip() for x in capsys.readouterr().out.splitlines()]
    commands = [shlex.split(x)[1:] for x in lines if x.startswith("graphrag ")]
    assert commands
    for words in commands:
        assert build_parser().parse_args(words).root == str(tmp_path / "proj")
