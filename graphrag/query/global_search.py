"""Global search: map-reduce over the community reports of one level.

Map: the reports, shuffled with a fixed seed and packed into batches that fit
``query.global_batch_tokens``, each give JSON points with a 0-100 helpfulness score
(concurrently). Points scored 0 are dropped. Reduce: the best points that fit
``query.global_reduce_tokens`` become the final answer. When no point survives, the answer
says so without a reduce call rather than inventing one.

``contexts`` are the points given to the reduce step (what the final answer was written
from); ``sources`` are the reports of the batches those points came from.
"""

from __future__ import annotations

import random

import pandas as pd

from graphrag import prompts, tokens
from graphrag.index import schemas as S
from graphrag.llm import gather_with_progress
from graphrag.query.base import Answer, ContextItem, Method, cited_numbers, fit_items


def report_batches(reports: pd.DataFrame, budget: int, seed: int) -> list[pd.DataFrame]:
    """Return the reports shuffled (fixed seed) and packed into batches within ``budget``."""
    order = list(range(len(reports)))
    random.Random(seed).shuffle(order)
    batches: list[list[int]] = [[]]
    used = 0
    for i in order:
        cost = tokens.count_tokens(reports[S.FULL_CONTENT].iloc[i]) + 6
        if batches[-1] and used + cost > budget:
            batches.append([])
            used = 0
        batches[-1].append(i)
        used += cost
    return [reports.iloc[b] for b in batches if b]


def _batch_text(batch: pd.DataFrame, budget: int) -> str:
    # A single report larger than the batch budget is cut rather than skipped.
    return "\n\n".join(
        f"[{int(r[S.COMMUNITY])}] "
        f"{prompts.neutralize_citations(tokens.truncate(r[S.FULL_CONTENT], budget))}"
        for _, r in batch.iterrows()
    )


class GlobalSearch(Method):
    name = "global"

    def level_reports(self) -> pd.DataFrame:
        reports = self.index.community_reports
        level = self.query.global_level
        chosen = reports[reports[S.LEVEL] == level]
        if chosen.empty:
            # A small graph may have no community at the asked level: use the deepest there is.
            chosen = reports[reports[S.LEVEL] == reports[S.LEVEL].max()] if len(reports) else chosen
        return chosen.sort_values(S.COMMUNITY).reset_index(drop=True)

    async def amap(self, question: str) -> list[tuple[int, str, list[int]]]:
        """Return (score, point, communities of its batch) for every nonzero point."""
        batches = report_batches(
            self.level_reports(), self.query.global_batch_tokens, self.settings.llm.seed
        )
        schema = prompts.map_points_schema(self.query.global_map_max_points)
        results = await gather_with_progress(
            (
                self.llm.ajson(
                    prompts.global_map(question, _batch_text(b, self.query.global_batch_tokens)),
                    schema,
                    name="map_points",
                )
                for b in batches
            ),
            "global map",
            disable=True,
        )
        points = []
        for batch, result in zip(batches, results, strict=True):
            if isinstance(result, Exception):
                raise result
            communities = [int(c) for c in batch[S.COMMUNITY]]
            points += [
                (p["score"], p["description"].strip(), communities)
                for p in result["points"]
                if p["score"] > 0 and p["description"].strip()
            ]
        return sorted(points, key=lambda p: -p[0])

    async def aretrieve(self, question: str) -> list[ContextItem]:
        points = await self.amap(question)
        items = [
            ContextItem(
                ",".join(f"report:{c}" for c in communities), f"(importance {score}) {text}"
            )
            for score, text, communities in points
        ]
        return fit_items(items, self.query.global_reduce_tokens)

    async def agenerate(self, question: str, items: list[ContextItem]) -> str:
        if not items:
            return prompts.NO_RELEVANT_REPORTS
        points = "\n".join(f"- {item.text}" for item in items)
        completion = await self.llm.achat(
            prompts.global_reduce(question, points), max_tokens=self.query.answer_max_tokens
        )
        return completion.text.strip()

    async def aanswer(self, question: str) -> Answer:
        answer = await super().aanswer(question)
        # One item stands for a batch of reports: list each report once, as its own source.
        answer.sources = list(dict.fromkeys(s for item in answer.sources for s in item.split(",")))
        # The reduce step cites community numbers, not item numbers.
        known = {f"report:{c}" for c in self.index.community_reports[S.COMMUNITY]}
        answer.cited = [f"report:{n}" for n in cited_numbers(answer.text) if f"report:{n}" in known]
        return answer
