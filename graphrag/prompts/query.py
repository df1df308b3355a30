"""The prompts of querying: the answer from numbered context, HyDE, multi-query, global
search (map, reduce, merge), budgeted global search's relevance test, DRIFT and MiniRAG's
query mapping."""

from __future__ import annotations

import json

from graphrag.prompts.loader import load_template
from graphrag.prompts.messages import Messages, system_and_user


def answer(question: str, context: str, style: str = "sentences") -> Messages:
    prompt = load_template("answer")
    return system_and_user(
        prompt.render("system", length=prompt.text(f"length_{style}")),
        prompt.render("user", context=context, question=question),
    )


def hypothetical_passage(question: str) -> Messages:
    """HyDE: a passage that would answer the question; returns plain text."""
    prompt = load_template("hypothetical_passage")
    return system_and_user(prompt.text("system"), prompt.render("user", question=question))


def recognize_facts(question: str, facts: str) -> Messages:
    """HippoRAG 2's recognition filter: must return {relevant: [fact numbers]}."""
    prompt = load_template("recognize_facts")
    return system_and_user(
        prompt.text("system"), prompt.render("user", facts=facts, question=question)
    )


def rephrase(question: str, n: int) -> Messages:
    """Multi-query: must return {queries: [n strings]}."""
    prompt = load_template("rephrase")
    return system_and_user(prompt.render("system", n=n), prompt.render("user", question=question))


def global_map(question: str, reports: str) -> Messages:
    """Global search map step: must return {points: [{description, score 0-100}]}."""
    prompt = load_template("global_map")
    return system_and_user(
        prompt.text("system"), prompt.render("user", reports=reports, question=question)
    )


def global_map_sentences(question: str, sentences: str) -> Messages:
    """Global search's extractive map step: must return {sentences: [{n, score 0-100}]}, the
    numbers of the report sentences that help answer (the reduce reads the reports' words)."""
    prompt = load_template("global_map_sentences")
    return system_and_user(
        prompt.text("system"), prompt.render("user", sentences=sentences, question=question)
    )


def relevance_test(question: str, sentences: str) -> Messages:
    """Budgeted global search's relevance test of one text chunk: must return
    {relevant: [n, ...]}, the numbers of its sentences that help answer ([]: not relevant)."""
    prompt = load_template("relevance_test")
    return system_and_user(
        prompt.text("system"), prompt.render("user", sentences=sentences, question=question)
    )


def _reduce_length(style: str) -> str:
    return load_template("global_reduce").text(f"length_{style}")


def global_reduce(question: str, points: str, style: str = "sentences") -> Messages:
    prompt = load_template("global_reduce")
    return system_and_user(
        prompt.render("system", length=_reduce_length(style)),
        prompt.render("user", points=points, question=question),
    )


def global_merge(question: str, drafts: list[str], style: str = "sentences") -> Messages:
    """Global search's last call with ``query.global.reduce_seeds``: one answer from the
    reduce's drafts, each written from the same points read in another order."""
    prompt = load_template("global_merge")
    labelled = "\n\n".join(
        prompt.render("draft", letter=chr(ord("A") + i), draft=draft.strip())
        for i, draft in enumerate(drafts)
    )
    return system_and_user(
        prompt.render("system", length=_reduce_length(style)),
        prompt.render("user", drafts=labelled, question=question),
    )


# Answers given without asking the model.
NO_RELEVANT_REPORTS = (
    "I do not know: none of the community reports contains information relevant to this question."
)
NO_DRIFT_ANSWERS = "I do not know: the search found nothing relevant to this question."


# DRIFT: the primer and every follow-up step must return ``drift_step_schema``.


def drift_primer(question: str, reports: str, max_follow_ups: int) -> Messages:
    """DRIFT primer over the community reports closest to a hypothetical answer."""
    prompt = load_template("drift_primer")
    return system_and_user(
        prompt.render("system", max_follow_ups=max_follow_ups),
        prompt.render("user", reports=reports, question=question),
    )


def drift_follow_up(question: str, follow_up: str, context: str, max_follow_ups: int) -> Messages:
    """DRIFT step: a follow-up question answered from a local-search context."""
    prompt = load_template("drift_follow_up")
    return system_and_user(
        prompt.render("system", max_follow_ups=max_follow_ups),
        prompt.render("user", context=context, question=question, follow_up=follow_up),
    )


def drift_reduce(question: str, answers: str) -> Messages:
    """DRIFT final answer from the ranked intermediate answers; returns plain text."""
    prompt = load_template("drift_reduce")
    return system_and_user(
        prompt.text("system"), prompt.render("user", answers=answers, question=question)
    )


def minirag_keywords(question: str, type_pool: dict[str, list[str]]) -> Messages:
    """MiniRAG's query mapping over ``type_pool`` ({type: two example entity names}): must
    return ``query_keywords_schema``."""
    prompt = load_template("minirag_keywords")
    pool = json.dumps(type_pool, ensure_ascii=False)
    return system_and_user(
        prompt.text("system"), prompt.render("user", question=question, type_pool=pool)
    )
