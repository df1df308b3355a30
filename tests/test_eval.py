"""Evaluation: question sets, the judge-free metrics, the RAGAS judge's failure accounting
(through the fake endpoint, over real HTTP and the recorded cache), and the runner's order
and per-pair records."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO_DOCS, FakeLLM, Reply

from graphrag.index.store import Index
from graphrag.llm.client import CacheMissError, ChatLLM, run_sync
from graphrag.query.naive import NaiveRAG
from graphrag.settings import REPO_ROOT
from workbench.eval.judge import JUDGE_CALLS, NOT_RECORDED, Judge
from workbench.eval.metrics import keyword_hit_rate
from workbench.eval.questions import QuestionSetError, load_questions
from workbench.eval.runner import evaluate_pair, interleave_types

QUESTIONS_FILE = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"
DEMO_DOCUMENTS = {p.stem for p in DEMO_DOCS.glob("*.md")}
STATEMENTS_PROMPT = "Break down each sentence"  # ragas's statement generator instruction
VERDICTS_PROMPT = "judge the faithfulness of a series of statements"  # ragas's NLI instruction


# --------------------------------------------------------------------------- question sets


def test_the_demo_question_set_loads() -> None:
    questions = load_questions(QUESTIONS_FILE, documents=DEMO_DOCUMENTS)
    assert len(questions) == 24
    assert questions["type"].value_counts().to_dict() == {
        "local": 10,
        "multi_hop": 8,
        "global": 6,
    }
    assert questions["id"].is_unique
    assert all(questions["support"].map(len) > 0)
    assert all(questions["answer_keywords"].map(len) > 0)
    assert set(questions.columns) == {
        "id",
        "question",
        "reference",
        "type",
        "split",
        "support",
        "answer_keywords",
    }
    # Defaults were chosen on the demo's questions (docs/defaults-provenance.md): all dev.
    assert set(questions["split"]) == {"dev"}


GOOD = {
    "id": "g1",
    "question": "Who founded KBMI?",
    "reference": "Saltmere University and the Regional Council.",
    "type": "local",
    "support": ["01_kbmi_profile"],
    "answer_keywords": ["Saltmere"],
}


def write_set(folder: Path, bad_line: str) -> Path:
    """Write a question set whose fourth line (after a blank third) is ``bad_line``."""
    path = folder / "questions.jsonl"
    second = {**GOOD, "id": "g2"}
    path.write_text("\n".join([json.dumps(GOOD), json.dumps(second), "", bad_line]) + "\n")
    return path


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"id": "g3", "question": "Who?", ', "not valid JSON"),
        ('["a list", "not an object"]', "expected a JSON object"),
        (json.dumps({**GOOD, "id": "g3", "reference": ""}), "missing or empty field.*reference"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "question"} | {"id": "g3"}), "question"),
        (json.dumps({**GOOD, "id": "g3", "type": "bridge"}), "type 'bridge' is not one of"),
        (json.dumps({**GOOD, "id": "g3", "support": "01_kbmi_profile"}), "support must be a list"),
        (json.dumps({**GOOD, "id": "g3", "answer_keywords": ["ok", ""]}), "answer_keywords"),
        (json.dumps({**GOOD, "id": "g1"}), "duplicate question id 'g1'"),
        (json.dumps({**GOOD, "id": "g3", "hops": 0}), "hops must be a positive integer"),
        (json.dumps({**GOOD, "id": "g3", "aliases": "Hall"}), "aliases must be a list"),
        (json.dumps({**GOOD, "id": "g3", "decomposition": [{"a": 1}]}), "decomposition must be"),
        (json.dumps({**GOOD, "id": "g3", "answer_format": "long"}), "answer_format 'long'"),
        (
            json.dumps({**GOOD, "id": "g3", "split": "train"}),
            "split 'train' is not one of dev, test",
        ),
        (json.dumps({**GOOD, "id": "g3", "split": "Test"}), "split 'Test' is not one of"),
        (json.dumps({**GOOD, "id": "g3", "split": None}), "split None is not one of"),
        (json.dumps({**GOOD, "id": "g3", "support": ["99_atlantis"]}), "unknown document.*99_"),
    ],
)
def test_a_bad_question_line_is_named_by_path_and_line(
    tmp_path: Path, bad_line: str, message: str
) -> None:
    path = write_set(tmp_path, bad_line)
    with pytest.raises(QuestionSetError, match=rf"^{path}:4: .*{message}"):
        load_questions(path, documents=DEMO_DOCUMENTS)


def test_a_question_without_a_split_is_test_and_a_declared_split_is_kept(tmp_path: Path) -> None:
    # No default was chosen on a user's own questions, so an unmarked question is held out.
    path = write_set(tmp_path, json.dumps({**GOOD, "id": "g3", "split": "dev"}))
    questions = load_questions(path)
    assert questions.set_index("id")["split"].to_dict() == {"g1": "test", "g2": "test", "g3": "dev"}


def test_support_is_checked_only_against_given_documents(tmp_path: Path) -> None:
    path = write_set(tmp_path, json.dumps({**GOOD, "id": "g3", "support": ["99_atlantis"]}))
    assert list(load_questions(path)["id"]) == ["g1", "g2", "g3"]
    with pytest.raises(QuestionSetError, match="99_atlantis"):
        load_questions(path, documents={"01_kbmi_profile"})


def test_an_empty_or_missing_question_set_is_named(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(QuestionSetError, match=f"{empty} has no questions"):
        load_questions(empty)
    with pytest.raises(QuestionSetError, match="nowhere.jsonl"):
        load_questions(tmp_path / "nowhere.jsonl")


def test_benchmark_fields_are_kept_only_when_a_set_uses_them(tmp_path: Path) -> None:
    path = tmp_path / "bench.jsonl"
    bench = {
        **GOOD,
        "type": "multi_hop",
        "aliases": ["Saltmere"],
        "hops": 2,
        "decomposition": [{"question": "Who?", "answer": "X", "support": "01_kbmi_profile"}],
        "gold_entities": ["X"],
        "answer_format": "short",
    }
    path.write_text(json.dumps(bench) + "\n" + json.dumps({**GOOD, "id": "g2"}) + "\n")
    table = load_questions(path)
    assert list(table.columns[-5:]) == [
        "aliases",
        "hops",
        "decomposition",
        "gold_entities",
        "answer_format",
    ]
    assert table.iloc[0]["hops"] == 2 and table.iloc[1]["answer_format"] == ""
    assert table.iloc[1]["aliases"] == [] and table.iloc[0]["gold_entities"] == ["X"]


def test_missing_optional_fields_take_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "minimal.jsonl"
    path.write_text(json.dumps({"id": "m1", "question": "Q?", "reference": "R."}) + "\n")
    row = load_questions(path).iloc[0]
    assert (row["type"], row["support"], row["answer_keywords"]) == ("local", [], [])


# --------------------------------------------------------------------------- judge-free metrics


def test_keyword_hit_rate_by_hand() -> None:
    assert keyword_hit_rate("Founded in 1998 by SALTMERE University.", ["1998", "saltmere"]) == 1.0
    assert keyword_hit_rate("About 30,000 salmon escaped.", ["30000"]) == 1.0
    assert keyword_hit_rate("About 30000 salmon escaped.", ["30,000"]) == 1.0
    assert keyword_hit_rate("It cost 1,250,000 dollars.", ["1250000"]) == 1.0
    assert keyword_hit_rate("In 1998 it was founded.", ["1998", "Saltmere", "Council"]) == 1 / 3
    assert keyword_hit_rate("Founded in 1998; 62 boats.", ["1974", "62"]) == 0.5
    assert keyword_hit_rate("I do not know.", ["1998", "Saltmere"]) == 0.0
    assert keyword_hit_rate("The Regional\n  Council agreed.", ["regional council"]) == 1.0
    # "1,2" is not a thousands separator: "12" must not be found in it.
    assert keyword_hit_rate("Items 1,2 and 3.", ["12"]) == 0.0
    assert math.isnan(keyword_hit_rate("Any answer at all.", []))


# --------------------------------------------------------------------------- the RAGAS judge


def faithfulness_model(verdicts: list[int]):
    """Return a fake judge that answers ragas's two faithfulness prompts with valid JSON."""
    statements = [f"Statement number {i}." for i in range(len(verdicts))]

    def reply(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        if VERDICTS_PROMPT in prompt:
            return json.dumps(
                {
                    "statements": [
                        {"statement": s, "reason": "as the context says", "verdict": v}
                        for s, v in zip(statements, verdicts, strict=True)
                    ]
                }
            )
        if STATEMENTS_PROMPT in prompt:
            return json.dumps({"statements": statements})
        raise AssertionError(f"unexpected judge prompt: {prompt[:80]}")

    return reply


@pytest.fixture
def judge_for(make_settings, fake_llm: FakeLLM, make_embedder):
    """Return a builder of a Judge on the fake endpoint (and its settings)."""

    def build(metrics: list[str], **sections) -> Judge:
        settings = make_settings(fake_llm.base_url, **sections)
        return Judge(settings, ChatLLM(settings), make_embedder(settings), metrics)

    return build


def score(judge: Judge, metric: str, contexts: list[str]):
    return run_sync(
        judge.score(
            metric,
            "When was KBMI founded?",
            "KBMI was founded in 1998. It studies kelp. It has a boat.",
            contexts,
            "KBMI was founded in 1998.",
        )
    )


@pytest.mark.parametrize("verdicts", [[1, 0, 1], [1, 1, 1, 1], [0, 0]])
def test_faithfulness_is_the_share_of_supported_statements(
    judge_for, fake_llm: FakeLLM, verdicts: list[int]
) -> None:
    fake_llm.respond_with(faithfulness_model(verdicts))
    judge = judge_for(["faithfulness"])

    result = score(judge, "faithfulness", ["KBMI was founded in 1998 by Saltmere University."])

    assert result.error is None
    assert result.value == pytest.approx(sum(verdicts) / len(verdicts))
    assert result.usage.calls == fake_llm.calls == JUDGE_CALLS["faithfulness"]
    verdict_prompt = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "KBMI was founded in 1998 by Saltmere University." in verdict_prompt


def test_an_unparseable_judge_reply_is_nan_with_its_error(judge_for, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(lambda body: "Sure! The statements are: it was 1998, I think.")
    judge = judge_for(["faithfulness"])

    result = score(judge, "faithfulness", ["KBMI was founded in 1998."])

    assert math.isnan(result.value)
    assert isinstance(result.error, str) and result.error.strip()
    assert result.usage.calls == fake_llm.calls >= 1


def test_a_judge_endpoint_error_is_nan_with_its_error(judge_for, fake_llm: FakeLLM) -> None:
    fake_llm.respond_with(lambda body: Reply("judge overloaded", status=400))
    judge = judge_for(["faithfulness"])

    result = score(judge, "faithfulness", ["KBMI was founded in 1998."])

    assert math.isnan(result.value)
    assert result.error and "400" in result.error
    assert fake_llm.calls >= 1


@pytest.mark.parametrize("metric", ["faithfulness", "context_recall"])
def test_no_context_is_nan_without_a_judge_call(judge_for, fake_llm: FakeLLM, metric: str) -> None:
    judge = judge_for([metric])

    result = score(judge, metric, [])

    assert math.isnan(result.value)
    assert "no context" in result.error
    assert result.usage.calls == 0 and fake_llm.calls == 0


def test_a_judge_replay_miss_is_not_recorded_although_ragas_catches_errors(
    judge_for, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    judge = judge_for(
        ["faithfulness"], cache={"mode": "replay", "path": str(tmp_path / "empty_cache")}
    )
    result = score(judge, "faithfulness", ["KBMI was founded in 1998."])
    assert math.isnan(result.value) and result.error == NOT_RECORDED and result.not_recorded
    assert fake_llm.calls == 0


def test_a_replay_miss_is_charged_to_its_own_judgement_only(
    judge_for, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """Two judgements at once in replay, one recorded and one not: only the one whose call
    is missing is not recorded (another task's miss does not touch it)."""
    cache = {"path": str(tmp_path / "cache")}
    fake_llm.respond_with(faithfulness_model([1, 0, 1]))
    recorded = ["KBMI was founded in 1998 by Saltmere University."]
    assert score(judge_for(["faithfulness"], cache=cache), "faithfulness", recorded).error is None
    replay = judge_for(["faithfulness"], cache={**cache, "mode": "replay"})
    calls = fake_llm.calls

    async def both():
        texts = (
            "When was KBMI founded?",
            "KBMI was founded in 1998. It studies kelp. It has a boat.",
        )
        return await asyncio.gather(
            replay.score("faithfulness", *texts, ["Another context, never judged."], "1998"),
            replay.score("faithfulness", *texts, recorded, "KBMI was founded in 1998."),
        )

    missing, found = run_sync(both())
    assert missing.not_recorded and math.isnan(missing.value)
    assert found.error is None and found.value == pytest.approx(2 / 3)
    assert fake_llm.calls == calls, "replay asks no model"


def test_judge_rejects_an_unknown_metric(judge_for) -> None:
    with pytest.raises(ValueError, match="answer_correctness"):
        judge_for(["faithfulness", "answer_correctness"])


# --------------------------------------------------------------------------- runner


def test_interleave_types_takes_one_question_of_each_type_per_round() -> None:
    questions = load_questions(QUESTIONS_FILE)
    order = interleave_types(questions)
    rounds = [["local", "multi_hop", "global"]] * 6 + [["local", "multi_hop"]] * 2 + [["local"]] * 2
    assert list(order["type"]) == [t for kinds in rounds for t in kinds]
    assert list(order["id"][:6]) == ["q01", "q11", "q19", "q02", "q12", "q20"]
    assert sorted(order["id"]) == sorted(questions["id"])
    assert list(order.index) == list(range(24))


def test_interleave_types_keeps_the_input_order_within_each_type() -> None:
    types = ["global", "local", "local", "global", "multi_hop", "local"]
    questions = pd.DataFrame({"id": [f"x{i}" for i in range(6)], "type": types})
    # Rounds: the first of each type (x0, x1, x4), then the second (x2, x3), then x5.
    assert list(interleave_types(questions)["id"]) == ["x0", "x1", "x4", "x2", "x3", "x5"]


def demo_question(qid: str) -> pd.Series:
    return load_questions(QUESTIONS_FILE).set_index("id", drop=False).loc[qid]


METRICS = ["faithfulness", "context_recall"]


def test_a_failed_answer_is_a_record_not_a_crash(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    fake_llm.respond_with(lambda body: Reply("model crashed", status=400))
    settings = make_settings(fake_llm.base_url)
    llm = ChatLLM(settings)
    method = NaiveRAG(demo_index, settings, llm, replay_embedder)
    judge = Judge(settings, llm, replay_embedder, METRICS)

    record = run_sync(evaluate_pair(method, judge, demo_question("q01"), METRICS))

    assert (record["question_id"], record["method"], record["type"]) == ("q01", "naive", "local")
    assert record["answer"] == "" and record["contexts"] == [] and record["sources"] == []
    assert record["answer_error"].startswith("LLMError") and "400" in record["answer_error"]
    for metric in METRICS:
        assert math.isnan(record[metric])
        assert record[f"{metric}_error"].startswith("no answer (LLMError")
        assert record[f"{metric}_calls"] == 0
    assert record["llm_calls"] == 0
    assert fake_llm.calls == 1, "the failed answer only: no judge call"


def test_a_pair_record_holds_the_answer_and_its_scores(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    judge_reply = faithfulness_model([1, 0])

    def model(body: dict) -> str:
        if body["messages"][0]["content"].startswith("You answer a question"):
            return "KBMI was founded in 1998 [1]."
        return judge_reply(body)

    fake_llm.respond_with(model)
    settings = make_settings(fake_llm.base_url, query={"chunk_context": "top_k"})
    llm = ChatLLM(settings)
    method = NaiveRAG(demo_index, settings, llm, replay_embedder)
    judge = Judge(settings, llm, replay_embedder, ["faithfulness"])

    record = run_sync(evaluate_pair(method, judge, demo_question("q01"), ["faithfulness"]))

    assert record["answer"] == "KBMI was founded in 1998 [1]."
    assert record["answer_error"] is None
    assert len(record["contexts"]) == settings.query.top_k
    assert record["cited"] == record["sources"][:1]
    assert record["llm_calls"] == 1
    assert record["faithfulness"] == 0.5 and record["faithfulness_error"] is None
    assert record["faithfulness_calls"] == 2
    assert fake_llm.calls == 3


def test_a_replay_miss_while_answering_stops_the_evaluation(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, tmp_path: Path
) -> None:
    settings = make_settings(
        fake_llm.base_url, cache={"mode": "replay", "path": str(tmp_path / "empty")}
    )
    llm = ChatLLM(settings)
    method = NaiveRAG(demo_index, settings, llm, replay_embedder)
    judge = Judge(settings, llm, replay_embedder, METRICS)
    with pytest.raises(CacheMissError):
        run_sync(evaluate_pair(method, judge, demo_question("q01"), METRICS))
    assert fake_llm.calls == 0
