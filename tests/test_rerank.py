"""The rerank stage (graphrag/query/rerank.py): any chunk-ranking method named "<method>+rerank"
has its first-stage top-N reordered by the model's listwise ranking, in the same context budget,
over MuSiQue's real paragraphs; a fake model ranks (the model is not under test)."""

from __future__ import annotations

import copy
import re

import pytest
from conftest import MUSIQUE, FakeLLM

from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.base import items_tokens
from graphrag.query.registry import UnknownMethodError, make_methods, planned_cost
from graphrag.query.rerank import PASSAGE_TOKENS, TOKENS_PER_NUMBER, Reranked, parse_order
from graphrag.text.tokens import message_tokens
from workbench.eval.dry_run import estimate_eval
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(MUSIQUE / "questions.jsonl")
QUESTION = QUESTIONS["question"].iloc[0]
TOP_N = 8


def is_rerank(body: dict) -> bool:
    return body["messages"][0]["content"].startswith("You rank passages")


def passages_in(body: dict) -> int:
    return len(re.findall(r"^\[(\d+)\] ", body["messages"][-1]["content"], re.MULTILINE))


def reversed_ranking(body: dict) -> str:
    """The fake reranker: the passages in reverse, so the new order is plain to check."""
    if not is_rerank(body):
        return "G. Stanley Hall [1]."
    return ", ".join(str(n) for n in range(passages_in(body), 0, -1))


@pytest.fixture
def build(musique_index, musique_settings, fake_llm: FakeLLM, replay_embedder):
    def make(*names: str):
        settings = copy.deepcopy(musique_settings)
        settings.llm.base_url = fake_llm.base_url
        settings.cache.mode = "off"
        settings.query.methods["rerank"].top_n = TOP_N
        return make_methods(
            musique_index, list(names), settings, ChatLLM(settings), replay_embedder
        )

    return make


def test_a_ranking_reply_is_read_leniently_and_an_unusable_one_is_an_error() -> None:
    assert parse_order("3, 1, 2", 3) == [2, 0, 1]
    # repeats and numbers out of range are ignored; unnamed passages follow in their order
    assert parse_order("[5] > [5] > 99 > 2", 5) == [4, 1, 0, 2, 3]
    with pytest.raises(ValueError, match="names none of the passages 1 to 4"):
        parse_order("They all look useful.", 4)


def test_any_method_is_reranked_by_name_and_an_unknown_one_is_named(build) -> None:
    methods = build("naive", "naive+rerank", "hybrid+rerank")
    assert isinstance(methods["naive+rerank"], Reranked)
    assert methods["naive+rerank"].name == "naive+rerank"
    assert methods["hybrid+rerank"].inner.name == "hybrid"
    with pytest.raises(UnknownMethodError, match=r"nope\+rerank.*<method>\+rerank"):
        build("nope+rerank")


def test_the_model_reorders_the_top_n_and_the_budget_stays_the_methods(
    build, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(reversed_ranking)
    methods = build("naive", "naive+rerank")
    naive, reranked = methods["naive"], methods["naive+rerank"]
    first = run_sync(naive.aretrieve_ranked(QUESTION))

    retrieval = run_sync(reranked.aretrieve_ranked(QUESTION))
    expected = first.candidates[:TOP_N][::-1] + first.candidates[TOP_N:]
    assert retrieval.candidates == expected
    assert retrieval.ranking[:TOP_N] == [f"text_unit:{u}" for u in expected[:TOP_N]]
    assert [i.source for i in retrieval.items] == [
        i.source for i in naive.chunk_context(expected, QUESTION)
    ]
    budget = naive.answer_budget(QUESTION)
    assert items_tokens(retrieval.items) <= budget and items_tokens(first.items) <= budget
    # one call, the top N passages, each cut to PASSAGE_TOKENS
    (asked,) = fake_llm.requests
    assert passages_in(asked) == TOP_N and asked["messages"][-1]["content"].endswith(QUESTION)
    assert message_tokens(asked["messages"]) <= 200 + TOP_N * (PASSAGE_TOKENS + 8)

    answer = reranked.answer(QUESTION)
    assert answer.method == "naive+rerank" and answer.usage.calls == 2 and not answer.failures


@pytest.mark.parametrize("reply", ["All of them help.", ""])
def test_an_unusable_ranking_keeps_the_first_stage_order_and_says_so(
    build, fake_llm: FakeLLM, reply: str
) -> None:
    fake_llm.respond_with(lambda body: reply if is_rerank(body) else "I do not know.")
    methods = build("naive", "naive+rerank")
    answer = methods["naive+rerank"].answer(QUESTION)
    assert answer.ranking == methods["naive"].answer(QUESTION).ranking
    assert any(f.startswith("rerank (the first-stage order was kept)") for f in answer.failures)
    assert answer.text == "I do not know."


def test_a_method_without_a_chunk_ranking_keeps_its_context_and_says_so(
    build, fake_llm: FakeLLM
) -> None:
    fake_llm.respond_with(lambda body: "1" if is_rerank(body) else "An answer.")
    methods = build("local", "local+rerank")
    answer = methods["local+rerank"].answer(QUESTION)
    assert answer.sources == methods["local"].answer(QUESTION).sources
    assert not any(is_rerank(r) for r in fake_llm.requests)
    assert answer.failures == ["rerank: local ranks no text units; its context is kept"]


def test_the_dry_run_costs_the_rerank_call_and_the_new_methods(
    build, fake_llm: FakeLLM, musique_index, musique_settings
) -> None:
    fake_llm.respond_with(reversed_ranking)
    method = build("naive+rerank")["naive+rerank"]
    questions = list(QUESTIONS["question"].head(4))
    for question in questions:
        run_sync(method.aretrieve_ranked(question))
    settings = method.settings
    calls, prompt, completion = planned_cost("naive+rerank", settings, musique_index, questions)
    sent = sum(message_tokens(r["messages"]) for r in fake_llm.requests) / len(questions)
    assert calls == 1.0 and sent / 1.5 <= prompt <= sent * 1.5
    assert completion == TOKENS_PER_NUMBER * TOP_N  # a reply naming every passage
    assert {r["max_tokens"] for r in fake_llm.requests} == {completion + 8}

    names = ["naive", "naive+rerank", "hyde+rerank", "step_back", "decomposition"]
    estimate = estimate_eval(
        musique_settings, ChatLLM(musique_settings), musique_index,
        MUSIQUE / "questions.jsonl", names, [], None, None, limit=4,
    )  # fmt: skip
    stages = {s.stage.removeprefix("answer "): s for s in estimate.stages}
    assert set(names) <= set(stages)
    assert stages["naive+rerank"].calls == 2 * stages["naive"].calls
    assert stages["naive+rerank"].prompt_tokens > stages["naive"].prompt_tokens + 4 * 500
    assert "hyde's measured cost and the rerank call" in stages["hyde+rerank"].basis
    decomposition = musique_settings.query.methods["decomposition"].max_sub_questions
    assert stages["decomposition"].calls == 4 * (2 + decomposition)
    assert stages["step_back"].calls == 4 * 2
