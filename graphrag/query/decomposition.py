"""Sub-question decomposition (least-to-most, self-ask, IRCoT): the model writes the sub-questions
of a multi-hop question, each is searched and answered in turn ("#1" is the first answer), and
the question is answered from all the evidence, in naive RAG's budget."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from graphrag import prompts
from graphrag.index.store import Index
from graphrag.llm.replies import json_request
from graphrag.query.base import (
    CHUNK_DEPTH,
    ContextItem,
    Cost,
    Method,
    Retrieval,
    drop_step,
    fit_items,
    note_failure,
    number_items,
)
from graphrag.query.registry import register
from graphrag.query.step_back import first_line
from graphrag.settings import Settings, SettingsError
from graphrag.text.tokens import message_tokens

# Replies' caps; not settings: another value would replay nothing
PLAN_TOKENS = 200
SUB_ANSWER_TOKENS = 40
UNKNOWN = "unknown"
REFERENCE = re.compile(r"#(\d+)")


@dataclass
class DecompositionSettings:
    """``[query.decomposition]``: sub-questions answered in order, then the question."""

    # MuSiQue's questions have 2 to 4 hops; each sub-question is one more call
    max_sub_questions: int = 3
    """Sub-questions the model may write (it is asked for 2 to this many), each searched and
    answered in order, one call each, before the answer."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        if self.max_sub_questions < 2:
            raise SettingsError(f"setting {name}.max_sub_questions must be at least 2")


def resolve_references(sub_question: str, answers: list[str]) -> tuple[str, bool]:
    """Return ``sub_question`` with each "#k" replaced by the k-th answer (kept when there is
    no such answer yet), and whether any was replaced."""
    replaced = False

    def answer_of(match: re.Match[str]) -> str:
        nonlocal replaced
        k = int(match[1])
        if 1 <= k <= len(answers) and answers[k - 1] != UNKNOWN:
            replaced = True
            return answers[k - 1]
        return match[0]

    return REFERENCE.sub(answer_of, sub_question), replaced


def clean_sub_questions(raw: list[str], question: str, limit: int) -> list[str]:
    """Return the distinct non-empty sub-questions, at most ``limit``; none: the question."""
    kept = list(dict.fromkeys(s.strip() for s in raw if s and s.strip()))[:limit]
    return kept or [question]


@register("decomposition", settings=DecompositionSettings, opt_in=True, order=36)
class Decomposition(Method):
    options: DecompositionSettings

    async def sub_questions(self, question: str) -> list[str]:
        """Return the model's sub-questions; a reply that stays malformed after the JSON
        repair falls back to the question itself, named in the answer's failures."""
        n = self.options.max_sub_questions
        try:
            reply = await self.llm.ajson(
                prompts.decompose(question, n),
                prompts.sub_questions_schema(n),
                name="sub_questions",
                max_tokens=PLAN_TOKENS,
            )
        except Exception as err:  # noqa: BLE001 - the question is then its own sub-question
            drop_step("sub-questions (the question was searched as it is)", err)
            return [question]
        if not any(s.strip() for s in reply["sub_questions"]):
            note_failure("sub-questions: all empty; the question was searched as it is")
        return clean_sub_questions(list(reply["sub_questions"]), question, n)

    async def sub_answer(self, query: str, earlier: list[str], items: list[ContextItem]) -> str:
        """Return the short answer of one sub-question, UNKNOWN when the call failed."""
        try:
            reply = await self.llm.atext(
                prompts.sub_answer(query, "\n".join(earlier), number_items(items)),
                name="sub-answer",
                max_tokens=SUB_ANSWER_TOKENS,
            )
        except Exception as err:  # noqa: BLE001 - the next step searches without this answer
            drop_step(f"sub-answer of {query!r}", err)
            return UNKNOWN
        answer = first_line(reply)
        return UNKNOWN if answer.lower().strip(" .\"'") in ("", UNKNOWN) else answer

    def new_evidence(self, query: str, seen: set[str], share: int) -> list[ContextItem]:
        """Return the best text units for ``query`` not yet collected, in ``share`` tokens
        (under ``chunk_context = "top_k"``: ``share`` units)."""
        vector = self.embedder.embed_one(query)
        ranked = self.first_stage_ranking(vector, query, len(seen) + CHUNK_DEPTH)
        items = self.text_unit_items([u for u in ranked if f"text_unit:{u}" not in seen])
        return items[:share] if self.params.chunk_context == "top_k" else fit_items(items, share)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        subs = await self.sub_questions(question)
        if self.params.chunk_context == "top_k":
            share = max(1, self.params.top_k // len(subs))
        else:
            share = self.answer_budget(question) // len(subs)
        answers, earlier, collected = [], [], []
        for sub in subs:
            asked, replaced = resolve_references(sub, answers)
            search = asked
            if not replaced and answers and answers[-1] != UNKNOWN:
                search = f"{asked} {answers[-1]}"  # IRCoT: the last step's answer joins the query
            seen = {item.source for item in collected}
            items = self.new_evidence(search, seen, share)
            collected += items
            answer = await self.sub_answer(asked, earlier, items)
            answers.append(answer)
            earlier.append(f"{asked} -> {answer}")
        units = [i.source.removeprefix("text_unit:") for i in collected]
        ranking = [i.source for i in collected[: self.ranking_depth()]]
        return Retrieval(collected, ranking, candidates=units)

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost:
        """The plan call and ``max_sub_questions`` sub-answer calls, each reading its share of
        the context budget; replies at their caps (the most they can cost)."""
        if not questions:
            return 0.0, 0.0, 0.0
        n = settings.query.methods[cls.name].max_sub_questions
        schema = prompts.sub_questions_schema(n)

        def plan(q: str) -> int:
            messages = json_request(settings.llm.json_mode, prompts.decompose(q, n), schema, "")
            return message_tokens(messages[0])

        frames = [plan(q) + n * message_tokens(prompts.sub_answer(q, q, "")) for q in questions]
        share = settings.query.max_context_tokens  # n shares of the budget in all
        prompt = sum(frames) / len(questions) + share + (n - 1) * n * SUB_ANSWER_TOKENS / 2
        return 1.0 + n, prompt, float(PLAN_TOKENS + n * SUB_ANSWER_TOKENS)
