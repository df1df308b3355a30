"""Judge validity: planted controls through the real ragas judge on the fake endpoint (a judge
that always says 1 cannot discriminate; one that checks the context can), the sampling, and
the replay of the recorded demo answers whose controls were never recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import re

import pandas as pd
import pytest
from conftest import DEMO_DOCS, FakeLLM

from graphrag.llm.client import ChatLLM
from graphrag.settings import REPO_ROOT
from graphrag.text import tokens
from graphrag.text.embeddings import Embedder
from workbench.eval import judge_validity as jv
from workbench.eval.judge import Judge
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
COMMITTED = REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet"
STATEMENTS_PROMPT = "Break down each sentence"
VERDICTS_PROMPT = "judge the faithfulness of a series of statements"


def pairs(real: list[float], control: list[float], status: str = jv.SCORED) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "metric": "faithfulness",
            "control": "wrong_answer",
            "question_id": [f"q{i}" for i in range(len(real))],
            "method": "naive",
            "donor_question_id": "qx",
            "real": real,
            "control_score": control,
            "status": status,
            "error": None,
        }
    )


def test_a_judge_that_always_says_one_is_not_informative() -> None:
    result = jv.discrimination(pairs([1.0] * 20, [1.0] * 20), "faithfulness")
    assert (result.value, result.low, result.high, result.n) == (0.5, 0.5, 0.5, 20)
    assert result.verdict == jv.NOT_INFORMATIVE == "not informative on this judge"


def test_discrimination_counts_ties_as_half_and_needs_its_ci_above_half() -> None:
    perfect = jv.discrimination(pairs([1.0] * 20, [0.0] * 20), "faithfulness")
    assert (perfect.value, perfect.low, perfect.verdict) == (1.0, 1.0, jv.INFORMATIVE)
    # 7 right, 1 tie, 2 wrong: 7.5 / 10, but ten pairs cannot exclude chance.
    few = jv.discrimination(pairs([1] * 7 + [0.5, 0, 0], [0] * 7 + [0.5, 1, 1]), "faithfulness")
    assert few.value == pytest.approx(0.75) and few.low <= 0.5
    assert few.verdict == jv.NOT_INFORMATIVE


def test_below_min_pairs_there_is_no_verdict_either_way() -> None:
    """Two pairs the judge got right bootstrap to [1.000, 1.000]: no evidence, no verdict (a
    replay after the draw moved to answers whose controls were never recorded showed this)."""
    two = jv.discrimination(pairs([1.0, 1.0], [0.0, 0.0]), "faithfulness")
    assert (two.n, two.low, two.verdict) == (2, 1.0, jv.TOO_FEW)
    assert two.render().endswith("too few pairs to tell (fewer than 10 scored)")
    at_min = jv.discrimination(pairs([1.0] * 10, [0.0] * 10), "faithfulness")
    assert at_min.verdict == jv.INFORMATIVE
    unrecorded = jv.discrimination(
        pairs([1.0] * 3, [float("nan")] * 3, jv.NOT_RECORDED), "faithfulness"
    )
    assert unrecorded.n == 0 and unrecorded.not_recorded == 3
    assert unrecorded.verdict == jv.NOT_MEASURED_UNRECORDED == "not measured (not recorded)"
    assert unrecorded.render() == "not measured (not recorded)"
    assert jv.discrimination(pairs([], []), "context_recall").verdict == jv.NOT_MEASURED


def test_a_wrong_answer_stays_fluent_but_changes_its_facts() -> None:
    answer = "KBMI was founded in 1998 by Saltmere University and the Council [1]."
    wrong = jv.wrong_answer(answer, ["Saltmere", "1998", "Council"], ["Northgate Foundation"])
    assert wrong == (
        "KBMI was founded in 4221 by Northgate Foundation University and the Northgate "
        "Foundation [1]."
    )
    assert jv.shift_digits("30,000 fish [2, 3]") == "63,333 fish [2, 3]"
    assert jv.wrong_answer("I do not know.", ["Saltmere"], ["Northgate"]) is None


# --------------------------------------------------------------------------- through the judge


def first_sentence(path) -> tuple[str, str]:
    """Return (a document's text, its first body sentence)."""
    text = path.read_text(encoding="utf-8")
    body = text.split("\n\n", 1)[1]
    return text, body.split(". ")[0].strip() + "."


def demo_records() -> pd.DataFrame:
    """Six answers that copy a sentence of their only context: faithful by construction."""
    rows = []
    for qid, doc in zip(
        ["q01", "q02", "q03", "q04", "q05", "q06"],
        sorted(DEMO_DOCS.glob("*.md"))[:6],
        strict=True,
    ):
        text, sentence = first_sentence(doc)
        rows.append(
            {
                "question_id": qid,
                "method": "naive",
                "answer": sentence,
                "answer_error": None,
                "contexts": [text],
                "faithfulness": 1.0,
            }
        )
    return pd.DataFrame(rows)


def judge_input(prompt: str) -> dict:
    tail = prompt.rsplit("Now perform the same with the following input", 1)[1]
    return json.loads(tail[tail.index("{") : tail.rindex("Output:")])


def faithfulness_judge(always_one: bool):
    """A fake ragas judge: statements are the answer's sentences; a verdict is 1 always, or
    only when the statement is found in the context."""

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        data = judge_input(prompt)
        if VERDICTS_PROMPT in prompt:
            context = " ".join(data["context"].split())
            return json.dumps(
                {
                    "statements": [
                        {
                            "statement": s,
                            "reason": "checked",
                            "verdict": 1 if always_one or s in context else 0,
                        }
                        for s in data["statements"]
                    ]
                }
            )
        if STATEMENTS_PROMPT in prompt:
            sentences = [s.strip() for s in re.split(r"(?<=\.)\s+", data["answer"]) if s.strip()]
            return json.dumps({"statements": sentences})
        raise AssertionError(prompt[:80])

    return reply


@pytest.fixture
def fake_judge(make_settings, fake_llm: FakeLLM, make_embedder):
    settings = make_settings(fake_llm.base_url)
    llm = ChatLLM(settings)
    return settings, Judge(settings, llm, make_embedder(settings), ["faithfulness"])


def test_controls_through_a_judge_that_always_says_one(fake_judge, fake_llm: FakeLLM) -> None:
    settings, judge = fake_judge
    fake_llm.respond_with(faithfulness_judge(always_one=True))
    scored = jv.run_controls(judge, demo_records(), QUESTIONS, ["faithfulness"], 20, 7, 2)
    # 6 answers x 3 controls, less the one answer with neither a digit nor a fact to change.
    assert len(scored) == 17
    assert (scored["control"] == "wrong_answer").sum() == 5
    assert set(scored["status"]) == {jv.SCORED} and (scored["control_score"] == 1.0).all()
    result = jv.discrimination(scored, "faithfulness")
    assert (result.value, result.verdict) == (0.5, jv.NOT_INFORMATIVE)


def test_controls_through_a_judge_that_reads_the_context(fake_judge, fake_llm: FakeLLM) -> None:
    settings, judge = fake_judge
    fake_llm.respond_with(faithfulness_judge(always_one=False))
    scored = jv.run_controls(judge, demo_records(), QUESTIONS, ["faithfulness"], 12, 7, 2)
    assert len(scored) == 12
    assert (scored["control_score"] == 0.0).all()
    result = jv.discrimination(scored, "faithfulness")
    assert (result.value, result.low, result.verdict) == (1.0, 1.0, jv.INFORMATIVE)


def test_sampling_is_seeded_and_uses_only_the_metric_s_controls() -> None:
    records = pd.read_parquet(COMMITTED)
    # The demo report (defaults) records answer relevancy only. Sampling reads only which
    # answers have a score, so the other metrics' columns mark the same answers as scored.
    scored = records["answer_relevancy"]
    records = records.assign(faithfulness=scored, context_recall=scored)
    first = jv.sample_cases(records, QUESTIONS, "faithfulness", 20, seed=2024)
    again = jv.sample_cases(records, QUESTIONS, "faithfulness", 20, seed=2024)
    other = jv.sample_cases(records, QUESTIONS, "faithfulness", 20, seed=1)
    assert first == again and first != other and len(first) == 20
    assert {c.control for c in first} <= set(jv.CONTROLS["faithfulness"])
    assert all(c.donor_question_id != c.question_id for c in first)
    recall = jv.sample_cases(records, QUESTIONS, "context_recall", 20, seed=2024)
    assert {c.control for c in recall} == {"other_contexts"}
    relevancy = jv.sample_cases(records, QUESTIONS, "answer_relevancy", 20, seed=2024)
    assert {c.control for c in relevancy} == {"other_answer"}
    for case in relevancy:  # the control answer is the same method's answer to the donor
        donor = records[
            (records["question_id"] == case.donor_question_id) & (records["method"] == case.method)
        ]
        assert case.answer == donor["answer"].iloc[0]


def _keys(cases: list[jv.ControlCase]) -> list[tuple]:
    return [(c.question_id, c.method, c.control, c.donor_question_id) for c in cases]


def test_kept_controls_stay_put_when_a_method_is_added(tmp_path) -> None:
    """A fresh draw over more methods moves (almost) every case; keeping an earlier run's
    judge_controls.csv keeps its cases, texts rebuilt from this run's records."""
    records = pd.read_parquet(COMMITTED)
    methods = sorted(records["method"].unique())
    fewer = records[records["method"] != methods[-1]]
    before = jv.sample_cases(fewer, QUESTIONS, "answer_relevancy", 12, seed=2024)
    redrawn = jv.sample_cases(records, QUESTIONS, "answer_relevancy", 12, seed=2024)
    assert set(_keys(before)) != set(_keys(redrawn))  # why keeping is worth a file
    rows = [
        {**dataclasses.asdict(c), "control_score": 0.0, "status": jv.SCORED, "error": None}
        for c in before
    ]
    path = tmp_path / "judge_controls.csv"
    pd.DataFrame(rows)[jv.PAIR_COLUMNS].to_csv(path, index=False)
    kept = jv.load_kept(path)
    after = jv.sample_cases(records, QUESTIONS, "answer_relevancy", 12, seed=2024, kept=kept)
    assert after == before  # the same cases, the same texts
    topped = jv.sample_cases(records, QUESTIONS, "answer_relevancy", 16, seed=2024, kept=kept)
    assert topped[:12] == before and len(set(_keys(topped))) == 16
    # a kept case whose method this run lacks is left out, and the shortfall drawn
    gone = before[0].method
    without = records[records["method"] != gone]
    partial = jv.sample_cases(without, QUESTIONS, "answer_relevancy", 12, seed=2024, kept=kept)
    stayed = [c for c in before if c.method != gone]
    assert partial[: len(stayed)] == stayed and len(partial) == 12
    assert all(c.method != gone for c in partial)
    # another metric's kept rows do not count for this one
    recall = records.assign(context_recall=records["answer_relevancy"])
    fresh = jv.sample_cases(recall, QUESTIONS, "context_recall", 12, seed=2024)
    assert jv.sample_cases(recall, QUESTIONS, "context_recall", 12, seed=2024, kept=kept) == fresh


def test_a_kept_controls_file_that_is_not_one_names_itself(tmp_path) -> None:
    path = tmp_path / "answers.csv"
    path.write_text("question_id,answer\nq1,yes\n")
    with pytest.raises(jv.KeptControlsError, match=r"answers\.csv.*lack the columns metric"):
        jv.load_kept(path)
    with pytest.raises(jv.KeptControlsError, match="nowhere.csv: cannot read"):
        jv.load_kept(tmp_path / "nowhere.csv")
    path.write_text("metric,control,question_id,method,donor_question_id\nf,made_up,q,m,d\n")
    with pytest.raises(jv.KeptControlsError, match="unknown control kinds made_up"):
        jv.load_kept(path)


def test_unrecorded_controls_replay_as_not_measured(
    replay_settings, replay_embedder: Embedder, tmp_path
) -> None:
    """The recorded demo answers, judged against a cache that holds no control call: replay
    says so instead of failing or inventing a number."""
    records = pd.read_parquet(COMMITTED)
    empty = dataclasses.replace(
        replay_settings, cache=dataclasses.replace(replay_settings.cache, path=str(tmp_path))
    )
    llm = ChatLLM(empty)
    metric = "answer_relevancy"  # the judge metric the demo report records
    judge = Judge(empty, llm, replay_embedder, [metric])
    scored = jv.run_controls(judge, records, QUESTIONS, [metric], 3, 2024, 1)
    assert len(scored) == 3 and set(scored["status"]) == {jv.NOT_RECORDED}
    assert scored["error"].isna().all()  # no machine path from the miss message
    assert jv.discrimination(scored, metric).render() == "not measured (not recorded)"


# --------------------------------------------------------------------------- judge's window


def test_faithfulness_over_contexts_longer_than_the_judge_s_window(
    make_settings, fake_llm: FakeLLM, make_embedder
) -> None:
    """The demo's twelve documents (~5,000 tokens) as one method's contexts, judged with a
    2,600-token window: every verdict prompt plus the reply room fits it, and each of three
    sentences taken from the first, a middle and the last document is still found, so the
    answer is as faithful as it is with a window that holds everything (one verdict call,
    ragas's own prompt). A sentence found in no document stays unsupported."""
    docs = sorted(DEMO_DOCS.glob("*.md"))
    contexts = [d.read_text(encoding="utf-8") for d in docs]
    sentences = [first_sentence(docs[i])[1] for i in (0, 6, 11)]
    answer = " ".join([*sentences, "The bay froze solid in 1066."])
    fake_llm.respond_with(faithfulness_judge(always_one=False))

    def score(window: int) -> tuple[float, list[dict]]:
        settings = make_settings(fake_llm.base_url, llm={"context_tokens": window})
        judge = Judge(settings, ChatLLM(settings), make_embedder(settings), ["faithfulness"])
        fake_llm.reset()
        fake_llm.respond_with(faithfulness_judge(always_one=False))
        result = asyncio.run(judge.score("faithfulness", "What happened?", answer, contexts, ""))
        if window < 2000:
            assert result.error is not None and "setting llm.context_tokens" in result.error
            return result.value, []
        assert result.error is None
        verdicts = [r for r in fake_llm.requests if VERDICTS_PROMPT in str(r["messages"])]
        return result.value, verdicts

    small, windows = score(2600)
    assert small == pytest.approx(3 / 4)
    assert len(windows) >= 3
    for request in windows:
        prompt = tokens.message_tokens(request["messages"])
        assert prompt + request["max_tokens"] <= 2600
    judged = " ".join(
        " ".join(judge_input(r["messages"][-1]["content"])["context"].split()) for r in windows
    )
    for context in contexts:  # every context's text reached some window, in order
        assert " ".join(context.split())[:200] in judged

    assert math.isnan(score(1500)[0]), "no room for any context: a named error, not a score"
    large, whole = score(16000)
    assert large == pytest.approx(3 / 4) and len(whole) == 1
    assert judge_input(whole[0]["messages"][-1]["content"])["context"] == "\n".join(contexts)
