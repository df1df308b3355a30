"""The loop guard of final answers (graphrag/query/loops.py)."""

from __future__ import annotations

import asyncio

from graphrag.query.loops import answer_text, cut_loop, loop_start

# The opening of local search's recorded answer to the demo's q23 (the live model, before the
# guard): after two sentences it said the third again until max_tokens.
Q23_LOOP = (
    "The Kestrel Bay Fishing Cooperative's relationships with scientists, conservationists, "
    "and companies changed over time. Initially, the cooperative was built on cod and worked "
    "the shallow grounds of Harrow Shoal, but the storm in 1974 showed them how exposed they "
    "were. The storm showed them how exposed they were. The storm showed them how exposed they "
    "were. The storm showed them how exposed they were. The storm showed them how exposed they "
    "were. The storm showed them how"
)
MESSAGES = [{"role": "user", "content": "How did the cooperative change?"}]
# A fuller answer than the cut loop (the retry the guard keeps)
FULLER = (
    "The cooperative first fished cod on Harrow Shoal, until the 1974 storm showed how exposed "
    "it was. It agreed to voluntary quotas in the 1990s. Tomas Reyne became its chair in 2012 "
    "and signed a data-sharing agreement with the Kestrel Bay Marine Institute. Its members "
    "blame Tidewell Aquaculture's salmon pens for sea lice."
)


def test_the_recorded_loop_is_cut_after_its_first_saying() -> None:
    kept, looped = cut_loop(Q23_LOOP)
    assert looped
    assert kept.endswith("how exposed they were. The storm showed them how exposed they were.")
    assert kept.count("The storm showed them") == 1


def test_one_restatement_is_not_a_loop_and_text_without_one_is_kept_whole() -> None:
    echo = "Reyne chairs the cooperative. It has 62 boats. Reyne chairs the cooperative."
    assert loop_start(echo) is None
    assert cut_loop("  One answer.\n") == ("One answer.", False)
    # case and spacing aside, a sentence said again twice in a row is a loop
    text = "A is B. C is D. a is  B. A IS B. More."
    assert text[: loop_start(text)] == "A is B. C is D."


def test_a_looping_answer_is_asked_again_with_a_penalty_and_the_fuller_one_kept(
    fake_llm, make_llm
) -> None:
    retry = FULLER
    fake_llm.script(Q23_LOOP, retry)
    text = asyncio.run(answer_text(make_llm(), MESSAGES, 250, 0.5))
    assert text == retry
    first, second = fake_llm.requests
    assert "frequency_penalty" not in first  # the first request's recorded key is unchanged
    assert second["frequency_penalty"] == 0.5
    assert second["messages"] == first["messages"]


def test_a_retry_that_says_less_leaves_the_cut_first_answer(fake_llm, make_llm) -> None:
    fake_llm.script(Q23_LOOP, "Short. Short. Short.")
    text = asyncio.run(answer_text(make_llm(), MESSAGES, 250, 0.5))
    assert text == cut_loop(Q23_LOOP)[0]
    assert fake_llm.calls == 2


def test_no_retry_without_a_loop_or_without_a_penalty(fake_llm, make_llm) -> None:
    fake_llm.script("A plain answer [1].")
    assert asyncio.run(answer_text(make_llm(), MESSAGES, 250, 0.5)) == "A plain answer [1]."
    assert fake_llm.calls == 1
    fake_llm.reset()
    fake_llm.script(Q23_LOOP)
    other = [{"role": "user", "content": "And then?"}]  # not the recorded question above
    assert asyncio.run(answer_text(make_llm(), other, 250, 0.0)) == cut_loop(Q23_LOOP)[0]
    assert fake_llm.calls == 1


def test_a_replayed_retry_asks_nothing_live(fake_llm, make_llm) -> None:
    retry = FULLER
    fake_llm.script(Q23_LOOP, retry)
    assert asyncio.run(answer_text(make_llm(), MESSAGES, 250, 0.5)) == retry
    replay = make_llm(cache={"mode": "replay"})
    assert asyncio.run(answer_text(replay, MESSAGES, 250, 0.5)) == retry
    assert fake_llm.calls == 2
