"""``method.answer(question) -> Answer``, the one interface of every retrieval method, and
what the methods share (an Answer's fields: docs/methods.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from graphrag import prompts
from graphrag.index.graph.resolve import Resolution
from graphrag.index.reports.lazy import aensure_reports, failed_reports
from graphrag.index.store import Index
from graphrag.llm.cache import CacheMissError
from graphrag.llm.client import ChatLLM, error_summary
from graphrag.llm.coroutines import TaskCollector, run_sync
from graphrag.llm.usage import Usage, track_usage
from graphrag.query.index_stores import IndexStores
from graphrag.query.loops import LOOP_FREQUENCY_PENALTY, answer_text
from graphrag.query.rankers import bm25_scores, hybrid_ranking, reciprocal_rank_fusion
from graphrag.settings import Settings
from graphrag.text import lang, tokens
from graphrag.text.embeddings import Embedder
from graphrag.text.tokens import message_tokens

Cost = tuple[float, float, float]  # (calls, prompt tokens, completion tokens) per answer


@dataclass
class ContextItem:
    """One piece of context given to the model, and the index row it came from."""

    source: str
    text: str


@dataclass
class Answer:
    question: str
    method: str
    text: str
    contexts: list[str]
    sources: list[str]
    cited: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    context_tokens: int = 0
    failures: list[str] = field(default_factory=list)  # what it lost: dropped steps, cut text
    ranking: list[str] = field(default_factory=list)
    route: str = ""  # the router's choice, "<question kind> -> <method>"; empty otherwise
    # what each number the prompt showed stood for; an [n] the answer cites outside it is invented
    numbered: dict[int, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# The losses of the answer being written (Answer.failures), collected across its tasks: a
# task copies the context, not the list, so every task of one answer appends to the same one.
_failures: TaskCollector[str] = TaskCollector("answer_failures")
collecting_failures = _failures.collecting  # for one answer: what note_failure names inside


def note_failure(text: str) -> None:
    """Name a loss of the answer being written (outside ``collecting_failures()``: nothing)."""
    _failures.add(text)


def drop_step(step: str, err: BaseException) -> None:
    """Name a failed step in ``Answer.failures`` and go on (a replay's cache miss ends it)."""
    if isinstance(err, CacheMissError):
        raise err
    note_failure(f"{step}: {error_summary(err)}")


# [1] or [2, 3], and as Chinese answers write them: 【1】, [2，3], 【2、3】
CITATION = re.compile(r"[\[【]([\d,，、\s]+)[\]】]")


def cited_numbers(text: str) -> list[int]:
    """Return the context numbers an answer cites as [1], [2, 3] or 【1】, in order of first use."""
    numbers = [int(n) for group in CITATION.findall(text) for n in re.findall(r"\d+", group)]
    return list(dict.fromkeys(numbers))


def number_items(items: list[ContextItem]) -> str:
    """Return the numbered context of an answer prompt (an item's own "[n]" and instructions
    neutralized, so it can neither fake a citation nor steer the answer)."""
    return "\n\n".join(
        f"[{i}] {prompts.fence_document(prompts.neutralize_citations(item.text))}"
        for i, item in enumerate(items, start=1)
    )


RANKING_DEPTH = 10  # text units kept in Answer.ranking, so recall@k can look past top_k
CHUNK_DEPTH = 60  # ranked chunks offered to a budget-filled context (more than any budget holds)


@dataclass
class Retrieval:
    """The context items for the prompt, and the ranked text units they were taken from."""

    items: list[ContextItem]
    ranking: list[str]
    # global search's reduce_seeds: the items of each order it drafts from (``items``: all)
    orders: list[list[ContextItem]] = field(default_factory=list)
    # the text-unit ids the chunk context was cut from, best first: what the rerank stage
    # (query/rerank.py) reorders; empty for a context that is not one chunk ranking
    candidates: list[str] = field(default_factory=list)


ITEM_OVERHEAD_TOKENS = 4  # the "[n] " label and the blank line between items


def items_tokens(items: list[ContextItem]) -> int:
    return sum(tokens.count_tokens(i.text) + ITEM_OVERHEAD_TOKENS for i in items)


def fit_items(items: list[ContextItem], budget: int) -> list[ContextItem]:
    """Return the items that fit ``budget`` tokens, in priority order (a smaller later one may
    still fit where one was skipped)."""
    kept = tokens.pack([i.text for i in items], budget, overhead=ITEM_OVERHEAD_TOKENS)
    return [items[i] for i in kept]


def auto_budget(window: int | None, answer_tokens: int, prompt_tokens: int, cap: int) -> int:
    """Return the context tokens the prompt and answer leave in ``window`` (unknown: ``cap``)."""
    return cap if window is None else max(0, min(cap, window - answer_tokens - prompt_tokens))


class Method:
    """Base of the retrieval methods: override aretrieve_ranked or aretrieve (docs/methods.md)."""

    name = "method"  # set by @register

    def __init__(
        self,
        index: Index,
        settings: Settings,
        llm: ChatLLM,
        embedder: Embedder,
        stores: IndexStores | None = None,
        options: Any = None,
    ) -> None:
        """``options``: the method's own settings instead of ``settings.query.methods[name]``."""
        self.index, self.settings, self.llm, self.embedder = index, settings, llm, embedder
        self.params = settings.query  # the shared query settings (top_k, budgets, …)
        self.options = options if options is not None else self.params.methods.get(self.name)
        self.stores = stores or IndexStores.of(index, settings.query)

    @cached_property
    def resolution(self) -> Resolution | None:
        return self.index.resolution() if self.params.entity_resolution else None

    @cached_property
    def graph_tables(self) -> tuple[Any, Any]:
        """(entities, relationships) a method walks: merged by entity resolution, or the index's."""
        if self.resolution is None:
            return self.index.entities, self.index.relationships
        return self.resolution.tables()

    def same_entities(self, entity_ids: set[str]) -> set[str]:
        return self.resolution.expand(entity_ids) if self.resolution else entity_ids

    def same_ids(self, entity_id: str) -> list[str]:
        return self.resolution.members(entity_id) if self.resolution else [entity_id]

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return (await self.aretrieve_ranked(question)).items

    async def aensure_reports(self, communities: Iterable[int] | None = None) -> None:
        """Have a lazy index write the reports of ``communities`` (None: all), failures named."""
        wanted = None if communities is None else list(communities)
        await aensure_reports(self.index, wanted, self.llm, self.embedder)
        for failure in failed_reports(self.index, wanted):
            note_failure(failure)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        """Return the context items and the ranked text units (by default: the items' own)."""
        items = await self.aretrieve(question)
        return Retrieval(items, [i.source for i in items if i.source.startswith("text_unit:")])

    async def agenerate(self, question: str, items: list[ContextItem], short_answer=False) -> str:
        style, language = self.params.answer_style, lang.detect(question)
        messages = prompts.answer(question, number_items(items), style, language)
        return await self.final_answer(messages, short_answer)

    async def awrite(self, question: str, retrieval: Retrieval, short_answer: bool) -> str:
        return await self.agenerate(question, retrieval.items, short_answer)

    async def final_answer(self, messages: list[dict[str, str]], short_answer: bool = False) -> str:
        """Return the answer to ``messages``, guarded against loops (query/loops.py)."""
        if short_answer:
            messages = prompts.with_final_answer_line(messages)
        cap = self.params.answer_max_tokens
        return await answer_text(self.llm, messages, cap, LOOP_FREQUENCY_PENALTY)

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        """Return the answer to ``question`` with its contexts, sources, cost and time;
        ``short_answer`` asks for a final "Answer: …" line (exact match, token F1)."""
        started = time.monotonic()
        with track_usage() as usage, collecting_failures() as failures:
            retrieval = await self.aretrieve_ranked(question)
            items = retrieval.items
            text = await self.awrite(question, retrieval, short_answer)
        cited = [items[n - 1].source for n in cited_numbers(text) if 0 < n <= len(items)]
        return Answer(
            question=question,
            method=self.name,
            text=text,
            contexts=[i.text for i in items],
            sources=[i.source for i in items],
            cited=list(dict.fromkeys(cited)),
            usage=usage,
            seconds=time.monotonic() - started,
            context_tokens=sum(tokens.count_tokens(i.text) for i in items),
            failures=list(dict.fromkeys(failures)),  # a report several steps read failed once
            ranking=retrieval.ranking,
            numbered={n: [item.source] for n, item in enumerate(items, start=1)},
        )

    def answer(self, question: str, short_answer: bool = False) -> Answer:
        return run_sync(self.aanswer(question, short_answer))

    @classmethod
    def planned_cost(cls, settings: Settings, index: Index, questions: list[str]) -> Cost | None:
        """Return the most the method spends per answer before its answer call, known from its
        settings (``eval --dry-run``); None: not known so."""
        return None

    # shared by the text-unit methods; a text unit is named by its id, never its row
    def text_unit_ranking(self, query_vector: np.ndarray, k: int) -> list[str]:
        return [unit for unit, _ in self.stores.text_units.top_k(query_vector, k)]

    def bm25_scores(self, query: str) -> np.ndarray:
        """Each text unit's BM25 score for ``query``'s words, in table order."""
        return bm25_scores(self.stores.bm25, len(self.index.text_units), query)

    def dense_scores(self, query_vector: np.ndarray) -> pd.Series:
        """Return each text unit's similarity to ``query_vector``, by id in table order."""
        return self.stores.text_units.scores(query_vector).reindex(self.stores.unit_text.index)

    def hybrid_ranking(self, query_vector: np.ndarray, query: str) -> tuple[list[str], pd.Series]:
        """Every text-unit id best first, and its score by id: dense fused with BM25's ranks."""
        ids = self.stores.unit_text.index
        dense = self.dense_scores(query_vector).to_numpy() if len(ids) else np.zeros(0)
        rows, scores = hybrid_ranking(dense, self.bm25_scores(query))
        return [ids[r] for r in rows], pd.Series(scores, index=ids)

    def first_stage_ranking(self, query_vector: np.ndarray, query: str, k: int) -> list[str]:
        """Return the ids of the ``k`` best text units by ``query.first_stage``."""
        if self.params.first_stage == "dense":
            return self.text_unit_ranking(query_vector, k)
        return self.hybrid_ranking(query_vector, query)[0][:k]

    def first_stage(self, query_vector: np.ndarray, query: str) -> tuple[list[str], pd.Series]:
        """Every text-unit id best first by ``query.first_stage``, and its score by id."""
        if not len(self.index.text_units):
            return [], pd.Series(dtype=np.float64)
        if self.params.first_stage == "dense":
            scores = self.dense_scores(query_vector)
            ranked = np.argsort(-scores.to_numpy(), kind="stable")
            return [scores.index[r] for r in ranked], scores
        return self.hybrid_ranking(query_vector, query)

    def order_text_units(self, ids: list[str], query_vector: np.ndarray, query: str) -> list[str]:
        if self.params.first_stage == "dense":
            return [u for u, _ in self.stores.text_units.top_k(query_vector, len(ids), ids)]
        position = {u: i for i, u in enumerate(self.hybrid_ranking(query_vector, query)[0])}
        return sorted(ids, key=position.__getitem__)

    def answer_budget(self, question: str) -> int:
        """The context tokens the window leaves, at most ``query.max_context_tokens``."""
        p = self.params
        plain = prompts.answer(question, "", p.answer_style, lang.detect(question))
        fixed = prompts.with_final_answer_line(plain)
        window = self.llm.context_limit()
        return auto_budget(window, p.answer_max_tokens, message_tokens(fixed), p.max_context_tokens)

    def chunk_context(self, ids: list[str], question: str) -> list[ContextItem]:
        """The ranked text units ``ids`` that fit :meth:`answer_budget` (or the first ``top_k``)."""
        if self.params.chunk_context == "top_k":
            return self.text_unit_items(ids[: self.params.top_k])
        return fit_items(self.text_unit_items(ids[:CHUNK_DEPTH]), self.answer_budget(question))

    def ranking_depth(self) -> int:
        top_k = self.params.chunk_context == "top_k"
        return max(self.params.top_k, RANKING_DEPTH) if top_k else RANKING_DEPTH

    def chunk_depth(self) -> int:
        """How deep a chunk ranking must go for :meth:`chunk_context` and recall@k."""
        return self.ranking_depth() if self.params.chunk_context == "top_k" else CHUNK_DEPTH

    def ranked_text_units(self, query_vector: np.ndarray, question: str) -> Retrieval:
        """The chunk context ranked by the first stage (``query_vector``; BM25 on ``question``)."""
        ids = self.first_stage_ranking(query_vector, question, self.chunk_depth())
        return self.chunk_retrieval(ids, question)

    def chunk_retrieval(self, ids: list[str], question: str) -> Retrieval:
        ranking = self.text_unit_ids(ids[: self.ranking_depth()])
        return Retrieval(self.chunk_context(ids, question), ranking, candidates=ids)

    def fused_retrieval(self, queries: list[str], question: str) -> Retrieval:
        """The chunk context of the ``queries``' first-stage rankings fused by reciprocal rank
        fusion (each query's own words are BM25's under "hybrid"), ranked deeper than kept."""
        vectors = self.embedder.embed(queries)
        top_k = self.params.chunk_context == "top_k"
        depth = self.params.top_k * 3 if top_k else self.chunk_depth()
        pairs = zip(vectors, queries, strict=True)
        fused = reciprocal_rank_fusion([self.first_stage_ranking(v, q, depth) for v, q in pairs])
        ranking = self.text_unit_ids(fused[:RANKING_DEPTH])
        return Retrieval(self.chunk_context(fused, question), ranking, candidates=fused)

    def text_unit_ids(self, ids: list[str]) -> list[str]:
        return [f"text_unit:{u}" for u in ids]

    def text_unit_items(self, ids: list[str]) -> list[ContextItem]:
        return [ContextItem(f"text_unit:{u}", self.stores.unit_text[u]) for u in ids]
