"""Global search at a budget (LazyGraphRAG): communities ranked by their chunks' similarity are
tested chunk by chunk by the model, level by level, until ``relevance_budget`` tests are spent;
the answer reads the relevant sentences, widened to their chunks (docs/methods.md)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.coroutines import gather_with_progress
from graphrag.query import base
from graphrag.query.base import ContextItem, Cost, Method, Retrieval, fit_items, items_tokens
from graphrag.query.global_search.map_context import SENTENCE_END
from graphrag.query.registry import register
from graphrag.settings import Settings, SettingsError
from graphrag.text import tokens
from graphrag.text.tokens import message_tokens

# Completion tokens of one relevance test: {"relevant": [...]} with at most MAX_PICKS numbers.
RELEVANCE_MAX_TOKENS = 48
MAX_PICKS = 8
# k and z: the blog names them without values; 1 test per community reaches the most
# communities in a budget of 6, and 3 misses leave room to go one level down.
CHUNKS_PER_COMMUNITY = 1  # k: a community's best untested chunks tested per visit (its top-k)
MISSES_BEFORE_DEEPENING = 3  # z: successive communities with no relevant chunk end a level
BATCH_SIZE = 2  # communities tested concurrently: the embedded server's two slots


@dataclass
class LazyGlobalSettings:
    """``[query.lazy_global]``: global search at a budget of relevance tests (LazyGraphRAG)."""

    # 6, from the arithmetic of docs/methods.md (not tuned on any question): naive RAG's
    # answer, 2,730 prompt and 95 completion tokens (workbench/eval/cost_assumptions.json), is
    # 65 s at the embedded model's 47.3 and 12.8 tokens/s per slot (llm/embedded/speed.json);
    # 3x is 196 s. The answer reads no more than naive's, 65 s; a test of a default 600-token
    # chunk (chunking.size), ~780 prompt tokens and at most RELEVANCE_MAX_TOKENS, is 20 s:
    # 130 s hold 6. The blog's 100/500/1,500 are GPT-4o-mini's on large corpora.
    relevance_budget: int = 6
    """Relevance tests (one LLM call each) one answer may spend, at most; the answer is one more."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        if self.relevance_budget < 1:
            raise SettingsError(f"setting query.{name}.relevance_budget must be at least 1")


def chunk_sentences(text: str) -> list[str]:
    """Return the sentences of a chunk, line by line (a heading is one), markup dropped."""
    sentences = []
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip().removeprefix("- ")
        sentences += [s.strip() for s in SENTENCE_END.split(line) if s.strip()]
    return sentences


def numbered(sentences: list[str]) -> str:
    return "\n".join(
        f"({n}) {prompts.neutralize_citations(s)}" for n, s in enumerate(sentences, start=1)
    )


def ranked_communities(
    candidates: list[int], units_of: dict[int, list[str]], rank_of: dict[str, int], k: int
) -> list[int]:
    """Return ``candidates`` best-first: by the mean rank of their top-k chunks, then by
    those ranks in order, then by number; a community with no chunk last."""

    def key(community: int) -> tuple:
        ranks = sorted(rank_of[r] for r in units_of.get(community, []))[:k]
        return (not ranks, float(np.mean(ranks)) if ranks else 0.0, ranks, community)

    return sorted(candidates, key=key)


@dataclass
class Search:
    """What the relevance tests found: each tested chunk's relevant sentences ([]: none), the
    relevant communities in the order found, and the tests spent."""

    verdicts: dict[str, list[int]] = field(default_factory=dict)
    relevant: list[int] = field(default_factory=list)
    spent: int = 0


def planned_tests(
    batch: list[int], units_of: dict, rank_of: dict[str, int], search: Search, k: int, budget: int
) -> dict[int, list[str]]:
    """Return each community of ``batch``'s chunks to test now: its best k untested ones, no
    chunk twice in a batch, and no more tests than ``budget`` leaves."""
    planned: dict[int, list[str]] = {}
    taken: set[str] = set()
    left = budget - search.spent
    for community in batch:
        ranked = sorted(units_of.get(community, []), key=lambda r: rank_of[r])
        fresh = [r for r in ranked if r not in search.verdicts and r not in taken][:k]
        fresh = fresh[: max(0, left - len(taken))]
        taken.update(fresh)
        planned[community] = fresh
    return planned


