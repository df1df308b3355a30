"""Pairwise judging from per-answer ratings: probability-weighted grades, ties inside the band,
failures counted, planted controls; through a fake judge on the fake endpoint, and the batch
command in replay over the recorded demo answers."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest
from conftest import FakeLLM, Reply, empty_settings_file

from graphrag import prompts
from graphrag.llm.client import ChatLLM, Completion, expected_grade
from graphrag.settings import REPO_ROOT
from workbench.cli import main
from workbench.eval import pairwise as pw
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").head(4)
RATED = re.compile(r"Question: (.*)\n\nAnswer:\n(.*)\n\nCriterion: (\w+)\.", re.DOTALL)


def grade(probabilities: dict[int, float]) -> Reply:
    """A reply whose grade digits have these probabilities (and one non-digit alternative)."""
    top = {str(d): math.log(p) for d, p in probabilities.items()}
    top["The"] = math.log(1e-4)
    return Reply(content=str(max(probabilities, key=probabilities.get)), top_logprobs=top)


def test_a_rating_is_the_mean_grade_under_the_digit_probabilities() -> None:
    weighted = Completion(
        "4",
        first_token_logprobs={
            "4": math.log(0.6),
            "5": math.log(0.2),
            " 2": math.log(0.2),
            "Grade": -0.1,
        },
    )
    scale = prompts.RATING_SCALE
    assert expected_grade(weighted, scale) == pytest.approx(0.6 * 4 + 0.2 * 5 + 0.2 * 2)
    assert expected_grade(Completion("3"), scale) == 3.0  # an endpoint without logprobs
    with pytest.raises(ValueError, match="not a grade 1-5"):
        expected_grade(Completion("Answer 1 is better"), scale)
    assert [pw.score(4.0, 3.9), pw.score(4.0, 3.96), pw.score(3.0, 3.04)] == [1.0, 0.5, 0.5]
    assert pw.score(2.0, 2.1) == 0.0


def fake_judge(body: dict) -> Reply:
    """Comprehensiveness: the longer answer grades higher. Diversity: the same for every
    answer (a tie). Empowerment: an answer that mentions the Council grades 4, others 2.
    Directness: flat over the five digits (reads nothing)."""
    _, answer, criterion = RATED.search(body["messages"][-1]["content"]).groups()
    if criterion == "comprehensiveness":
        return grade({5: 0.8, 2: 0.2} if len(answer) > 20 else {2: 0.8, 5: 0.2})
    if criterion == "empowerment":
        return grade({4: 0.9, 3: 0.1} if "Council" in answer else {2: 0.9, 3: 0.1})
    return grade({3: 0.5, 4: 0.5} if criterion == "diversity" else dict.fromkeys(range(1, 6), 0.2))


def records(rows: list[tuple[str, str, str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"question_id": q, "method": m, "answer": a, "answer_error": e} for q, m, a, e in rows]
    )


def test_win_rates_through_a_fake_judge(make_settings, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(fake_judge)
    llm = ChatLLM(make_settings(fake_llm.base_url))
    rows = []
    for qid in QUESTIONS["id"]:
        rows.append((qid, "local", "The Council founded it in 1998 with Saltmere.", None))
        rows.append((qid, "naive", "In 1998.", None))
    judgements = pw.run_pairwise(llm, records(rows), QUESTIONS, [("local", "naive")], 2, controls=0)
    # each answer rated alone: one grade token per answer and criterion
    assert fake_llm.calls == 2 * len(QUESTIONS) * len(pw.CRITERIA)
    assert all(r["max_tokens"] == 1 and r["logprobs"] for r in fake_llm.requests)
    assert len(judgements) == len(QUESTIONS) * len(pw.CRITERIA)
    rates = pw.win_rates(judgements).set_index("criterion")
    assert rates.loc["comprehensiveness", "win_rate"] == 1.0
    assert rates.loc["comprehensiveness", "mean_rating_a"] == pytest.approx(0.8 * 5 + 0.2 * 2)
    assert rates.loc["empowerment", "win_rate"] == 1.0
    assert rates.loc["diversity", "win_rate"] == 0.5
    assert rates.loc["directness", "win_rate"] == 0.5
    assert rates.loc["directness", "mean_rating_b"] == pytest.approx(3.0)
    assert (rates["n"] == len(QUESTIONS)).all() and (rates["judge_failed"] == 0).all()
    shown = [r["messages"][-1]["content"] for r in fake_llm.requests]
    assert all(("Saltmere" in text) != ("Answer:\nIn 1998." in text) for text in shown)


def test_a_failed_answer_loses_without_a_call_and_a_bad_judge_is_counted(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(lambda body: "Both answers are fine")
    llm = ChatLLM(make_settings(fake_llm.base_url))
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
    assert "not a grade 1-5" in bad["error"].iloc[0]
    rates = pw.win_rates(judgements)
    assert (rates["n"] == 1).all() and (rates["judge_failed"] == 1).all()
    assert (rates["win_rate"] == 0.0).all()


def reading_judge(body: dict) -> Reply:
    """Grades 5 an answer that repeats the question asked and 1 any other, on every criterion
    but directness, which it grades 3 whatever the answer (reads nothing)."""
    question, answer, criterion = RATED.search(body["messages"][-1]["content"]).groups()
    if criterion == "directness":
        return grade({3: 1.0})
    return grade({5: 0.9, 4: 0.1} if answer.split(" | ")[0] == question else {1: 0.9, 2: 0.1})


def test_planted_controls_tell_a_reading_judge_from_one_that_does_not_read(
    make_settings, fake_llm: FakeLLM
) -> None:
    """A question's own answer against another question's: the criteria the judge reads score
    1.0, the one it grades blindly 0.5, so the report can say which win rates mean something."""
    fake_llm.respond_with(reading_judge)
    llm = ChatLLM(make_settings(fake_llm.base_url))
    rows = []
    for _, q in QUESTIONS.iterrows():
        rows.append((q["id"], "local", f"{q['question']} | local's answer.", None))
        rows.append((q["id"], "naive", f"{q['question']} | naive's answer.", None))
    judgements = pw.run_pairwise(llm, records(rows), QUESTIONS, [("local", "naive")], 2, 3)
    controls = judgements[judgements["method_a"] == pw.CONTROL_A]
    assert set(controls["method_b"]) == {pw.CONTROL_B}
    # 3 controls per method of the pair; their own answers are already rated, so only the
    # other questions' answers are new calls
    assert len(controls) == 2 * 3 * len(pw.CRITERIA) and controls["question_id"].nunique() == 3
    assert fake_llm.calls == len(pw.CRITERIA) * (2 * 4 + 2 * 3)
    rates = pw.win_rates(controls).set_index("criterion")
    assert (rates.drop(index="directness")["win_rate"] == 1.0).all()
    assert rates.loc["directness", "win_rate"] == 0.5
    assert (pw.control_lines(rates.reset_index())[-1]).startswith(
        "The judge did not pass its planted controls on directness"
    )


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
    argv = f"--root {REPO_ROOT} --cache replay eval --index {demo_index.path}"
    argv += f" --questions {questions} --methods naive --metrics none --judge-controls 0"
    assert main([*argv.split(), "--types", "nope", "--out", str(tmp_path / "a"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "questions.jsonl: no question of type nope" in err and "global, local" in err
    out = tmp_path / "b"
    code = main([*argv.split(), "--types", "global", "--limit", "2", "--out", str(out), "--quiet"])
    assert code == 0
    assert set(pd.read_csv(out / "records.csv")["type"]) == {"global"}


def test_eval_command_judges_the_global_questions_from_the_recorded_ratings(
    demo_index, tmp_path, monkeypatch
) -> None:
    """The batch command over the demo's recorded default answers: the judge reads only the
    global questions (pairwise.JUDGED_TYPES); every rating of the pairs and of the planted
    controls (6 per method of the pair) replays, and the report says whether the judge passed
    them, from the same numbers the win-rate table shows."""
    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "embeddings.sqlite"))
    monkeypatch.chdir(tmp_path)
    questions = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
    argv = (
        f"--root {REPO_ROOT} --cache replay eval --index {demo_index.path} --questions {questions}"
    )
    argv += " --metrics none --judge-controls 0 --methods naive,global --pairwise global:naive"
    mixed = tmp_path / "mixed"
    assert main([*argv.split(), "--limit", "3", "--quiet", "--out", str(mixed)]) == 0
    asked = pd.read_csv(mixed / "records.csv").drop_duplicates("question_id")
    assert sorted(asked["type"]) == ["global", "local", "multi_hop"]
    judged = pd.read_csv(mixed / "pairwise.csv")
    # one global question: its pair only (a control needs two answered questions)
    assert set(judged["type"]) == {"global"} and judged["question_id"].nunique() == 1
    out = tmp_path / "global"
    assert main([*argv.split(), "--types", "global", "--quiet", "--out", str(out)]) == 0
    judgements = pd.read_csv(out / "pairwise.csv")
    n_global = int((load_questions(questions)["type"] == "global").sum())
    # the pairs, 2 methods' controls, and 2 methods against the closed-book answer
    assert len(judgements) == 5 * n_global * len(pw.CRITERIA)
    assert set(judgements["status"]) == {pw.SCORED}
    reference = judgements[judgements["method_b"] == pw.CLOSED_BOOK]
    assert sorted(reference["method_a"].unique()) == ["global", "naive"]
    assert reference["question_id"].nunique() == n_global
    assert judgements[["rating_a", "rating_b"]].stack().between(1, 5).all()
    rates = pw.win_rates(judgements)
    summary = (out / "summary.md").read_text()
    assert "## Head-to-head (pairwise judge)" in summary
    assert pw.control_lines(rates)[-1] in summary
    assert pw.closed_book_lines(rates)[-1] in summary


def test_unrecorded_pairwise_judgements_are_reported_not_recorded(
    demo_index, tmp_path, monkeypatch
) -> None:
    """A pair whose recorded answers were never rated (the demo's judge is recorded for the
    answers of global, naive, drift and local): every judgement is reported as "not
    recorded" instead of failing the run."""
    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "embeddings.sqlite"))
    monkeypatch.chdir(tmp_path)
    questions = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
    config = empty_settings_file(tmp_path)
    argv = f"--root {REPO_ROOT} --config {config} --cache replay eval --index {demo_index.path}"
    argv += f" --questions {questions} --metrics none --judge-controls 0 --types global"
    options = "--limit 3 --methods hyde,ppr --pairwise hyde:ppr --quiet"
    out = tmp_path / "report"
    assert main([*argv.split(), *options.split(), "--out", str(out)]) == 0
    judgements = pd.read_csv(out / "pairwise.csv")
    # the 3 questions' pairs, 3 planted controls per method of the pair (default 6 each, one
    # per answered question), and each method against the 3 closed-book answers
    assert len(judgements) == (3 + 2 * 3 + 2 * 3) * len(pw.CRITERIA)
    paired = judgements[judgements["method_b"] != pw.CLOSED_BOOK]
    assert set(paired["status"]) == {pw.NOT_RECORDED}
    # PPR's answers were never rated; one of HyDE's was, with its closed-book reference
    assert set(judgements[judgements["method_a"] == "ppr"]["status"]) == {pw.NOT_RECORDED}
    assert (judgements["method_a"] == pw.CONTROL_A).sum() == 2 * 3 * len(pw.CRITERIA)
    summary = (out / "summary.md").read_text()
    assert "| hyde | ppr | comprehensiveness | — | 0 | 0 | 3 |" in summary


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
                "rating_a": 4.0 if score == 1.0 else 3.0,
                "rating_b": 3.0,
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


