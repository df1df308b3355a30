"""Which community reports global search's map reads: a whole-graph level, given by
``query.global.level`` or chosen by the data (``auto_level``)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from graphrag import schemas as S
from graphrag.index.graph.communities import rolled_up_level
from graphrag.query.global_search.map_context import REPORT_OVERHEAD_TOKENS, report_batches
from graphrag.text import tokens


def level_view(reports: pd.DataFrame, communities: pd.DataFrame, level: int) -> pd.DataFrame:
    view = rolled_up_level(communities, level)
    return reports[reports[S.COMMUNITY].isin(view[S.COMMUNITY])]


def by_community(reports: pd.DataFrame) -> pd.DataFrame:
    return reports.sort_values(S.COMMUNITY).reset_index(drop=True)


def auto_level(
    reports: pd.DataFrame,
    communities: pd.DataFrame,
    batch_tokens: int,
    max_batches: int,
    seed: int,
    closest: Callable[[list[str]], list[str]],
) -> pd.DataFrame:
    """Return the reports of the deepest whole-graph level that fits ``max_batches`` batches, or of
    the root's those ``closest`` ranks first that fit."""
    levels = sorted(communities[S.LEVEL].unique(), reverse=True)
    for level in levels:
        chosen = by_community(level_view(reports, communities, int(level)))
        if len(report_batches(chosen, batch_tokens, seed)) <= max_batches:
            return chosen
    chosen = level_view(reports, communities, int(levels[-1])) if levels else reports
    ids = pd.Series([f"report:{int(c)}" for c in reports[S.COMMUNITY]], index=reports.index)
    text_of = dict(zip(ids, reports[S.FULL_CONTENT], strict=True))
    ranked = closest(list(ids[reports[S.COMMUNITY].isin(chosen[S.COMMUNITY])]))
    texts = [text_of[report] for report in ranked]
    kept = tokens.pack(texts, batch_tokens * max_batches, overhead=REPORT_OVERHEAD_TOKENS)
    return by_community(reports[ids.isin([ranked[k] for k in kept])])