@register("lazy_global", settings=LazyGlobalSettings, opt_in=True, order=55)
class LazyGlobalSearch(Method):
    options: LazyGlobalSettings

    def unit_ranks(self, question: str) -> list[str]:
        vector = self.embedder.embed_one(question)
        return self.text_unit_ranking(vector, len(self.index.text_units))

    def hierarchy(self) -> tuple[dict[Any, list[str]], dict[int, list[int]], list[Any]]:
        """Return (community -> its text units, community -> its children, the roots); an
        index without communities makes each text unit a root of its own."""
        communities = self.index.communities
        units = list(self.stores.unit_text.index)
        if communities.empty:
            return {u: [u] for u in units}, {}, units
        numbers = [int(c) for c in communities[S.COMMUNITY]]
        kids = zip(numbers, communities[S.CHILDREN], strict=True)
        children = {c: [int(x) for x in below] for c, below in kids}
        roots = [int(c) for c in communities[communities[S.PARENT] < 0][S.COMMUNITY]]
        known = set(units)  # a unit the index does not hold is left out
        held = zip(numbers, communities[S.TEXT_UNIT_IDS], strict=True)
        return {c: [u for u in us if u in known] for c, us in held}, children, roots

    async def atest(self, question: str, unit: str) -> list[int]:
        """Return the numbers of the chunk's sentences the model finds relevant ([]: none)."""
        sentences = chunk_sentences(self.stores.unit_text[unit])
        reply = await self.llm.ajson(
            prompts.relevance_test(question, numbered(sentences)),
            prompts.relevance_schema(MAX_PICKS),
            name="relevance_test",
            max_tokens=RELEVANCE_MAX_TOKENS,
        )
        return sorted({n for n in reply["relevant"] if 1 <= n <= len(sentences)})

    async def atest_batch(self, question: str, units: list[str], search: Search) -> None:
        """Test ``units`` concurrently; a failed test is named and is not relevant."""
        replies = await gather_with_progress(
            (self.atest(question, u) for u in units), "relevance tests", disable=True
        )
        search.spent += len(units)
        for unit, reply in zip(units, replies, strict=True):
            if isinstance(reply, Exception):
                base.drop_step(f"relevance test of text unit {unit}", reply)
                reply = []
            search.verdicts[unit] = reply

    async def asearch(self, question: str, rank_of: dict[str, int]) -> Search:
        """Return the relevance tests' findings: best-first communities, level by level,
        deepening into the sub-communities of the relevant ones."""
        units_of, children, frontier = self.hierarchy()
        search = Search()
        k, budget = CHUNKS_PER_COMMUNITY, self.options.relevance_budget
        while frontier and search.spent < budget:
            queue = ranked_communities(frontier, units_of, rank_of, k)
            found, misses = [], 0
            while queue and misses < MISSES_BEFORE_DEEPENING and search.spent < budget:
                batch, queue = queue[:BATCH_SIZE], queue[BATCH_SIZE:]
                planned = planned_tests(batch, units_of, rank_of, search, k, budget)
                await self.atest_batch(question, [r for p in planned.values() for r in p], search)
                for community in batch:
                    # a community none of whose chunks is left untested: what its chunks got
                    read = planned[community] or units_of.get(community, [])
                    if any(search.verdicts.get(r) for r in read):
                        found.append(community)
                        misses = 0
                    else:
                        misses += 1
            search.relevant += found
            frontier = [c for f in found for c in children.get(f, [])]
        return search

    def claims(self, search: Search, rank_of: dict[str, int]) -> list[str]:
        """Return the relevant chunks grouped by community, in the order the communities
        were found, each community's nearest the question first."""
        units_of = self.hierarchy()[0]
        relevant = [r for r, picks in search.verdicts.items() if picks]
        grouped = [
            r
            for c in search.relevant
            for r in sorted(units_of.get(c, []), key=rank_of.__getitem__)
            if r in relevant
        ]
        return list(dict.fromkeys(grouped + relevant))

    def claim_items(self, units: list[str], search: Search, budget: int) -> list[ContextItem]:
        """Return the chunks' relevant sentences, each chunk widened to its whole text in order
        while the context still fits ``budget`` (the claims first, then their setting)."""
        text_of = self.stores.unit_text
        items = []
        for unit in units:
            sentences = chunk_sentences(text_of[unit])
            text = " ".join(sentences[n - 1] for n in search.verdicts[unit])
            items.append(ContextItem(f"text_unit:{unit}", text))
        items = fit_items(items, budget)
        for position, item in enumerate(items):
            whole = text_of[item.source.removeprefix("text_unit:")]
            wider = [*items[:position], ContextItem(item.source, whole)]
            if items_tokens(wider + items[position + 1 :]) <= budget:
                items[position] = wider[-1]
        return items

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        order = self.unit_ranks(question)
        rank_of = {row: rank for rank, row in enumerate(order)}
        search = await self.asearch(question, rank_of)
        rows = self.claims(search, rank_of)
        ranking = list(dict.fromkeys(rows + order))
        if not rows:
            tested = len(search.verdicts)
            base.note_failure(
                f"relevance tests: none of {tested} chunks tested was relevant; "
                "answered from the chunks nearest the question"
            )
            return self.chunk_retrieval(order, question)
        items = self.claim_items(rows, search, self.answer_budget(question))
        return Retrieval(items, self.text_unit_ids(ranking[: self.ranking_depth()]))

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost:
        """``relevance_budget`` tests of the index's mean chunk, for each of ``questions``."""
        chunk = [numbered(chunk_sentences(t)) for t in index.text_units[S.TEXT]]
        chunk_tokens = float(np.mean([tokens.count_tokens(c) for c in chunk])) if chunk else 0.0
        frames = [message_tokens(prompts.relevance_test(q, "")) for q in questions] or [0]
        prompt = float(np.mean(frames)) + chunk_tokens
        budget = settings.query.methods[cls.name].relevance_budget
        return float(budget), budget * prompt, float(budget * RELEVANCE_MAX_TOKENS)
