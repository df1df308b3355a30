"""The prompts of evaluation: the final-answer line of benchmark sets and the pairwise judge.
The RAGAS judge prompts are ragas's own and are not here.

The text is in ``templates/<name>.txt``; these builders fill it and assemble the messages.
"""

from __future__ import annotations

from graphrag.prompts.loader import load_template, packaged_template
from graphrag.prompts.messages import Messages, system_and_user

FINAL_ANSWER_INSTRUCTION = packaged_template("with_final_answer_line").text("instruction")


def with_final_answer_line(messages: Messages) -> Messages:
    """Benchmark sets: the same answer prompt, also asking for a final 'Answer: …' line.

    The line is what exact match and token F1 score (as in HippoRAG and the benchmark
    papers); the full answer above it stays for the judge. Other sets never see this text,
    so their recorded prompts replay unchanged.

    The instruction closes the last user turn, after the question: at the end of the system
    prompt the 1.5B model ignored it in all 90 recorded MuSiQue answers (naive, PPR, local on
    30 questions), while after the question it wrote the line.
    """
    *before, last = messages
    instruction = load_template("with_final_answer_line").text("instruction")
    return [*before, {**last, "content": f"{last['content']}\n\n{instruction}"}]


# The criteria by name, with what each asks (the criterion_<name> sections of answer_rating).
PAIRWISE_CRITERIA = {
    key.removeprefix("criterion_"): packaged_template("answer_rating").text(key)
    for key in packaged_template("answer_rating").sections
    if key.startswith("criterion_")
}

RATING_SCALE = (1, 2, 3, 4, 5)


def answer_rating(question: str, answer: str, criterion: str) -> Messages:
    """The pairwise judge: one answer rated alone on one criterion, a digit of RATING_SCALE.

    The answer is shown alone, so no order can bias the rating (the 1.5B model asked to pick
    the better of two answers picked by position only: 0.500 on every planted control). The
    question and answer come before the criterion, so the four criteria of one answer share
    their prompt prefix in the server's cache.
    """
    prompt = load_template("answer_rating")
    user = prompt.render(
        "user",
        question=question,
        answer=answer,
        criterion=criterion,
        meaning=prompt.text(f"criterion_{criterion}"),
    )
    return system_and_user(prompt.text("system"), user)
