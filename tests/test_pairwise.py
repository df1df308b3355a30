"""Pairwise (head-to-head) judging: both orders, flips as ties, failures counted; through a fake
judge on the fake endpoint, and the batch command in replay over the recorded demo answers."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest
from conftest import FakeLLM

from graphrag import prompts
from graphrag.cli import main
from graphrag.config import DEMO_CONFIG, REPO_ROOT
from graphrag.eval import pairwise as pw
from graphrag.eval.questions import load_questions
from graphrag.llm import ChatLLM

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").head(4)
ANSWER = re.compile(r"Answer 1:\n(.*)\n\nAnswer 2:\n(.*)", re.DOTALL)


def verdict(winner: int) -> dict:
    return {"winner": winner, "reason": "because"}


def fake_judge(body: dict) -> str:
    """Comprehensiveness: the longer answer (whatever its place). Directness: always the
    first shown (pure position bias). Diversity: always a tie. Empowerment: the answer that
    mentions the Council, if exactly one does."""
    first, second = ANSWER.search(body["messages"][-1]["content"]).groups()
    council = ["Council" in first, "Council" in second]
    return json.dumps(
        {
            "comprehensiveness": verdict(1 if len(first) > len(second) else 2),
            "diversity": verdict(0),
            "empowerment": verdict(
                1 if council == [True, False] else 2 if council == [False, True] else 0
            ),
            "directness": verdict(1),
        }
    )


def records(rows: list[tuple[str, str, str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"question_id": q, "method": m, "answer": a, "answer_error": e} for q, m, a, e in rows]
    )


def test_combine_turns_a_flip_into_a_tie() -> None:
    a_first = {c: verdict(1) for c in pw.CRITERIA}
    b_first_b_wins = {c: verdict(1) for c in pw.CRITERIA}  # the first shown (B) wins: a flip
    b_first_a_wins = {c: verdict(2) for c in pw.CRITERIA}
    assert all(s == (0.5, 2, 2) for s in pw.combine(a_first, b_first_b_wins).values())
    assert all(s == (1.0, 1, 2) for s in pw.combine(a_first, b_first_a_wins).values())
    tie = {c: verdict(0) for c in pw.CRITERIA}
    assert all(s == (0.75, 1, 1) for s in pw.combine(a_first, tie).values())


def test_win_rates_through_a_fake_judge(make_settings, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(fake_judge)
    llm = ChatLLM(make_settings(fake_llm.base_url))
    rows = []
    for qid in QUESTIONS["id"]:
        rows.append((qid, "local", "The Council founded it in 1998 with Saltmere.", None))
        rows.append((qid, "naive", "In 1998.", None))
    judgements = pw.run_pairwise(llm, records(rows), QUESTIONS, [("local", "naive")], 2, controls=0)
    assert fake_llm.calls == 2 * len(QUESTIONS)  # both orders, once each
    assert len(judgements) == len(QUESTIONS) * len(pw.CRITERIA)
    rates = pw.win_rates(judgements).set_index("criterion")
    assert rates.loc["comprehensiveness", "win_rate"] == 1.0
    assert rates.loc["empowerment", "win_rate"] == 1.0
    assert rates.loc["diversity", "win_rate"] == 0.5
    assert math.isnan(rates.loc["diversity", "first_position_wins"])
    # Always picking the first-shown answer flips with the order: a tie, and full position bias.
    assert rates.loc["directness", "win_rate"] == 0.5
    assert rates.loc["directness", "first_position_wins"] == 1.0
    assert (rates["n"] == len(QUESTIONS)).all() and (rates["judge_failed"] == 0).all()
    system = fake_llm.requests[0]["messages"][0]["content"]
    assert all(name in system for name in prompts.PAIRWISE_CRITERIA)


def test_a_failed_answer_loses_without_a_call_and_a_bad_judge_is_counted(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(lambda body: "not json at all")
    llm = ChatLLM(make_settings(fake_llm.base_url, llm={"json_repair_rounds": 0}))
    rows = [
        ("q01", "local", "", "RuntimeError: boom"),
        ("q01", "naive", "In 1998.", None),
        ("q02", "local", "A long answer.", None),
        ("q02", "naive", "Short.", None),
    ]
    judgements = pw.run_pairwise(llm, records(rows), QUESTIONS, [("local", "naive")], 1, controls=0)
    by_question = judgements.groupby("question_id")
    failed = by_question.get_group("q01")
    assert (failed["status"] == pw.NO_ANSWER).all() and (failed["score_a"] == 0.0).all()
    bad = by_question.get_group("q02")
    assert (bad["status"] == pw.JUDGE_FAILED).all() and bad["score_a"].isna().all()
    assert "JSONOutputError" in bad["error"].iloc[0]
    rates = pw.win_rates(judgements)
    assert (rates["n"] == 1).all() and (rates["judge_failed"] == 1).all()
    assert (rates["win_rate"] == 0.0).all()


def reading_judge(body: dict) -> str:
    """Prefers, on every criterion but directness, the answer that repeats the question asked;
    directness: always the first shown (reads nothing)."""
    content = body["messages"][-1]["content"]
    first, second = ANSWER.search(content).groups()
    asked = content.split("Answer 1:")[0]
    own = 1 if first.split(" | ")[0] in asked else 2 if second.split(" | ")[0] in asked else 0
    return json.dumps(
        {c: verdict(1 if c == "directness" else own) for c in prompts.PAIRWISE_CRITERIA}
    )


def test_planted_controls_tell_a_reading_judge_from_a_position_biased_one(
    make_settings, fake_llm: FakeLLM
) -> None:
    """A question's own answer against another question's: the criteria the judge reads score
    1.0, the one it decides by position 0.5, so the report can say which win rates mean
    something."""
    fake_llm.respond_with(reading_judge)
    llm = ChatLLM(make_settings(fake_llm.base_url))
    rows = []
    for _, q in QUESTIONS.iterrows():
        rows.append((q["id"], "local", f"{q['question']} | local's answer.", None))
        rows.append((q["id"], "naive", f"{q['question']} | naive's answer.", None))
    judgements = pw.run_pairwise(llm, records(rows), QUESTIONS, [("local", "naive")], 2, 3)
    controls = judgements[judgements["method_a"] == pw.CONTROL_A]
    assert set(controls["method_b"]) == {pw.CONTROL_B}
    assert controls["question_id"].nunique() == 3 and fake_llm.calls == 2 * (4 + 3)
    rates = pw.win_rates(controls).set_index("criterion")
    assert (rates.drop(index="directness")["win_rate"] == 1.0).all()
    assert rates.loc["directness", "win_rate"] == 0.5
    assert rates.loc["directness", "first_position_wins"] == 1.0


def test_parse_pairs() -> None:
    methods = ["naive", "local", "global"]
    assert pw.parse_pairs("all", methods) == [
        ("naive", "local"),
        ("naive", "global"),
        ("local", "global"),
    ]
    assert pw.parse_pairs("global:naive", methods) == [("global", "naive")]
    with pytest.raises(ValueError, match="global:global"):
        pw.parse_pairs("global:global", methods)


def test_eval_types_keeps_only_those_questions_and_names_a_missing_type(
    demo_index, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "embeddings.sqlite"))
    monkeypatch.chdir(tmp_path)
    questions = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
    argv = f"--config {DEMO_CONFIG} --cache replay eval --index {demo_index.path}"
    argv += f" --questions {questions} --methods naive --metrics none --judge-controls 0"
    assert main([*argv.split(), "--types", "nope", "--out", str(tmp_path / "a"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "questions.jsonl: no question of type nope" in err and "global, local" in err
    out = tmp_path / "b"
    code = main([*argv.split(), "--types", "global", "--limit", "2", "--out", str(out), "--quiet"])
    assert code == 0
    assert set(pd.read_csv(out / "records.csv")["type"]) == {"global"}


def test_eval_command_runs_pairwise_and_controls_in_replay(
    demo_index, tmp_path, monkeypatch, capsys
) -> None:
    """The batch command over the recorded demo answers: nothing pairwise is recorded, so the
    report says "not recorded" for every judgement instead of failing."""
    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "embeddings.sqlite"))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report"
    questions = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
    argv = f"--config {DEMO_CONFIG} --cache replay eval --index {demo_index.path}"
    argv += f" --questions {questions} --out {out}"
    options = "--limit 3 --methods naive,global --pairwise global:naive --judge-controls 2"
    code = main([*argv.split(), *options.split(), "--quiet"])
    assert code == 0
    judgements = pd.read_csv(out / "pairwise.csv")
    # the 3 questions' pairs and 3 planted controls (default 6, one per answered question)
    assert len(judgements) == 2 * 3 * len(pw.CRITERIA)
    assert set(judgements["status"]) == {pw.NOT_RECORDED}
    assert (judgements["method_a"] == pw.CONTROL_A).sum() == 3 * len(pw.CRITERIA)
    summary = (out / "summary.md").read_text()
    assert "## Head-to-head (pairwise judge)" in summary
    assert "| global | naive | comprehensiveness | — | 0 | 0 | 3 |" in summary
    assert "## Judge validity" in summary
    assert (out / "judge_controls.csv").is_file()


def test_the_report_says_on_which_criteria_the_judge_passed_its_controls() -> None:
    rows = [
        ("q1", c, score)
        for q in ("q1", "q2", "q3")
        for c, score in (("comprehensiveness", 1.0), ("directness", 0.5))
    ]
    judgements = pd.DataFrame(
        [
            {
                "question_id": f"q{i}",
                "type": "global",
                "method_a": pw.CONTROL_A,
                "method_b": pw.CONTROL_B,
                "criterion": criterion,
                "score_a": score,
                "first_won": 0 if score == 1.0 else 2,
                "decisive": 2,
                "status": pw.SCORED,
                "error": None,
            }
            for i, (_, criterion, score) in enumerate(rows)
        ]
    )
    (line,) = [x for x in pw.control_lines(pw.win_rates(judgements)) if x]
    assert line.startswith("The judge did not pass its planted controls on directness")
    assert line.endswith("it passed on comprehensiveness.")
    everything = judgements.assign(score_a=1.0)
    assert "every criterion" in pw.control_lines(pw.win_rates(everything))[-1]
