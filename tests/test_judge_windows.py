"""Long contexts judged in windows of the judge's slot (workbench/eval/judge_windows.py),
through the real ragas metrics on a fake judge endpoint: every request fits
``context_limit()``, a statement found in any window counts, faithfulness's statements are
batched when they alone overflow the window, and a prompt that fits is ragas's own request,
byte for byte (so recorded judgements replay). Context precision is average precision over
the first contexts in the order shown, one call each."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from conftest import DEMO_DOCS, FakeLLM
from ragas.llms import llm_factory
from ragas.metrics.collections import ContextPrecision, ContextRecall, Faithfulness

from graphrag.llm.client import SEED, ChatLLM
from graphrag.text import tokens
from workbench.eval.judge import JUDGE_CALLS as judge_calls
from workbench.eval.judge import Judge
from workbench.eval.judge_windows import CONTEXT_PRECISION_DEPTH, matched

RECALL_PROMPT = "classify if the statement can be attributed to the given context"
VERDICTS_PROMPT = "judge the faithfulness of a series of statements"
STATEMENTS_PROMPT = "Break down each sentence"
PRECISION_PROMPT = "verify if the context was useful in arriving at the given answer"
DOCS = sorted(DEMO_DOCS.glob("*.md"))
CONTEXTS = [d.read_text(encoding="utf-8") for d in DOCS]  # ~5,000 tokens in all


def first_sentence(text: str) -> str:
    return text.split("\n\n", 1)[1].split(". ")[0].strip() + "."


def judge_input(prompt: str) -> dict:
    tail = prompt.rsplit("Now perform the same with the following input", 1)[1]
    return json.loads(tail[tail.index("{") : tail.rindex("Output:")])


def flat(text: str) -> str:
    return " ".join(text.split())


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


def fake_judge(body: dict) -> str:
    """A judge that reads: statements are sentences; one is supported or attributed when the
    context holds it word for word."""
    prompt = body["messages"][-1]["content"]
    data = judge_input(prompt)
    if RECALL_PROMPT in prompt:
        found = [(s, int(s in flat(data["context"]))) for s in sentences(data["answer"])]
        items = [{"statement": s, "reason": "checked", "attributed": a} for s, a in found]
        return json.dumps({"classifications": items})
    if VERDICTS_PROMPT in prompt:
        context = flat(data["context"])
        items = [
            {"statement": s, "reason": "checked", "verdict": int(s in context)}
            for s in data["statements"]
        ]
        return json.dumps({"statements": items})
    if PRECISION_PROMPT in prompt:  # useful when the context holds a sentence of the answer
        useful = any(s in flat(data["context"]) for s in sentences(data["answer"]))
        return json.dumps({"reason": "checked", "verdict": int(useful)})
    if STATEMENTS_PROMPT in prompt:
        return json.dumps({"statements": sentences(data["answer"])})
    raise AssertionError(prompt[:80])


@pytest.fixture
def judged(make_settings, fake_llm: FakeLLM, make_embedder):
    """Return score(metric, window, answer, reference) -> (value, error, judge requests)."""

    def score(metric: str, window: int, answer: str, reference: str, contexts=CONTEXTS):
        assert metric in judge_calls
        settings = make_settings(fake_llm.base_url, llm={"context_tokens": window})
        llm = ChatLLM(settings)
        assert llm.context_limit() == window
        judge = Judge(settings, llm, make_embedder(settings), [metric])
        fake_llm.reset()
        fake_llm.respond_with(fake_judge)
        result = asyncio.run(judge.score(metric, "What happened?", answer, contexts, reference))
        return result.value, result.error, list(fake_llm.requests)

    return score


def ragas_judge(settings):
    """ragas's own judge LLM as workbench/eval/judge.py builds it (same request bodies)."""
    client = ChatLLM(settings).async_client(max_retries=settings.llm.max_retries)
    return llm_factory(
        settings.llm.model,
        provider="openai",
        client=client,
        temperature=0.0,
        top_p=1.0,
        max_tokens=settings.llm.max_tokens,
        seed=SEED,
    )


def fits(requests: list[dict], window: int) -> None:
    for request in requests:
        assert tokens.message_tokens(request["messages"]) + request["max_tokens"] <= window


def test_context_recall_over_contexts_longer_than_the_window(judged) -> None:
    """Reference statements from the first, a middle and the last document are attributed
    although no window holds all three; one found nowhere is not; every request fits."""
    found = [first_sentence(CONTEXTS[i]) for i in (0, 6, 11)]
    reference = " ".join([*found, "The bay froze solid in 1066."])
    value, error, requests = judged("context_recall", 3000, "unused", reference)
    assert error is None and value == pytest.approx(3 / 4)
    assert len(requests) >= 3
    fits(requests, 3000)
    windows = " ".join(flat(judge_input(r["messages"][-1]["content"])["context"]) for r in requests)
    for context in CONTEXTS:
        assert flat(context)[:200] in windows  # every context reached some window
    held = [flat(judge_input(r["messages"][-1]["content"])["context"]) for r in requests]
    assert not any(all(s in text for s in found) for text in held), "no window holds all three"

    whole_value, _, whole = judged("context_recall", 16000, "unused", reference)
    assert whole_value == pytest.approx(3 / 4) and len(whole) == 1


