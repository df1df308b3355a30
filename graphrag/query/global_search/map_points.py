"""The map's points and the orders the reduce reads them in: a 1.5B map scores nearly every pick
100, so batch order decides; another shuffle seed reorders them with no new map call."""

from __future__ import annotations

import random
from typing import NamedTuple

import pandas as pd

from graphrag import schemas as S

Point = tuple[int, str, list[int]]


class Pick(NamedTuple):
    """One point as the map returned it, with the position of its batch."""

    score: int
    text: str
    communities: list[int]
    batch: int


def shuffled(count: int, seed: int) -> list[int]:
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def batch_ranks(reports: pd.DataFrame, batches: list[pd.DataFrame], seed: int) -> list[int]:
    """Return each batch's place (that of its earliest report) when ``reports``, the rows the
    batches were packed from, are shuffled under ``seed``."""
    place = {
        int(reports[S.COMMUNITY].iloc[row]): p for p, row in enumerate(shuffled(len(reports), seed))
    }
    return [min(place[int(c)] for c in batch[S.COMMUNITY]) for batch in batches]


def ranked(picks: list[Pick], ranks: list[int]) -> list[Pick]:
    """Return ``picks`` best score first, then by their batch's rank, then as the map gave them."""
    order = sorted(range(len(picks)), key=lambda i: (-picks[i].score, ranks[picks[i].batch], i))
    return [picks[i] for i in order]


def cited_sentences(picks: list[Pick]) -> list[Point]:
    """Return the extractive map's ranked picks as points: each sentence once (a parent report
    repeats its child's), at its best place, with its report's citation."""
    seen: set[str] = set()
    points = []
    for pick in picks:
        if pick.text.casefold() not in seen:
            seen.add(pick.text.casefold())
            community = pick.communities[0]
            points.append((pick.score, f"{pick.text} [{community}]", [community]))
    return points
