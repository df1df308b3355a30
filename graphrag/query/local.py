"""Local search: entities near the question, and what the graph holds around them.

The question's embedding picks the top entities by description similarity. Around them come
their relationships (those between two selected entities first, then by weight and degree),
the text units they were extracted from (those mentioning most selected entities first) and
the community reports they belong to (those holding most selected entities first, then by
rating). Each kind gets a fixed share of ``query.local_context_tokens``.
"""

from __future__ import annotations

from collections import Counter

from graphrag.embeddings import cosine_top_k
from graphrag.index import schemas as S
from graphrag.query.base import ContextItem, Method, Retrieval, fit_items, items_tokens


class LocalSearch(Method):
    name = "local"

    def select_entities(self, question: str) -> list[int]:
        vector = self.embedder.embed_one(question)
        ranked = cosine_top_k(vector, self.vectors.entities, self.params.local_top_entities)
        return [row for row, _ in ranked]

    def entity_items(self, rows: list[int]) -> list[ContextItem]:
        entities = self.index.entities
        return [
            ContextItem(
                f"entity:{entities[S.ID].iloc[r]}",
                f"{entities[S.TITLE].iloc[r]} ({entities[S.TYPE].iloc[r]}): "
                f"{entities[S.DESCRIPTION].iloc[r]}",
            )
            for r in rows
        ]

    def relationship_items(self, selected: set[str]) -> list[ContextItem]:
        rel = self.index.relationships
        touching = rel[rel[S.SOURCE_ID].isin(selected) | rel[S.TARGET_ID].isin(selected)].copy()
        touching["inside"] = touching[S.SOURCE_ID].isin(selected) & touching[S.TARGET_ID].isin(
            selected
        )
        touching = touching.sort_values(
            ["inside", S.WEIGHT, S.COMBINED_DEGREE, S.HUMAN_ID],
            ascending=[False, False, False, True],
        )
        return [
            ContextItem(
                f"relationship:{r[S.ID]}",
                f"{r[S.SOURCE_ENTITY]} -> {r[S.TARGET_ENTITY]}: {r[S.DESCRIPTION]}",
            )
            for _, r in touching.iterrows()
        ]

    def text_unit_items_for(self, selected_rows: list[int]) -> list[ContextItem]:
        entities = self.index.entities
        mentions: Counter[str] = Counter()
        first_seen: dict[str, int] = {}
        for rank, row in enumerate(selected_rows):
            for unit in entities[S.TEXT_UNIT_IDS].iloc[row]:
                mentions[unit] += 1
                first_seen.setdefault(unit, rank)
        order = sorted(mentions, key=lambda u: (-mentions[u], first_seen[u]))
        text_of = dict(zip(self.index.text_units[S.ID], self.index.text_units[S.TEXT], strict=True))
        return [ContextItem(f"text_unit:{u}", text_of[u]) for u in order if u in text_of]

    def report_items(self, selected: set[str]) -> list[ContextItem]:
        communities = self.index.communities
        reports = self.index.community_reports.set_index(S.COMMUNITY)
        scored = []
        for row in communities.itertuples(index=False):
            community = int(getattr(row, S.COMMUNITY))
            hits = len(selected.intersection(getattr(row, S.ENTITY_IDS)))
            if hits and community in reports.index:
                scored.append((-hits, -float(reports.loc[community, S.RANK]), community))
        return [
            ContextItem(f"report:{c}", reports.loc[c, S.FULL_CONTENT]) for _, _, c in sorted(scored)
        ]

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return (await self.aretrieve_ranked(question)).items

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        """Return the context, and as ranking every text unit of the selected entities."""
        rows = self.select_entities(question)
        selected = {self.index.entities[S.ID].iloc[r] for r in rows}
        budget = self.params.local_context_tokens
        unit_budget = int(budget * self.params.local_text_unit_share)
        report_budget = int(budget * self.params.local_community_share)
        graph_budget = budget - unit_budget - report_budget
        entities = fit_items(self.entity_items(rows), graph_budget // 2)
        relationships = fit_items(
            self.relationship_items(selected), graph_budget - items_tokens(entities)
        )
        reports = fit_items(self.report_items(selected), report_budget)
        # Text units take their share plus whatever the other kinds left unused.
        spare = budget - items_tokens(entities) - items_tokens(relationships)
        ranked_units = self.text_unit_items_for(rows)
        units = fit_items(ranked_units, spare - items_tokens(reports))
        return Retrieval(
            entities + relationships + reports + units, [u.source for u in ranked_units]
        )
