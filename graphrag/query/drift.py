"""DRIFT search (Microsoft GraphRAG): a primer over the reports nearest a hypothetical answer
gives an answer, a score and follow-up questions; local search answers the best follow-ups for
``depth`` rounds; the intermediate answers, best first, are reduced into the answer."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from functools import cached_property

from graphrag import prompts
from graphrag import schemas as S
from graphrag.llm.cache import CacheMissError
from graphrag.llm.coroutines import gather_with_progress
from graphrag.llm.usage import track_usage
from graphrag.query.base import (
    Answer,
    ContextItem,
    Method,
    cited_numbers,
    collecting_failures,
    fit_items,
    number_items,
)
from graphrag.query.local import LocalSearch
from graphrag.query.registry import register
from graphrag.text import lang, tokens

DRIFT_SOURCE_KINDS = ("report:", "text_unit:")  # what a step's answer is traced back to
# Token budgets of DRIFT's calls, not settings: they shape the recorded requests.
PRIMER_TOKENS = 2000  # reports the primer call reads, at most
STEP_MAX_TOKENS = 300  # completion tokens of the primer or of one follow-up step
REDUCE_TOKENS = 1500  # intermediate answers the final reduce reads, at most
# A follow-up's local-search shares, its own as Microsoft's DRIFT configures its local step
# (docs/defaults-provenance.md): text units, then community reports.
LOCAL_TEXT_UNIT_SHARE = 0.5
LOCAL_COMMUNITY_SHARE = 0.2


@dataclass
class DriftSettings:
    """``[query.drift]``: Microsoft GraphRAG's DRIFT search."""

    top_reports: int = 5
    """Community reports nearest the hypothetical answer that the primer reads."""
    followups: int = 3
    """Follow-up questions answered per round (and asked per step, at most)."""
    depth: int = 2
    """Rounds of follow-ups: at most followups * depth local steps."""


@dataclass
class Step:
    """One answered question: the primer (depth 0) or a follow-up."""

    query: str
    answer: str
    score: int
    follow_ups: list[str]
    depth: int
    read: list[ContextItem] = field(default_factory=list)  # reports and text units it read


def _key(question: str) -> str:
    return " ".join(question.lower().split()).rstrip("?")


