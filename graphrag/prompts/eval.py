"""The prompts of evaluation: the final-answer line of benchmark sets and the pairwise judge
(the RAGAS judge prompts are ragas's own)."""

from __future__ import annotations

from graphrag.prompts.loader import load_template, packaged_template
from graphrag.prompts.messages import Messages, system_and_user

FINAL_ANSWER_INSTRUCTION = packaged_template("with_final_answer_line").text("instruction")


def with_final_answer_line(messages: Messages) -> Messages:
    """Benchmark sets: the same answer prompt, also asking for a final 'Answer: …' line, the
    one exact match and token F1 score. It closes the last user turn, after the question: at
    the end of the system prompt the 1.5B model ignored it in every recorded MuSiQue answer."""
    *before, last = messages
    instruction = load_template("with_final_answer_line").text("instruction")
    return [*before, {**last, "content": f"{last['content']}\n\n{instruction}"}]


# criterion name -> what it asks (the criterion_<name> sections of answer_rating)
PAIRWISE_CRITERIA = {
    key.removeprefix("criterion_"): packaged_template("answer_rating").text(key)
    for key in packaged_template("answer_rating").sections
    if key.startswith("criterion_")
}

RATING_SCALE = (1, 2, 3, 4, 5)


def answer_rating(question: str, answer: str, criterion: str) -> Messages:
    """The pairwise judge: one answer rated alone (no order to bias it) on one criterion, a
    digit of RATING_SCALE. The criterion comes last, so the criteria share a cached prefix."""
    prompt = load_template("answer_rating")
    user = prompt.render(
        "user",
        question=question,
        answer=answer,
        criterion=criterion,
        meaning=prompt.text(f"criterion_{criterion}"),
    )
    return system_and_user(prompt.text("system"), user)
