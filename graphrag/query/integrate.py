"""Integration ("RAG vs. GraphRAG", arXiv 2502.11371): naive RAG's and a graph method's contexts
interleaved by rank in naive RAG's budget, so it compares at equal context (docs/methods.md)."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import zip_longest
from typing import TypeVar

from graphrag.query import registry
from graphrag.query.base import Method, Retrieval, fit_items
from graphrag.settings import SettingsError

T = TypeVar("T", bound=Hashable)

# methods whose context is not one retrieval: their own map-reduce or follow-up steps write it
# (global, drift), a route may lead to them (router), or it is this method's own
NOT_INTEGRABLE = ("integrate", "global", "drift", "router")


def interleave(rankings: Sequence[Sequence[T]]) -> list[T]:
    """Return the items of ``rankings`` by rank: the first of each ranking, then the second of
    each, …; an item already taken is not taken again."""
    taken: dict[T, None] = {}
    for tier in zip_longest(*rankings):
        taken.update((item, None) for item in tier if item is not None and item not in taken)
    return list(taken)


@dataclass
class IntegrateSettings:
    """``[query.integrate]``: naive RAG's and a graph method's contexts in one budget."""

    # Han et al.'s strongest GraphRAG on multi-hop QA, Community-GraphRAG (Local)
    graph_method: str = "local"
    """The graph method interleaved with naive RAG (e.g. "local" or "ppr"; not global or drift)."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        method = self.graph_method
        if method in NOT_INTEGRABLE or (methods and method not in methods):
            known = ", ".join(m for m in methods if m not in NOT_INTEGRABLE)
            raise SettingsError(
                f"setting {name}.graph_method={method!r}: not a method whose context can be "
                f"interleaved with naive RAG's; choose one of {known}"
            )


@registry.register("integrate", settings=IntegrateSettings, opt_in=True, order=92)
class Integrate(Method):
    options: IntegrateSettings

    @cached_property
    def graph(self) -> Method:
        self.options.validate("query.integrate", list(registry.ALL_METHODS))
        wiring = (self.index, self.settings, self.llm, self.embedder, self.stores)
        return registry.ALL_METHODS[self.options.graph_method](*wiring)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        vector = self.embedder.embed_one(question)
        rows = self.first_stage_ranking(vector, question, self.chunk_depth())
        naive = self.text_unit_items(rows)
        graph = await self.graph.aretrieve_ranked(question)
        item_of = {i.source: i for i in [*graph.items, *naive]}
        order = interleave([[i.source for i in naive], [i.source for i in graph.items]])
        items = fit_items([item_of[s] for s in order], self.answer_budget(question))
        ranking = interleave([self.text_unit_ids(rows), graph.ranking])
        return Retrieval(items, ranking[: self.ranking_depth()])