@register("drift", settings=DriftSettings, opt_in=True, order=60)
class DRIFTSearch(Method):
    options: DriftSettings

    @cached_property
    def local(self) -> LocalSearch:
        """The local search that answers follow-ups, with DRIFT's own context shares."""
        shares = {
            "text_unit_share": LOCAL_TEXT_UNIT_SHARE,
            "community_share": LOCAL_COMMUNITY_SHARE,
        }
        own = dataclasses.replace(self.params.methods["local"], **shares)
        return LocalSearch(self.index, self.settings, self.llm, self.embedder, self.stores, own)

    async def aprimer(self, question: str) -> Step:
        """Answer from the reports closest to a hypothetical answer, within ``PRIMER_TOKENS``."""
        cap = self.params.methods["hyde"].max_tokens
        passage = await self.llm.achat(prompts.hypothetical_passage(question), max_tokens=cap)
        vector = self.embedder.embed_one(passage.text.strip() or question)
        await self.aensure_reports()  # the primer ranks every report
        reports = self.index.community_reports
        keys = [f"report:{int(c)}" for c in reports[S.COMMUNITY]]
        text_of = dict(zip(keys, reports[S.FULL_CONTENT], strict=True))
        ranked = self.stores.reports.top_k(vector, self.options.top_reports)
        reports = fit_items([ContextItem(r, text_of[r]) for r, _ in ranked], PRIMER_TOKENS)
        # numbered by community, as global search's are, so citations name communities
        text = "\n\n".join(f"[{i.source.removeprefix('report:')}] {i.text}" for i in reports)
        language = lang.detect(question)
        messages = prompts.drift_primer(question, text, self.options.followups, language)
        return await self.astep(messages, question, 0, reports)

    async def astep(
        self, messages: list[dict[str, str]], query: str, depth: int, read: list[ContextItem]
    ) -> Step:
        """Return the step one JSON call answers, from the context items ``read``."""
        n = self.options.followups
        reply = await self.llm.ajson(
            messages, prompts.drift_step_schema(n), name="drift_step", max_tokens=STEP_MAX_TOKENS
        )
        follow_ups = [f.strip() for f in reply["follow_ups"][:n] if f.strip()]
        return Step(query, reply["answer"].strip(), int(reply["score"]), follow_ups, depth, read)

    async def afollow_up(self, question: str, follow_up: str, depth: int) -> Step:
        items = await self.local.aretrieve(follow_up)
        n = self.options.followups
        context, language = number_items(items), lang.detect(question)
        messages = prompts.drift_follow_up(question, follow_up, context, n, language)
        read = [i for i in items if i.source.startswith(DRIFT_SOURCE_KINDS)]
        return await self.astep(messages, follow_up, depth, read)

    async def asteps(self, question: str) -> tuple[list[Step], list[str]]:
        """Return every answered step, primer first, and the errors of the dropped ones."""
        primer = await self.aprimer(question)
        steps, failures = [primer], []
        asked = {_key(question)}
        pending: list[tuple[int, str]] = []  # (parent score, follow-up), in order asked

        def queue(step: Step) -> None:
            for follow_up in step.follow_ups:
                if _key(follow_up) not in asked:
                    asked.add(_key(follow_up))
                    pending.append((step.score, follow_up))

        queue(primer)
        for depth in range(1, self.options.depth + 1):
            pending.sort(key=lambda p: -p[0])  # stable: ties keep the order they were asked
            chosen = [f for _, f in pending[: self.options.followups]]
            del pending[: self.options.followups]
            if not chosen:
                break
            results = await gather_with_progress(
                (self.afollow_up(question, f, depth) for f in chosen), "drift", disable=True
            )
            for follow_up, result in zip(chosen, results, strict=True):
                if isinstance(result, CacheMissError):
                    raise result  # a call never recorded, not a failed step
                if isinstance(result, Exception):
                    failures.append(f"follow-up {follow_up!r}: {type(result).__name__}: {result}")
                    continue
                steps.append(result)
                queue(result)
        return steps, failures

    def ranked_steps(self, steps: list[Step]) -> list[Step]:
        """Return the steps the reduce reads: best score first, within the reduce budget."""
        useful = sorted((s for s in steps if s.score > 0 and s.answer), key=lambda s: -s.score)
        # the item's source carries the step's position
        items = [ContextItem(str(i), s.answer) for i, s in enumerate(useful)]
        kept = fit_items(items, REDUCE_TOKENS)
        return [useful[int(item.source)] for item in kept]

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        """Return DRIFT's answer with the intermediate answers and what they read."""
        started = time.monotonic()
        with track_usage() as usage, collecting_failures() as noted:
            steps, failures = await self.asteps(question)
            used = self.ranked_steps(steps)
            if used:
                answers = number_items([ContextItem("", s.answer) for s in used])
                messages = prompts.drift_reduce(question, answers, lang.detect(question))
                text = await self.final_answer(messages, short_answer)
            else:
                text = prompts.NO_DRIFT_ANSWERS[lang.detect(question)]
        read = {item.source: item.text for step in used for item in step.read}
        numbered = {n: [item.source for item in step.read] for n, step in enumerate(used, 1)}
        cited = [s for n in cited_numbers(text) if 0 < n <= len(used) for s in numbered[n]]
        contexts = [s.answer for s in used] + list(read.values())
        return Answer(
            question=question,
            method=self.name,
            text=text,
            contexts=contexts,
            sources=list(read),
            cited=list(dict.fromkeys(cited)),
            usage=usage,
            seconds=time.monotonic() - started,
            context_tokens=sum(tokens.count_tokens(c) for c in contexts),
            failures=list(dict.fromkeys([*failures, *noted])),  # noted: lazy reports not written
            numbered=numbered,
        )

    async def aretrieve(self, question: str) -> list[ContextItem]:
        steps = self.ranked_steps((await self.asteps(question))[0])
        return [ContextItem(",".join(i.source for i in s.read), s.answer) for s in steps]
