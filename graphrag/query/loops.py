"""Answers that fall into a repetition loop (a 1.5B model at temperature 0, now and then): cut
where the loop starts and asked once more with a frequency penalty; the longer is kept."""

from __future__ import annotations

import re

from graphrag.llm.client import ChatLLM

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
LOOP_RUN = 2  # repeats of earlier sentences in a row that make a loop
# Frequency penalty of the re-ask of a looped answer (the recorded re-asks used it).
LOOP_FREQUENCY_PENALTY = 0.5


def loop_start(text: str, run: int = LOOP_RUN) -> int | None:
    """Return the offset where ``text`` starts looping, or None: the first of ``run``
    sentences in a row that each repeat an earlier one (one repeat may be a conclusion)."""
    seen: set[str] = set()
    starts: list[int] = []
    for match in _SENTENCE.finditer(text):
        sentence = " ".join(match.group().lower().split())  # case and spacing aside
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
