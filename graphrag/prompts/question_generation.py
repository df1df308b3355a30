"""Question generation's prompts (``graphrag questions generate``): a local question from one
text unit, a bridge question from two, a global one from a community report; the judge's
answerability check and the closed-book answer filter them. Each system part is fixed and
comes first, so every call of one kind shares its cached prompt prefix. Re-exported by the
package: callers write ``prompts.question_local``."""

from __future__ import annotations

from graphrag.prompts.guards import fence_document
from graphrag.prompts.loader import Messages, chat


def question_local(passage: str, focus: str) -> Messages:
    """Must return ``generated_question_schema``: a question one text unit answers."""
    return chat("question_local", passage=fence_document(passage), focus=focus)


def question_bridge(first: str, second: str, bridge: str) -> Messages:
    """Must return ``generated_question_schema``: a question that needs both text units,
    joined through the entity ``bridge`` they both mention."""
    both = {"first": fence_document(first), "second": fence_document(second)}
    return chat("question_bridge", **both, bridge=bridge)


def question_global(report: str) -> Messages:
    """Must return ``generated_question_schema``: a thematic question a report answers."""
    return chat("question_global", report=report)


def question_answerable(support: str, question: str, reference: str) -> Messages:
    """The judge: must return ``verdict_schema``, "yes" when ``support`` answers the question
    and states the reference answer."""
    support = fence_document(support)
    return chat("question_answerable", support=support, question=question, reference=reference)


def question_closed_book(question: str) -> Messages:
    """The answering model with no context; returns plain text."""
    return chat("question_closed_book", question=question)