def test_a_prompt_that_fits_is_ragas_s_own_request(judged, make_settings, fake_llm) -> None:
    """Below the window, windowed context recall and faithfulness send exactly the requests
    ragas's own metrics send (same bodies, so the recorded judgements replay)."""
    contexts = CONTEXTS[:2]
    answer = f"{first_sentence(CONTEXTS[0])} The bay froze solid in 1066."
    reference = first_sentence(CONTEXTS[1])
    _, _, recall = judged("context_recall", 16000, answer, reference, contexts)
    _, _, faithful = judged("faithfulness", 16000, answer, reference, contexts)

    settings = make_settings(fake_llm.base_url, cache={"mode": "off"})  # not the cache's hits

    async def own() -> None:
        llm = ragas_judge(settings)
        await ContextRecall(llm=llm).ascore(
            user_input="What happened?", retrieved_contexts=contexts, reference=reference
        )
        await Faithfulness(llm=llm).ascore(
            user_input="What happened?", response=answer, retrieved_contexts=contexts
        )

    fake_llm.reset()
    fake_llm.respond_with(fake_judge)
    asyncio.run(own())
    assert len(recall) == 1 and len(faithful) == 2
    assert fake_llm.requests == recall + faithful


def test_faithfulness_batches_statements_that_alone_overflow_the_window(judged) -> None:
    """Sixty-odd statements leave no room for context in a 2,600-token window: they are judged
    in batches, each against windows that fit, and each statement keeps its own verdict."""
    found = [first_sentence(c) for c in CONTEXTS]  # twelve, one per document
    invented = [f"The bay froze solid in the year {1000 + i}." for i in range(48)]
    answer = " ".join(found + invented)
    statements = sentences(answer)  # a first sentence may hold an abbreviation's ". "
    supported = [s for s in statements if any(s in flat(c) for c in CONTEXTS)]
    assert len(statements) >= 60 and len(supported) >= 12
    value, error, requests = judged("faithfulness", 2600, answer, "")
    assert error is None
    assert value == pytest.approx(len(supported) / len(statements))
    verdicts = [r for r in requests if VERDICTS_PROMPT in r["messages"][-1]["content"]]
    fits(verdicts, 2600)
    batches = {tuple(judge_input(r["messages"][-1]["content"])["statements"]) for r in verdicts}
    assert len(batches) > 1 and all(len(b) < len(statements) for b in batches)
    assert sorted(s for b in batches for s in b) == sorted(statements)


def test_a_window_too_small_for_one_statement_is_a_named_error(judged) -> None:
    value, error, _ = judged("faithfulness", 1500, "The bay froze solid in 1066.", "")
    assert value != value and "setting llm.context_tokens" in error  # NaN, with the reason


def test_verdicts_are_matched_by_position_else_by_text() -> None:
    statements = ["A is B.", "C is D.", "E is F."]
    assert matched(statements, [("x", 1), ("y", 0), ("z", 1)]) == [(0, 1), (1, 0), (2, 1)]
    assert matched(statements, [("e  IS f.", 1), ("unknown", 1)]) == [(2, 1)]


@pytest.mark.parametrize("metric", ["context_precision", "context_utilization"])
def test_context_precision_is_average_precision_over_the_first_contexts(judged, metric) -> None:
    """Against the reference (precision) or the answer (utilization): useful contexts at
    ranks 1 and 3 of the first five score (1/1 + 2/3) / 2; the same contexts in the reverse
    order score less; the sixth context is never sent; one request per context judged."""
    sentence = first_sentence(CONTEXTS[0])
    useful, useless = CONTEXTS[0], CONTEXTS[5]
    shown = [useful, CONTEXTS[3], f"{useful} Again.", useless, CONTEXTS[7], f"{useful} More."]
    answer, reference = (sentence, "") if metric == "context_utilization" else ("", sentence)
    value, error, requests = judged(metric, 16000, answer, reference, shown)
    assert error is None and value == pytest.approx((1 + 2 / 3) / 2)
    assert len(requests) == CONTEXT_PRECISION_DEPTH == 5
    sent = [flat(judge_input(r["messages"][-1]["content"])["context"]) for r in requests]
    assert sent == [flat(c) for c in shown[:5]]
    reverse, _, _ = judged(metric, 16000, answer, reference, shown[:5][::-1])
    assert reverse == pytest.approx((1 / 3 + 2 / 5) / 2) and reverse < value  # ranks 3 and 5
    nothing, _, _ = judged(metric, 16000, answer, reference, [useless, CONTEXTS[7]])
    assert nothing == pytest.approx(0.0)


def test_a_context_too_long_for_the_window_is_cut_to_fit(judged) -> None:
    """All twelve documents as one context (~5,000 tokens) in a 3,000-token window: judged
    on its beginning, the request fits, and a sentence there is still found."""
    whole = "\n".join(CONTEXTS)
    reference = first_sentence(CONTEXTS[0])
    value, error, requests = judged("context_precision", 3000, "", reference, [whole])
    assert error is None and value == pytest.approx(1.0) and len(requests) == 1
    fits(requests, 3000)
    sent = flat(judge_input(requests[0]["messages"][-1]["content"])["context"])
    assert flat(whole).startswith(sent[:500]) and len(sent) < len(flat(whole))


def test_context_precision_that_fits_is_ragas_s_own_request(judged, make_settings, fake_llm):
    """Contexts that fit: the same requests as ragas's own ContextPrecision over them."""
    contexts = CONTEXTS[:3]
    reference = first_sentence(CONTEXTS[1])
    _, _, ours = judged("context_precision", 16000, "", reference, contexts)
    settings = make_settings(fake_llm.base_url, cache={"mode": "off"})

    async def own() -> None:
        llm = ragas_judge(settings)
        await ContextPrecision(llm=llm).ascore(
            user_input="What happened?", reference=reference, retrieved_contexts=contexts
        )

    fake_llm.reset()
    fake_llm.respond_with(fake_judge)
    asyncio.run(own())
    assert len(ours) == 3 and fake_llm.requests == ours
