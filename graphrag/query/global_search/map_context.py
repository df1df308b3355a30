"""What global search's map reads and how its points are read back, no LLM call (search.py
holds the calls): which reports (a whole-graph level, or ``auto_level``), their batches and
sentences, and the orders the reduce reads the points in (a 1.5B map scores nearly every pick
100, so batch order decides; another shuffle seed reorders them with no new map call)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import NamedTuple

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.graph.communities import rolled_up_level
from graphrag.query.base import CITATION
from graphrag.text import tokens

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


REPORT_OVERHEAD_TOKENS = 6  # a report's "[n] " label and the blank line between reports


def report_batches(
    reports: pd.DataFrame, budget: int, seed: int, per_call: int = 0
) -> list[pd.DataFrame]:
    """Return the reports shuffled under ``seed``, packed into batches within ``budget``
    tokens and, when ``per_call`` > 0, of at most that many reports."""
    order = shuffled(len(reports), seed)
    texts = [reports[S.FULL_CONTENT].iloc[i] for i in order]
    groups = tokens.batches(texts, budget, REPORT_OVERHEAD_TOKENS, max_items=per_call)
    return [reports.iloc[[order[p] for p in group]] for group in groups]


def usable_picks(reply: dict, count: int) -> list[dict]:
    """Return the picks of an extractive map reply scored above 0 that number a sentence."""
    return [p for p in reply["sentences"] if p["score"] > 0 and 1 <= p["n"] <= count]


def batch_text(batch: pd.DataFrame, budget: int) -> str:
    # each report with its rank (as Microsoft's); one larger than the budget is cut
    return "\n\n".join(
        f"[{int(r[S.COMMUNITY])}] (rank {float(r[S.RANK]):g}) "
        + prompts.neutralize_citations(tokens.truncate(r[S.FULL_CONTENT], budget))
        for _, r in batch.iterrows()
    )


_WORD = re.compile(r"[^\W_]+")


def _content_stems(text: str) -> set[str]:
    """Return the words of four or more letters, and every number, cut to six characters: a
    crude stem ("changed" meets "change") that needs no language data."""
    return {
        w[:6] for w in _WORD.findall(text.casefold()) if len(w) > 3 or any(c.isdigit() for c in w)
    }


def restates_question(point: str, question: str) -> bool:
    """Whether every content word of ``point`` (citations aside) is already in ``question``.
    A 1.5B map scores such echoes high, and its reduce builds a generic answer on them."""
    words = _content_stems(CITATION.sub(" ", point))
    return bool(words) and words <= _content_stems(question)


SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_LABEL_WORDS = 8  # "Storm Corvin: ..." labels a list item; a longer head is a sentence
_TEMPLATE_COUNTS = re.compile(r"^\d+ entities \(")  # a template report's head: counts only


def report_sentences(text: str) -> list[str]:
    """Return a report's distinct sentences of four or more words (no headings, labels or counts
    line); an item labelled by a short name ("Storm Corvin: ...") keeps the name."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = line.strip().removeprefix("- ").replace(".: ", ". ")
        if not line or line.startswith("#") or _TEMPLATE_COUNTS.match(line):
            continue
        label, _, rest = line.partition(": ")
        labelled = bool(rest) and len(label.split()) <= _LABEL_WORDS
        prefix = f"{label}: " if labelled else ""
        for part in SENTENCE_END.split(rest if labelled else line):
            sentence = prefix + part.strip()
            if len(part.split()) >= 4 and sentence not in sentences:
                sentences.append(sentence)
    return sentences


def numbered_sentences(batch: pd.DataFrame, budget: int) -> tuple[str, list[tuple[int, str]]]:
    """Return the extractive map's text for ``batch``, its sentences numbered across the batch
    within ``budget`` tokens, and (community, sentence) per number."""
    lines: list[str] = []
    numbered: list[tuple[int, str]] = []
    used = 0
    for _, report in batch.iterrows():
        community = int(report[S.COMMUNITY])
        title = prompts.neutralize_citations(str(report[S.TITLE]))
        rank = f" (rank {float(report[S.RANK]):g})"
        lines.append(f"Report [{community}]{rank}: {title}")
        used += tokens.count_tokens(lines[-1])
        for sentence in report_sentences(report[S.FULL_CONTENT]):
            line = f"({len(numbered) + 1}) {prompts.neutralize_citations(sentence)}"
            used += tokens.count_tokens(line) + 1
            if used > budget:
                break
            lines.append(line)
            numbered.append((community, sentence))
    return "\n".join(lines), numbered


def facts_block(facts: list[tuple[str, str]], text: str, budget: int) -> str:
    """Return "\n\nFacts:" and the "- label: fact" lines that fit ``budget`` (each cut to half
    of it), but those ``text`` already quotes; "" when none fits."""
    lines = []
    for label, fact in facts:
        fact = " ".join(str(fact).split())
        if fact and fact[:60] not in text:
            lines.append(f"- {label}: {tokens.truncate(fact, budget // 2)}")
    kept = tokens.pack(lines, budget, overhead=1)
    return "\n\nFacts:\n" + "\n".join(lines[k] for k in kept) if kept else ""


def with_facts(
    reports: pd.DataFrame, communities: pd.DataFrame, entities: pd.DataFrame, entity_budget: int
) -> pd.DataFrame:
    """Return ``reports``, each LLM-written one followed by its community's entity descriptions
    within ``entity_budget`` tokens, most connected first (a template lists its entities
    already)."""
    if entity_budget <= 0 or reports.empty:
        return reports
    by_id = communities.set_index(S.COMMUNITY)
    entities = entities.set_index(S.ID)
    texts = []
    for _, report in reports.iterrows():
        text = report[S.FULL_CONTENT]
        if report[S.CONTEXT_SOURCE] != "template":
            ids = by_id.loc[int(report[S.COMMUNITY]), S.ENTITY_IDS]
            ranked = entities.loc[[i for i in ids if i in entities.index]]
            ranked = ranked.sort_values(S.DEGREE, ascending=False, kind="stable")
            facts = dict(zip(ranked[S.TITLE], ranked[S.DESCRIPTION], strict=True))
            text += facts_block(list(facts.items()), text, entity_budget)
        texts.append(text)
    return reports.assign(**{S.FULL_CONTENT: texts})


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
