"""What ``eval --dry-run`` costs a method that calls the model before its answer and has no
recorded answers to measure (``Method.planned_cost``): HippoRAG's recognition filter and
MiniRAG's query analysis, against the prompts the methods really send on the MuSiQue index."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import MUSIQUE, FakeLLM

from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.registry import ALL_METHODS
from graphrag.text.tokens import count_tokens, message_tokens
from workbench.eval.questions import load_questions

QUESTIONS = 8


def _reply(method: str, body: dict) -> str:
    """The fullest reply the method's schema allows: every fact kept, every slot named."""
    if method == "hipporag":
        facts = [line for line in body["messages"][-1]["content"].splitlines() if ". " in line]
        return json.dumps({"relevant": list(range(1, len(facts) + 1))})
    return json.dumps(
        {"answer_type_keywords": ["PERSON"], "entities_from_query": ["Journal of Psychotherapy"]}
    )


@pytest.mark.parametrize("name", ["hipporag", "minirag"])
def test_the_planned_cost_is_within_half_again_of_the_calls_really_made(
    name: str, musique_index, musique_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = copy.deepcopy(musique_settings)
    settings.llm.base_url = fake_llm.base_url
    settings.cache.mode = "off"
    fake_llm.respond_with(lambda body: _reply(name, body))
    questions = list(load_questions(MUSIQUE / "questions.jsonl")["question"].head(QUESTIONS))
    method_class = ALL_METHODS[name]
    method = method_class(musique_index, settings, ChatLLM(settings), replay_embedder)

    for question in questions:
        run_sync(method.aretrieve_ranked(question))
    calls, prompt, completion = method_class.planned_cost(settings, musique_index, questions)

    assert calls == fake_llm.calls / len(questions) == 1.0
    sent = sum(message_tokens(r["messages"]) for r in fake_llm.requests) / fake_llm.calls
    assert sent / 1.5 <= prompt <= sent * 1.5
    if name == "hipporag":  # the reply keeping every linked fact is the most it can say
        replies = [count_tokens(_reply(name, r)) for r in fake_llm.requests]
        assert completion == max(replies)
    else:
        assert completion >= count_tokens(_reply(name, fake_llm.requests[0]))
