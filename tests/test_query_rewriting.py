"""Step-back prompting and sub-question decomposition (graphrag/query/step_back.py,
decomposition.py) over MuSiQue's real paragraphs, with a fake model: what is under test is the
fusion, the order, the answers fed forward, the bounds and the fallbacks, not the model.
"""

from __future__ import annotations

import copy
import json

import pytest
from conftest import MUSIQUE, FakeLLM

from graphrag import prompts
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import items_tokens
from graphrag.query.decomposition import clean_sub_questions, resolve_references
from graphrag.query.rankers import reciprocal_rank_fusion
from graphrag.query.registry import ALL_METHODS, METHODS, OPT_IN_METHODS, make_methods
from graphrag.query.step_back import STEP_BACK_TOKENS
from graphrag.text.tokens import message_tokens
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(MUSIQUE / "questions.jsonl").set_index("id")
TWO_HOP = "2hop__150763_14904"  # the first president of the journal's publisher
GENERAL = "What is the history of the American Psychological Association?"


def kind(body: dict) -> str:
    """Which prompt a request is, by its system turn's opening words."""
    system = body["messages"][0]["content"]
    for opening, name in [
        ("You step back", "step_back"),
        ("You break a question", "decompose"),
        ("You answer one step", "sub_answer"),
        ("You answer a question", "answer"),
    ]:
        if system.startswith(opening):
            return name
    return "other"


@pytest.fixture
def build(musique_index, musique_settings, fake_llm: FakeLLM, replay_embedder):
    """Return a builder of named methods over the MuSiQue index answered by the fake model."""

    def make(*names: str, **decomposition: int):
        settings = copy.deepcopy(musique_settings)
        settings.llm.base_url = fake_llm.base_url
        settings.cache.mode = "off"
        for key, value in decomposition.items():
            setattr(settings.query.methods["decomposition"], key, value)
        return make_methods(
            musique_index, list(names), settings, ChatLLM(settings), replay_embedder
        )

    return make


def test_both_are_registered_opt_in_and_named_in_every_listing() -> None:
    for name in ("step_back", "decomposition"):
        assert name in OPT_IN_METHODS and name in ALL_METHODS and name not in METHODS


# ------------------------------------------------------------------------------ step-back


def test_step_back_fuses_the_questions_ranking_with_the_step_back_questions(
    build, fake_llm: FakeLLM, replay_embedder
) -> None:
    fake_llm.respond_with(
        lambda body: GENERAL if kind(body) == "step_back" else "G. Stanley Hall [1]."
    )
    methods = build("step_back", "naive")
    step_back, naive = methods["step_back"], methods["naive"]
    question = QUESTIONS.loc[TWO_HOP, "question"]

    retrieval = run_sync(step_back.aretrieve_ranked(question))
    depth = naive.chunk_depth()
    rankings = [
        naive.first_stage_ranking(replay_embedder.embed_one(q), q, depth)
        for q in (question, GENERAL)
    ]
    fused = reciprocal_rank_fusion(rankings)
    assert retrieval.candidates == fused and rankings[0] != fused
    assert retrieval.ranking == [f"text_unit:{u}" for u in fused[:10]]
    # naive RAG's budget, filled from the fused ranking
    assert items_tokens(retrieval.items) <= naive.answer_budget(question)
    assert [i.source for i in retrieval.items] == [
        i.source for i in naive.chunk_context(fused, question)
    ]
    asked = fake_llm.requests[0]
    assert kind(asked) == "step_back" and asked["messages"][-1]["content"] == question
    assert asked["max_tokens"] == STEP_BACK_TOKENS

    answer = step_back.answer(question)
    assert answer.method == "step_back" and answer.usage.calls == 2 and not answer.failures
    assert answer.contexts == [i.text for i in retrieval.items]


