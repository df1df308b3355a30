"""Which community reports global search's map reads.

A whole-graph level (each entity's deepest community at or above it, ``rolled_up_level``),
given by ``query.global_level`` or chosen by the data (``auto_level``), less the reports
ranked below ``global_min_rank``; or, with ``global_dynamic_selection``, Microsoft
GraphRAG's dynamic community selection (``top_down``). Plain functions over the index's
tables: ``GlobalSearch`` passes in what needs the model (ratings, lazily written reports).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

import numpy as np
import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.graph.communities import rolled_up_level
from graphrag.llm.client import grade_request
from graphrag.llm.coroutines import gather_with_progress
from graphrag.query.global_search.map_context import REPORT_OVERHEAD_TOKENS, report_batches
from graphrag.text import tokens


def relevance_request(question: str, report: str) -> dict:
    """Return the chat request that rates one report (``ChatLLM.achat``'s arguments)."""
    return grade_request(prompts.rate_relevance(question, report))


def level_view(reports: pd.DataFrame, communities: pd.DataFrame, level: int) -> pd.DataFrame:
    """Return the reports of the whole-graph view of ``level`` (``rolled_up_level``)."""
    view = rolled_up_level(communities, level)
    return reports[reports[S.COMMUNITY].isin(view[S.COMMUNITY])]


def ranked_enough(reports: pd.DataFrame, min_rank: float) -> pd.DataFrame:
    """Return the reports ranked at least ``min_rank``, by community number."""
    if min_rank > 0:
        reports = reports[reports[S.RANK] >= min_rank]
    return reports.sort_values(S.COMMUNITY).reset_index(drop=True)


def auto_level(
    reports: pd.DataFrame,
    communities: pd.DataFrame,
    min_rank: float,
    batch_tokens: int,
    max_batches: int,
    seed: int,
    closest: Callable[[list[int]], list[int]],
) -> pd.DataFrame:
    """Return the reports of the level the data chooses (``global_level = -1``), those
    ranked at least ``min_rank``, by community number (as ``ranked_enough`` returns them).

    The deepest whole-graph level whose reports (those ``min_rank`` keeps) the map packs
    into at most ``max_batches`` batches of ``batch_tokens``: the most detail the map budget
    can read. When even the root level does not fit (a corpus of many unrelated topics, e.g.
    a multi-hop benchmark's paragraphs), the root level's reports closest to the question
    (``closest`` ranks rows of ``reports`` by embedding similarity), as many as fit in that
    budget: a cheaper map than Microsoft's, which reads every report.
    """
    levels = sorted(communities[S.LEVEL].unique(), reverse=True)
    for level in levels:
        chosen = ranked_enough(level_view(reports, communities, int(level)), min_rank)
        if len(report_batches(chosen, batch_tokens, seed)) <= max_batches:
            return chosen
    chosen = level_view(reports, communities, int(levels[-1])) if levels else reports
    rows = [int(i) for i in np.flatnonzero(reports[S.COMMUNITY].isin(chosen[S.COMMUNITY]))]
    ranked = closest(rows)
    texts = [reports[S.FULL_CONTENT].iloc[row] for row in ranked]
    kept = tokens.pack(texts, batch_tokens * max_batches, overhead=REPORT_OVERHEAD_TOKENS)
    return ranked_enough(reports.iloc[[ranked[k] for k in kept]], min_rank)


async def top_down(
    communities: pd.DataFrame,
    report_texts: Callable[[Iterable[int]], Awaitable[dict[int, str]]],
    rate: Callable[[str], Awaitable[float]],
    threshold: float,
    max_ratings: int,
    drop: Callable[[str, BaseException], None],
) -> set[int]:
    """Return the communities found relevant top-down from the roots.

    Microsoft GraphRAG's dynamic community selection: rate the root reports; a report rated
    at least ``threshold`` is kept and its children are rated next (a relevant child
    replaces its parent); an irrelevant report's subtree is never read. At most
    ``max_ratings`` rating calls; a failed rating counts as irrelevant and goes to ``drop``.
    """
    communities = communities.set_index(S.COMMUNITY)
    roots = communities.index[communities[S.LEVEL] == communities[S.LEVEL].min()]
    text_of = await report_texts(roots)
    queue = sorted(int(c) for c in roots if c in text_of)
    budget = max_ratings
    relevant: set[int] = set()
    while queue and budget > 0:
        queue, budget = queue[:budget], budget - min(len(queue), budget)
        ratings = await gather_with_progress(
            (rate(text_of[c]) for c in queue), "rate reports", disable=True
        )
        rated = []
        for community, rating in zip(queue, ratings, strict=True):
            if isinstance(rating, Exception):
                drop(f"rating of report {community}", rating)
            elif rating >= threshold:
                rated.append((rating, community))
        following = []
        for _, community in sorted(rated, key=lambda r: -r[0]):
            relevant.add(community)
            relevant.discard(int(communities.loc[community, S.PARENT]))
            following += [int(c) for c in communities.loc[community, S.CHILDREN]]
        if budget > 0:
            text_of = await report_texts(following)
        queue = [c for c in following if c in text_of]
    return relevant
