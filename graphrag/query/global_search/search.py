"""Global search: map-reduce over the community reports of one level (docs/methods.md). The map
reads batches of reports concurrently; the reduce reads the best points, one draft per report
order with ``reduce_seeds``, merged. A failed batch or draft is named in ``Answer.failures``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.llm.client import SEED
from graphrag.llm.coroutines import gather_with_progress
from graphrag.query.base import (
    Answer,
    ContextItem,
    Method,
    Retrieval,
    cited_numbers,
    drop_step,
    fit_items,
    note_failure,
)
from graphrag.query.global_search import map_context
from graphrag.query.global_search.map_context import (
    Pick,
    Point,
    auto_level,
    by_community,
    level_view,
)
from graphrag.query.registry import register
from graphrag.text import lang, tokens

# The reference's values; 10 points and a 2,500-token reduce lost on the thematic questions
# (docs/defaults-provenance.md, studies/benchmarks/global_map.py).
MAP_MAX_POINTS = 4  # points (or picked sentences) one map call returns, at most
REDUCE_TOKENS = 1500  # tokens of map points the reduce reads, at most


def _tolerated(replies: list, steps: list[str]) -> list[tuple[int, Any]]:
    """Return (position, reply) for the calls that answered (``drop_step`` names the others by
    ``steps``); raise the first error when every call failed."""
    failed = [r for r in replies if isinstance(r, Exception)]
    if failed and len(failed) == len(replies):
        raise failed[0]  # nothing left to go on with
    kept = []
    for position, (reply, step) in enumerate(zip(replies, steps, strict=True)):
        if isinstance(reply, Exception):
            drop_step(step, reply)
        else:
            kept.append((position, reply))
    return kept


@dataclass
class GlobalSettings:
    """``[query.global]``: map-reduce over community reports (Microsoft GraphRAG's global)."""

    level: int = -1
    """The community level whose reports the map reads; -1: chosen by the data (auto_level)."""
    max_batches: int = 3
    """With the level chosen by the data: the map's budget, in batches of batch_tokens."""
    batch_tokens: int = 2000
    """Tokens of reports one map call reads, at most."""
    # These four depart from Microsoft's map (why: docs/defaults-provenance.md).
    reports_per_call: int = 1
    """Reports one map call reads, at most (0: as many as batch_tokens holds, as Microsoft)."""
    reduce_seeds: list[int] = field(default_factory=lambda: [1, 2])
    """Seeds of further report orders: one draft per order, merged by one more call ([]: one)."""
    map_style: Literal["points", "sentences"] = "sentences"
    """The map: "sentences" picks report sentences; "points", Microsoft GraphRAG's map."""
    report_facts_tokens: int = 200
    """Tokens of the community's entity descriptions shown under an LLM-written report (0: none)."""


@register("global", settings=GlobalSettings, order=50)
class GlobalSearch(Method):
    options: GlobalSettings

    def with_facts(self, reports: pd.DataFrame) -> pd.DataFrame:
        return map_context.with_facts(
            reports, self.index.communities, self.index.entities, self.options.report_facts_tokens
        )

    def level_reports(self, question: str) -> pd.DataFrame:
        """Return the reports ``level`` names (-1: ``auto_level``), by community number."""
        reports, communities = self.index.community_reports, self.index.communities
        if self.options.level >= 0:
            return by_community(level_view(reports, communities, self.options.level))

        def closest(ids: list[str]) -> list[str]:
            vector = self.embedder.embed_one(question)
            return [report for report, _ in self.stores.reports.top_k(vector, len(ids), ids)]

        budget = (self.options.batch_tokens, self.options.max_batches)
        return auto_level(reports, communities, *budget, self.shuffle_seed, closest)

    @property
    def shuffle_seed(self) -> int:
        """The seed of the report shuffle (Microsoft GraphRAG's is fixed too)."""
        return SEED

    def map_batches(self, chosen: pd.DataFrame) -> list[pd.DataFrame]:
        per_call = self.options.reports_per_call
        return map_context.report_batches(
            self.with_facts(chosen), self.options.batch_tokens, self.shuffle_seed, per_call
        )

    async def apick_sentences(self, question: str, text: str) -> dict:
        """Return one extractive map call's reply, {sentences: [{n, score}]}."""
        schema = prompts.map_sentences_schema(MAP_MAX_POINTS)
        return await self.llm.ajson(
            prompts.global_map_sentences(question, text), schema, name="map_sentences"
        )

    async def amap(self, question: str) -> list[Point]:
        return (await self.amap_orders(question, [self.shuffle_seed]))[0]

    async def amap_orders(self, question: str, seeds: list[int]) -> list[list[Point]]:
        """Map once; return the points ranked under the report shuffle of each of ``seeds``."""
        await self.aensure_reports()  # the level is chosen from every level's reports
        chosen = self.level_reports(question)
        batches = self.map_batches(chosen)
        sentences = self.options.map_style == "sentences"
        amap = self.amap_sentences if sentences else self.amap_points
        picks = await amap(question, batches)
        orders = []
        for seed in seeds:
            ordered = map_context.ranked(picks, map_context.batch_ranks(chosen, batches, seed))
            points = [(p.score, p.text, p.communities) for p in ordered]
            orders.append(map_context.cited_sentences(ordered) if sentences else points)
        return orders

    async def amap_points(self, question: str, batches: list[pd.DataFrame]) -> list[Pick]:
        """Microsoft GraphRAG's map: each batch's points in the model's words, in batch
        order; points scored 0, empty or restating the question are dropped."""
        budget, language = self.options.batch_tokens, lang.detect(question)
        schema = prompts.map_points_schema(MAP_MAX_POINTS)
        results = await gather_with_progress(
            (
                self.llm.ajson(
                    prompts.global_map(question, map_context.batch_text(b, budget), language),
                    schema,
                    name="map_points",
                )
                for b in batches
            ),
            "global map",
            disable=True,
        )
        in_batch = [[int(c) for c in b[S.COMMUNITY]] for b in batches]
        for batch in batches:  # a report larger than a batch, alone in its own, is cut
            for community, text in zip(batch[S.COMMUNITY], batch[S.FULL_CONTENT], strict=True):
                if tokens.count_tokens(text) > budget:
                    note_failure(f"map: report [{int(community)}] cut to batch_tokens {budget}")
        points = []
        steps = [f"map batch of reports {b}" for b in in_batch]
        for position, result in _tolerated(results, steps):
            for p in result["points"]:
                text, batch = p["description"], in_batch[position]
                echo = map_context.restates_question(text, question)
                if p["score"] > 0 and text.strip() and not echo:
                    # the batch reports it cites, or the whole batch when it cites none of them
                    cited = [c for c in cited_numbers(text) if c in batch] or batch
                    points.append(Pick(p["score"], text.strip(), cited, position))
        return points

    async def amap_sentences(self, question: str, batches: list[pd.DataFrame]) -> list[Pick]:
        """The extractive map: each batch's picked sentences, in batch order."""
        budget = self.options.batch_tokens
        shown = [map_context.numbered_sentences(b, budget) for b in batches]
        for batch, (_, numbered) in zip(batches, shown, strict=True):
            sentences = map_context.report_sentences
            if unread := sum(len(sentences(t)) for t in batch[S.FULL_CONTENT]) - len(numbered):
                reports = [int(c) for c in batch[S.COMMUNITY]]
                note_failure(
                    f"map batch of reports {reports}: {unread} sentences cut to "
                    f"batch_tokens {budget}"
                )
        results = await gather_with_progress(
            (self.apick_sentences(question, text) for text, numbered in shown if numbered),
            "global map",
            disable=True,
        )
        mapped = [(position, numbered) for position, (_, numbered) in enumerate(shown) if numbered]
        in_batch = [[int(c) for c in batches[position][S.COMMUNITY]] for position, _ in mapped]
        picks = []
        for kept, result in _tolerated(results, [f"map batch of reports {b}" for b in in_batch]):
            position, numbered = mapped[kept]
            for pick in map_context.usable_picks(result, len(numbered)):
                community, sentence = numbered[pick["n"] - 1]
                picks.append(Pick(pick["score"], sentence, [community], position))
        return picks

    def reduce_items(self, question: str, points: list[Point]) -> list[ContextItem]:
        """Return the points the reduce reads, in their order, as many as fit ``REDUCE_TOKENS``."""
        items = [
            ContextItem(
                ",".join(f"report:{c}" for c in communities), f"(importance {score}) {text}"
            )
            for score, text, communities in points
        ]
        return fit_items(items, REDUCE_TOKENS)

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return self.reduce_items(question, await self.amap(question))

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        """Return what the reduce reads; with ``reduce_seeds``, every distinct order of it
        (``Retrieval.orders``, told apart by the reduce prompt's texts) and all their points."""
        seeds = [self.shuffle_seed, *self.options.reduce_seeds]
        orders: dict[tuple, list[ContextItem]] = {}
        for points in await self.amap_orders(question, seeds):
            items = self.reduce_items(question, points)
            orders.setdefault(tuple(i.text for i in items), items)
        if len(orders) == 1:
            return Retrieval(next(iter(orders.values())), [])
        shown = {(i.source, i.text): i for items in orders.values() for i in items}
        return Retrieval(list(shown.values()), [], list(orders.values()))

    async def awrite(self, question: str, retrieval: Retrieval, short_answer: bool) -> str:
        """Return the reduce's answer; with several orders, their drafts merged by one more call
        (docs/research-log.md). A failed draft is dropped; a failed merge leaves the first."""
        if len(retrieval.orders) < 2:
            return await self.agenerate(question, retrieval.items, short_answer)
        replies = await gather_with_progress(
            (self.agenerate(question, items, short_answer) for items in retrieval.orders),
            "global drafts",
            disable=True,
        )
        steps = [f"reduce draft {n}" for n in range(1, len(replies) + 1)]
        distinct = list(dict.fromkeys(reply for _, reply in _tolerated(replies, steps)))
        if len(distinct) == 1:
            return distinct[0]
        style, language = self.params.answer_style, lang.detect(question)
        messages = prompts.global_merge(question, distinct, style, language)
        try:
            return await self.final_answer(messages, short_answer)
        except Exception as err:  # noqa: BLE001 - named in failures; the first draft stands
            drop_step("merge of the drafts", err)
            return distinct[0]

    async def agenerate(
        self, question: str, items: list[ContextItem], short_answer: bool = False
    ) -> str:
        if not items:
            return prompts.NO_RELEVANT_REPORTS[lang.detect(question)]
        points = "\n".join(f"- {item.text}" for item in items)
        style, language = self.params.answer_style, lang.detect(question)
        messages = prompts.global_reduce(question, points, style, language)
        return await self.final_answer(messages, short_answer)

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        answer = await super().aanswer(question, short_answer)
        # One item stands for a batch of reports: list each report once, as its own source.
        answer.sources = list(dict.fromkeys(s for item in answer.sources for s in item.split(",")))
        reports = self.index.community_reports
        cited = reports[[f"report:{c}" in answer.sources for c in reports[S.COMMUNITY]]]
        shown = self.with_facts(cited)  # what the map read, for the reports it drew on
        keys = [f"report:{c}" for c in shown[S.COMMUNITY]]
        text_of = dict(zip(keys, shown[S.FULL_CONTENT], strict=True))
        answer.contexts = [text_of[s] for s in answer.sources]
        answer.context_tokens = sum(tokens.count_tokens(c) for c in answer.contexts)
        # The reduce step cites community numbers, not item numbers.
        known = {f"report:{c}" for c in self.index.community_reports[S.COMMUNITY]}
        answer.cited = [f"report:{n}" for n in cited_numbers(answer.text) if f"report:{n}" in known]
        answer.numbered = {int(s[7:]): [s] for s in answer.sources if s.startswith("report:")}
        return answer