def closed_book_model(body: dict) -> Reply | str:
    """The fake judge, and a closed-book passage for HyDE's prompt (which fails for q02)."""
    if body.get("max_tokens") != 1:
        question = body["messages"][-1]["content"]
        if QUESTIONS["question"].iloc[1] in question:
            return Reply(status=500, content="server error")
        return "Unknown."
    return fake_judge(body)


def test_each_judged_method_meets_one_closed_book_answer_per_question(
    make_settings, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(closed_book_model)
    llm = ChatLLM(make_settings(fake_llm.base_url, llm={"max_retries": 0}))
    rows = []
    for qid in QUESTIONS["id"]:
        rows.append((qid, "local", "The Council founded it in 1998 with Saltmere.", None))
        rows.append((qid, "naive", "In 1998.", None))
    rows[-1] = (rows[-1][0], "naive", "", "LLMError: no answer")  # the last naive failed
    judgements = pw.run_pairwise(
        llm, records(rows), QUESTIONS, [("local", "naive")], 2, controls=0, closed_book_tokens=40
    )
    passages = [r for r in fake_llm.requests if r.get("max_tokens") == 40]
    assert len(passages) == len(QUESTIONS)  # one per question, shared by both methods
    reference = judgements[judgements["method_b"] == pw.CLOSED_BOOK]
    by_question = reference.groupby("question_id")["method_a"].unique().map(sorted)
    assert by_question[QUESTIONS["id"].iloc[0]] == ["local", "naive"]
    assert by_question[QUESTIONS["id"].iloc[-1]] == ["local"]  # a failed answer meets none
    failed = reference[reference["question_id"] == QUESTIONS["id"].iloc[1]]
    # no passage: the rows say the judge failed, and count as no win
    assert set(failed["status"]) == {pw.JUDGE_FAILED} and failed["score_a"].isna().all()
    assert failed["error"].str.startswith("closed-book answer:").all()
    scored = reference[reference["status"] == pw.SCORED]
    scored = scored.set_index(["method_a", "criterion"]).sort_index()
    # comprehensiveness grades length: the long local answer beats the short passage, and
    # "In 1998." ties it
    assert (scored.loc[("local", "comprehensiveness"), "score_a"] == 1.0).all()
    assert (scored.loc[("naive", "comprehensiveness"), "score_a"] == 0.5).all()
    line = pw.closed_book_lines(pw.win_rates(judgements))[-1]
    assert line.startswith("Against a closed-book answer") and "Not above it" in line
    assert "naive 0.500" in line and "local 1.000" in line
    assert line.endswith(
        "Not above it (the CI reaches 0.5): naive; a win rate of this method may reward "
        "fluency, not what the corpus says."
    )
