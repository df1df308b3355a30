"""Answers that fall into a repetition loop: where the loop starts, and one re-ask.

Why: at temperature 0 the 1.5B model now and then repeats one sentence until
``answer_max_tokens`` (local search's answer to the demo's q23 said "The storm showed them
how exposed they were." twenty times, and nothing else after its second sentence). A final
answer like that is cut where the loop starts and asked once more with a frequency penalty
(:data:`LOOP_FREQUENCY_PENALTY`): greedy decoding ignores the seed, so the same request
would loop the same way, while the penalty makes a repeated token less likely the more it was
used. The re-ask is a new request, recorded beside the first; the answer kept is the longer of
the two once each is cut at its own loop, so the guard never returns less than the cut first
reply. The cut is made on the whole reply (not on a stream), so a live run and its replay give
the same text; an answer with no loop costs nothing more.
"""

from __future__ import annotations

import re

from graphrag.llm.client import ChatLLM

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
LOOP_RUN = 2  # repeats of earlier sentences in a row that make a loop
# Frequency penalty of the one re-ask of an answer that looped: enough to steer greedy decoding
# off the repeated sentence; the re-asks in the committed cache were recorded with it.
LOOP_FREQUENCY_PENALTY = 0.5


def _normal(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def loop_start(text: str, run: int = LOOP_RUN) -> int | None:
    """Return the offset where ``text`` starts looping, or None.

    A loop is ``run`` sentences in a row that each repeat, word for word (case and spacing
    aside), a sentence said earlier; it starts at the first of them. Why two in a row: an
    answer may restate one sentence once (a conclusion that echoes the opening), a loop does
    not stop.
    """
    seen: set[str] = set()
    starts: list[int] = []
    for match in _SENTENCE.finditer(text):
        sentence = _normal(match.group())
        if not sentence:
            continue
        if sentence in seen:
            starts.append(match.start())
            if len(starts) >= run:
                return starts[0]
        else:
            starts = []
            seen.add(sentence)
    return None


def cut_loop(text: str) -> tuple[str, bool]:
    """Return ``text`` cut where its loop starts (stripped), and whether it looped."""
    start = loop_start(text)
    if start is None:
        return text.strip(), False
    return text[:start].strip(), True


async def answer_text(
    llm: ChatLLM, messages: list[dict[str, str]], max_tokens: int, penalty: float
) -> str:
    """Return the model's answer to ``messages``: cut at a loop and, if it looped and
    ``penalty`` > 0, asked once more with that frequency penalty (the longer cut answer kept)."""
    completion = await llm.achat(messages, max_tokens=max_tokens)
    text, looped = cut_loop(completion.text)
    if not looped or penalty <= 0:
        return text
    again = await llm.achat(messages, max_tokens=max_tokens, frequency_penalty=penalty)
    retry, _ = cut_loop(again.text)
    return retry if len(retry) > len(text) else text
