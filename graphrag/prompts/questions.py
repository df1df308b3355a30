"""The prompts of question generation (``graphrag questions generate``): a local question from
one text unit, a bridge question from two, a global one from a community report; the judge's
answerability check and the closed-book answer that filter them. Each system part is fixed
and comes first, so every call of one kind shares its cached prompt prefix."""

from __future__ import annotations

from graphrag.prompts.guards import fence_document
from graphrag.prompts.loader import load_template
from graphrag.prompts.messages import Messages, system_and_user


def question_local(passage: str, focus: str) -> Messages:
    """Must return ``generated_question_schema``: a question one text unit answers."""
    prompt = load_template("question_local")
    return system_and_user(
        prompt.text("system"),
        prompt.render("user", passage=fence_document(passage), focus=focus),
    )


def question_bridge(first: str, second: str, bridge: str) -> Messages:
    """Must return ``generated_question_schema``: a question that needs both text units,
    joined through the entity ``bridge`` they both mention."""
    prompt = load_template("question_bridge")
    return system_and_user(
        prompt.text("system"),
        prompt.render(
            "user", first=fence_document(first), second=fence_document(second), bridge=bridge
        ),
    )


def question_global(report: str) -> Messages:
    """Must return ``generated_question_schema``: a thematic question a report answers."""
    prompt = load_template("question_global")
    return system_and_user(prompt.text("system"), prompt.render("user", report=report))


def question_answerable(support: str, question: str, reference: str) -> Messages:
    """The judge: must return ``verdict_schema``, "yes" when ``support`` answers the question
    and states the reference answer."""
    prompt = load_template("question_answerable")
    return system_and_user(
        prompt.text("system"),
        prompt.render(
            "user", support=fence_document(support), question=question, reference=reference
        ),
    )


def question_closed_book(question: str) -> Messages:
    """The answering model with no context; returns plain text."""
    prompt = load_template("question_closed_book")
    return system_and_user(prompt.text("system"), prompt.render("user", question=question))