def test_a_failed_step_back_searches_the_question_alone_and_says_so(
    build, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(lambda body: "" if kind(body) == "step_back" else "I do not know.")
    methods = build("step_back", "naive")
    question = QUESTIONS.loc[TWO_HOP, "question"]

    answer = methods["step_back"].answer(question)
    assert answer.ranking == methods["naive"].answer(question).ranking
    assert any(f.startswith("step-back question") for f in answer.failures)


# -------------------------------------------------------------------------- decomposition


def test_references_to_earlier_answers_are_filled_in() -> None:
    assert resolve_references("Who founded #1 in #2?", ["KBMI", "1998"]) == (
        "Who founded KBMI in 1998?",
        True,
    )
    # no answer yet, or an unknown one: the reference stays
    assert resolve_references("Who leads #2?", ["KBMI"]) == ("Who leads #2?", False)
    assert resolve_references("Who leads #1?", ["unknown"]) == ("Who leads #1?", False)
    # bounded, distinct, never empty
    assert clean_sub_questions(["A?", " A? ", "", "B?", "C?"], "Q?", 2) == ["A?", "B?"]
    assert clean_sub_questions(["", "  "], "Q?", 3) == ["Q?"]


def oracle(question_id: str):
    """A fake model that decomposes as MuSiQue's annotators did and answers each hop with the
    gold answer: the model is perfect, so what is measured is the retrieval it guides."""
    hops = QUESTIONS.loc[question_id, "decomposition"]
    answers = {h["question"].replace("#1", hops[0]["answer"]).strip(): h["answer"] for h in hops}

    def reply(body: dict) -> str:
        if kind(body) == "decompose":
            return json.dumps({"sub_questions": [h["question"] for h in hops]})
        if kind(body) == "sub_answer":
            asked = body["messages"][-1]["content"].rsplit("Question: ", 1)[1].strip()
            return answers.get(asked, "unknown")
        return f"{hops[-1]['answer']} [1]."

    return reply


def test_decomposition_answers_in_order_feeds_answers_forward_and_reads_both_hops(
    build, fake_llm: FakeLLM, musique_index
) -> None:
    fake_llm.respond_with(oracle(TWO_HOP))
    method = build("decomposition")["decomposition"]
    question, support = QUESTIONS.loc[TWO_HOP, ["question", "support"]]

    answer = method.answer(question)
    kinds = [kind(r) for r in fake_llm.requests]
    assert kinds == ["decompose", "sub_answer", "sub_answer", "answer"]
    second = fake_llm.requests[2]["messages"][-1]["content"]
    # the first answer replaced "#1" in the second sub-question, and is shown as found
    assert "Question: Who was the first president of American Psychological Association ?" in (
        second
    )
    assert (
        "What company published Journal of Psychotherapy Integration? -> "
        "American Psychological Association"
    ) in second
    # the contexts are everything the model read: the sub-answers read only these items
    shown = "\n".join(r["messages"][-1]["content"] for r in fake_llm.requests[1:3])
    assert all(text[:60] in shown for text in answer.contexts)
    assert answer.context_tokens <= method.answer_budget(question)
    assert len(set(answer.sources)) == len(answer.sources)
    # both hops' gold paragraphs were read
    assert EvidenceIndex(musique_index).evidence_recall(answer.contexts, list(support)) == 1.0
    assert answer.usage.calls == 4 and not answer.failures


def test_with_no_reference_the_last_answer_joins_the_next_search_only(
    build, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    subs = ["Who performed Hello Love?", "Where did the performer live when he died?", "Why?"]
    replies = {subs[0]: "Hank Snow", subs[1]: "Unknown."}

    def reply(body: dict) -> str:
        if kind(body) == "decompose":
            return json.dumps({"sub_questions": subs})
        asked = body["messages"][-1]["content"].rsplit("Question: ", 1)[1].strip()
        return replies.get(asked, "An answer [1].")

    fake_llm.respond_with(reply)
    method = build("decomposition")["decomposition"]
    searched = []
    real = method.new_evidence
    monkeypatch.setattr(
        method, "new_evidence", lambda query, *rest: searched.append(query) or real(query, *rest)
    )
    answer = method.answer("Where did the performer of Hello Love live when he died?")
    # IRCoT: the search reads the last answer; the model is asked the sub-question as written;
    # an "Unknown." answer is no answer, so the third search is the sub-question alone
    assert searched == [subs[0], f"{subs[1]} Hank Snow", subs[2]]
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests if kind(r) == "sub_answer"]
    assert asked[1].endswith(f"Question: {subs[1]}")
    assert f"{subs[1]} -> unknown" in asked[2]
    assert not answer.failures


def test_the_sub_questions_are_bounded_by_the_setting(build, fake_llm: FakeLLM) -> None:
    many = {"sub_questions": ["Who is A?", "Who is B?", "Who is C?", "Who is D?"]}
    fake_llm.respond_with(lambda body: json.dumps(many) if kind(body) == "decompose" else "unknown")
    method = build("decomposition", max_sub_questions=2)["decomposition"]
    answer = method.answer(QUESTIONS.loc[TWO_HOP, "question"])
    schema = fake_llm.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema == prompts.sub_questions_schema(2)
    assert schema["properties"]["sub_questions"]["maxItems"] == 2
    # an endpoint that ignores the schema: four stay invalid through the repair rounds, so
    # the question itself is searched -- never more sub-questions than the setting
    sub_asked = [r for r in fake_llm.requests if kind(r) == "sub_answer"]
    assert len(sub_asked) == 1 and answer.failures


def test_malformed_sub_questions_are_repaired_once_or_fall_back_to_the_question(
    build, fake_llm: FakeLLM
) -> None:
    question = QUESTIONS.loc[TWO_HOP, "question"]
    # prose around a JSON value missing its closing brackets: mended without asking again
    mendable = 'Here you go: {"sub_questions": ["Who published the journal?", "Who led #1?"'
    fake_llm.respond_with(lambda body: mendable if kind(body) == "decompose" else "unknown")
    answer = build("decomposition")["decomposition"].answer(question)
    assert [kind(r) for r in fake_llm.requests].count("decompose") == 1
    assert [kind(r) for r in fake_llm.requests].count("sub_answer") == 2
    assert not answer.failures

    fake_llm.reset()
    fake_llm.respond_with(lambda body: "I cannot." if kind(body) != "answer" else "No idea.")
    answer = build("decomposition")["decomposition"].answer(question)
    asked = [r["messages"][-1]["content"] for r in fake_llm.requests if kind(r) == "decompose"]
    assert len(asked) > 1 and asked[1].startswith("That reply is invalid")  # the repair
    sub_asked = [r for r in fake_llm.requests if kind(r) == "sub_answer"]
    assert len(sub_asked) == 1 and sub_asked[0]["messages"][-1]["content"].endswith(question)
    assert any(f.startswith("sub-questions (the question was searched") for f in answer.failures)
    assert answer.text == "No idea." and answer.contexts


def test_planned_costs_bound_the_calls_the_methods_make(
    build, fake_llm: FakeLLM, musique_index, musique_settings
) -> None:
    questions = list(QUESTIONS["question"].head(3))
    calls, prompt, completion = ALL_METHODS["step_back"].planned_cost(
        musique_settings, musique_index, questions
    )
    assert (calls, completion) == (1.0, STEP_BACK_TOKENS)
    sent = [prompts.step_back(q) for q in questions]
    assert prompt == pytest.approx(sum(map(message_tokens, sent)) / 3)

    fake_llm.respond_with(oracle(TWO_HOP))
    method = build("decomposition")["decomposition"]
    answer = method.answer(QUESTIONS.loc[TWO_HOP, "question"])
    calls, prompt, completion = ALL_METHODS["decomposition"].planned_cost(
        musique_settings, musique_index, [QUESTIONS.loc[TWO_HOP, "question"]]
    )
    assert calls == 1 + musique_settings.query.methods["decomposition"].max_sub_questions
    before_answer = answer.usage.calls - 1
    assert before_answer <= calls
    sent = sum(message_tokens(r["messages"]) for r in fake_llm.requests[:before_answer])
    assert sent <= prompt
