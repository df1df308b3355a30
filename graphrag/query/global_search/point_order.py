"""The orders in which global search's reduce reads the map's points.

A point is (score, text, communities it came from). The map returns them batch by batch;
the reduce reads them best score first, and the 1.5B map scores nearly every pick 100, so
among equal scores the order is the batches' order, which the report shuffle sets
(``query.global_shuffle_seed``). These functions rank the same picks under another shuffle
seed without asking the map again (``query.global_reduce_seeds``) and in the README's other
orders (``query.global_point_order``).
"""

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
    """Return the positions 0..count-1 in the order the report shuffle under ``seed`` puts
    them (``map_context.report_batches`` packs the reports in this order)."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def batch_ranks(reports: pd.DataFrame, batches: list[pd.DataFrame], seed: int) -> list[int]:
    """Return each batch's place when ``reports`` (the rows the batches were packed from)
    are shuffled under ``seed``: the place of its earliest report. Under the seed the batches
    were packed with, this is their own order; under another, with one report a batch, it is
    the order the map's batches would have come in had that seed packed them."""
    place = {
        int(reports[S.COMMUNITY].iloc[row]): p for p, row in enumerate(shuffled(len(reports), seed))
    }
    return [min(place[int(c)] for c in batch[S.COMMUNITY]) for batch in batches]


def ranked(picks: list[Pick], ranks: list[int]) -> list[Pick]:
    """Return ``picks`` best score first, equal scores by their batch's rank, and a batch's
    picks in the order the map gave them (a stable sort of the batch-ordered picks)."""
    order = sorted(range(len(picks)), key=lambda i: (-picks[i].score, ranks[picks[i].batch], i))
    return [picks[i] for i in order]


def cited_sentences(picks: list[Pick]) -> list[Point]:
    """Return the extractive map's ranked picks as points: each sentence once, at its first
    (best) place, with its report's citation; a parent report repeats its child's
    sentences."""
    seen: set[str] = set()
    points = []
    for pick in picks:
        if pick.text.casefold() not in seen:
            seen.add(pick.text.casefold())
            community = pick.communities[0]
            points.append((pick.score, f"{pick.text} [{community}]", [community]))
    return points


def by_report_in_turn(points: list[Point]) -> list[Point]:
    """Return ``points`` by score, points of equal score one report at a time in turn: the
    first point of each report (reports in the order their first point came), then each
    one's second, and so on; a report's points keep their order.

    Why the option: the 1.5B map scores nearly every pick 100, so score order is report
    order, and the reduce's first items come from two or three reports
    (benchmarks/global_funnel.py: the first 8 of about 31 items held 0.241 of the 18
    thematic questions' keywords; in turn, 0.574). Why not the default: recorded on those
    questions, the answers hit fewer keywords (0.389 against 0.519) and the pairwise
    judgment against naive RAG stayed a tie (README).
    """
    order: dict[int, list[int]] = {}
    for position, point in enumerate(points):
        order.setdefault(point[0], []).append(position)
    ranked_positions: list[int] = []
    for score in sorted(order, reverse=True):
        queues: dict[tuple[int, ...], list[int]] = {}
        for position in order[score]:
            queues.setdefault(tuple(points[position][2]), []).append(position)
        lists = list(queues.values())
        while any(lists):
            ranked_positions += [queue.pop(0) for queue in lists if queue]
    return [points[p] for p in ranked_positions]


def by_question(points: list[Point], similarity: dict[int, float]) -> list[Point]:
    """Return ``points`` by score, equal scores by ``similarity`` (position -> similarity of
    the point to the question), nearest first.

    Why the option: Microsoft GraphRAG orders by score alone, but the 1.5B map scores nearly
    every point it picks 100, so score order is report order, and the reduce, which reads the
    first points first (and only what fits ``global_reduce_tokens``), listed the festival's
    funding and the mayor's title in answer to a question on natural habitats. Why not the
    default: on the 18 thematic questions its answers read more on topic but scored no
    better, in keyword hit or in the pairwise judgment against naive RAG
    (benchmarks/global_map.py prints its arm).
    """
    order = sorted(range(len(points)), key=lambda i: (-points[i][0], -similarity[i]))
    return [points[i] for i in order]
