"""Local search (Microsoft GraphRAG's): entities near the question and their relationships, text
units and community reports; text units and reports get fixed shares, the graph the rest."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.communities import rolled_up_level
from graphrag.query.base import ContextItem, Method, Retrieval, fit_items, items_tokens
from graphrag.query.registry import register
from graphrag.settings import SettingsError

# Relationships to entities outside the selection, at most (docs/defaults-provenance.md).
MAX_RELATIONSHIPS = 20


@dataclass
class LocalSettings:
    """``[query.local]``: Microsoft GraphRAG's local search, with a small model's shares."""

    top_entities: int = 8
    """Entities picked by description similarity to the question."""
    context_tokens: int = 0
    """The context budget; 0: what the model's window leaves (Method.answer_budget)."""
    # Microsoft's: 0.5 (why 0.85, and the order: docs/defaults-provenance.md)
    text_unit_share: float = 0.85
    """Share of the budget the text units take (more if the graph items leave room)."""
    text_unit_order: Literal["question", "shared_mentions"] = "question"
    """Order of the entities' text units: "question" (nearest first) or "shared_mentions"."""
    community_share: float = 0.05
    """Share of the budget the community reports take (0.05: about one short report)."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        a, b = self.text_unit_share, self.community_share
        if min(a, b) < 0 or a + b > 1:
            raise SettingsError(
                f"settings {name}.text_unit_share ({a}) and {name}.community_share ({b}) must "
                "be shares of one budget: each at least 0, together at most 1"
            )


def selection_level(communities: pd.DataFrame, selected: set[str]) -> int:
    """Return the deepest (finest) level at which every clustered selected entity has a
    community; with none clustered, the top level."""
    levels_of: dict[str, set[int]] = {}
    for row in communities.itertuples(index=False):
        for entity in selected.intersection(getattr(row, S.ENTITY_IDS)):
            levels_of.setdefault(entity, set()).add(int(getattr(row, S.LEVEL)))
    top = int(communities[S.LEVEL].min()) if len(communities) else 0
    return max(set.intersection(*levels_of.values()), default=top) if levels_of else top


def ranked_relationships(relationships: pd.DataFrame, selected: set[str], cap: int) -> pd.DataFrame:
    """Return the selection's relationships as Microsoft GraphRAG ranks them: inside first, then
    ``cap`` to others by how many selected entities they link (a bridge first), weight, degree."""
    order = [S.WEIGHT, S.COMBINED_DEGREE, S.HUMAN_ID]
    ascending = [False, False, True]
    source_in = relationships[S.SOURCE_ID].isin(selected)
    target_in = relationships[S.TARGET_ID].isin(selected)
    inside = relationships[source_in & target_in].sort_values(order, ascending=ascending)
    outside = relationships[source_in ^ target_in]
    from_source = source_in[outside.index]
    other = outside[S.TARGET_ID].where(from_source, outside[S.SOURCE_ID])
    own = outside[S.SOURCE_ID].where(from_source, outside[S.TARGET_ID])
    outside = outside.assign(links=own.groupby(other).transform("nunique"))
    outside = outside.sort_values(["links", *order], ascending=[False, *ascending]).head(cap)
    return pd.concat([inside, outside.drop(columns="links")])


def units_by_shared_mentions(units_of: list[list[str]]) -> list[str]:
    """Return the units that most selected entities mention first (ties: best entity first)."""
    return [u for u, _ in Counter(u for units in units_of for u in units).most_common()]


@register("local", settings=LocalSettings, order=40)
class LocalSearch(Method):
    options: LocalSettings

    def context_budget(self, question: str) -> int:
        if self.options.context_tokens > 0:
            return self.options.context_tokens
        return self.answer_budget(question)

    def select_entities(self, question: str) -> list[str]:
        vector = self.embedder.embed_one(question)
        return [e for e, _ in self.stores.entities.top_k(vector, self.options.top_entities)]

    def entity_items(self, ids: list[str]) -> list[ContextItem]:
        entities = self.index.entities.set_index(S.ID, drop=False)
        return [
            ContextItem(f"entity:{e[S.ID]}", f"{e[S.TITLE]} ({e[S.TYPE]}): {e[S.DESCRIPTION]}")
            for _, e in entities.loc[ids].iterrows()
        ]

    def relationship_items(self, selected: set[str]) -> list[ContextItem]:
        rel = self.index.relationships
        ranked = ranked_relationships(rel, self.same_entities(selected), MAX_RELATIONSHIPS)
        items = []
        for _, r in ranked.iterrows():
            text = f"{r[S.SOURCE_ENTITY]} -> {r[S.TARGET_ENTITY]}: {r[S.DESCRIPTION]}"
            items.append(ContextItem(f"relationship:{r[S.ID]}", text))
        return items

    def text_unit_items_for(self, selected: list[str], question: str) -> list[ContextItem]:
        """The selected entities' text units: by shared mentions, or the first stage's order."""
        entities, text_of = self.index.entities, self.stores.unit_text
        units = dict(zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True))
        units_of = [[u for e in self.same_ids(entity) for u in units[e]] for entity in selected]
        if self.options.text_unit_order == "shared_mentions":
            order = units_by_shared_mentions(units_of)
        else:
            candidates = dict.fromkeys(u for units in units_of for u in units)
            known = [u for u in candidates if u in text_of.index]
            order = self.order_text_units(known, self.embedder.embed_one(question), question)
        return [ContextItem(f"text_unit:{u}", text_of[u]) for u in order if u in text_of.index]

    def report_hits(self, selected: set[str]) -> dict[int, int]:
        """Return {community: selected entities in it} at ``selection_level``, rolled up."""
        communities, selected = self.index.communities, self.same_entities(selected)
        readable = rolled_up_level(communities, selection_level(communities, selected))
        hits = {
            int(getattr(row, S.COMMUNITY)): len(selected.intersection(getattr(row, S.ENTITY_IDS)))
            for row in readable.itertuples(index=False)
        }
        return {c: n for c, n in hits.items() if n}

    def report_items(self, selected: set[str]) -> list[ContextItem]:
        reports = self.index.community_reports.set_index(S.COMMUNITY)
        scored = []
        for community, hits in self.report_hits(selected).items():
            if community in reports.index:
                scored.append((-hits, -float(reports.loc[community, S.RANK]), community))
        return [
            ContextItem(f"report:{c}", reports.loc[c, S.FULL_CONTENT]) for _, _, c in sorted(scored)
        ]

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        """Return the context, and as ranking every text unit of the selected entities."""
        ids = self.select_entities(question)
        selected = set(ids)
        budget = self.context_budget(question)
        unit_budget = int(budget * self.options.text_unit_share)
        report_budget = int(budget * self.options.community_share)
        graph_budget = budget - unit_budget - report_budget
        entities = fit_items(self.entity_items(ids), graph_budget)
        left = graph_budget - items_tokens(entities)
        relationships = fit_items(self.relationship_items(selected), left)
        await self.aensure_reports(self.report_hits(selected))
        reports = fit_items(self.report_items(selected), report_budget)
        # Text units take their share plus whatever the other kinds left unused.
        spare = budget - items_tokens(entities) - items_tokens(relationships)
        ranked_units = self.text_unit_items_for(ids, question)
        units = fit_items(ranked_units, spare - items_tokens(reports))
        items = entities + relationships + reports + units
        return Retrieval(items, [u.source for u in ranked_units])
