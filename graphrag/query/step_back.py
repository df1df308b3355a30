"""Step-back prompting (Zheng et al., 2023): the model writes a more general question; both are
ranked by the first stage and fused by reciprocal rank fusion, in naive RAG's budget."""

from __future__ import annotations

from graphrag import prompts
from graphrag.index.store import Index
from graphrag.query.base import Cost, Method, Retrieval, drop_step
from graphrag.query.registry import register
from graphrag.settings import Settings
from graphrag.text.tokens import message_tokens

# the step-back question is one line; not a setting: another value would replay nothing
STEP_BACK_TOKENS = 60


def first_line(text: str) -> str:
    """Return the first non-empty line of ``text``, stripped ("" if none)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@register("step_back", opt_in=True, order=35)
class StepBack(Method):
    async def step_back_question(self, question: str) -> str:
        """Return the model's step-back question ("" when the call failed: named in the
        answer's failures, and the question is searched alone)."""
        messages, cap = prompts.step_back(question), STEP_BACK_TOKENS
        try:
            reply = await self.llm.atext(messages, name="step-back question", max_tokens=cap)
        except Exception as err:  # noqa: BLE001 - the question alone is still searched
            drop_step("step-back question", err)
            return ""
        return first_line(reply)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        general = await self.step_back_question(question)
        queries = [question] if general in ("", question) else [question, general]
        return self.fused_retrieval(queries, question)

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost:
        """One step-back call: its prompt rendered, a reply of at most STEP_BACK_TOKENS."""
        if not questions:
            return 0.0, 0.0, 0.0
        prompt = sum(message_tokens(prompts.step_back(q)) for q in questions) / len(questions)
        return 1.0, float(prompt), float(STEP_BACK_TOKENS)
