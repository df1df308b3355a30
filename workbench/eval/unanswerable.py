"""Planted unanswerable questions and whether an answer declined them (negative rejection).

A planted question swaps an answerable question's entity for a recombined name of that type
that no text unit contains ("Mara Okafor" + "Jonah Whitlow" -> "Mara Whitlow"): plausible and
near the corpus, so a model is tempted to answer from a neighbour's facts. Declining is read
from the answer's words (English and Chinese), judge-free.
"""

from __future__ import annotations

import random
import re

import pandas as pd

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.text import lang
from workbench.eval.questions import DEFAULT_SPLIT

UNANSWERABLE = "unanswerable"  # the question type of a planted question
REFERENCE = "The documents do not contain the answer."
_DECLINES = [
    r"\b(?:do|does|did)\s*(?:not|n't)\s+(?:contain|mention|provide|say|state|include|specify|"
    r"give|offer|discuss|describe|indicate|have)",
    r"\b(?:is|are|was|were)\s*(?:not|n't)\s+(?:mentioned|provided|stated|specified|given|found|"
    r"available|included|described|discussed|known|clear)",
    r"\bno (?:information|mention|details?|data|record|evidence|relevant)",
    r"\b(?:cannot|can't|can not|unable to|not possible to)\s+(?:be\s+)?(?:answer|determine|"
    r"find|tell|say|identify|confirm|provide|infer)",
    r"\bnot (?:enough|sufficient) (?:information|context|data)",
    r"\b(?:i|we) (?:do not|don't) know\b",
    r"没有(?:提到|提及|提供|相关|说明|记载|给出|包含|信息|找到)",
    r"未(?:提到|提及|提供|说明|记载|给出|包含|找到)",
    r"(?:无法|不能)(?:回答|确定|得知|判断|找到|提供)",
    r"不包含|并未|不知道|无相关|没有关于",
]
DECLINE = re.compile("|".join(_DECLINES), re.IGNORECASE)


def declined(answer: str) -> bool:
    """Whether ``answer`` says the documents do not hold the answer (English or Chinese)."""
    return bool(DECLINE.search(answer or ""))


def _parts(name: str) -> tuple[str, str] | None:
    """A name's first part and the rest: by spaces, or for a Han name its first character."""
    words = name.split()
    if len(words) >= 2:
        return words[0], " ".join(words[1:])
    if lang.detect(name) == "zh" and len(name) >= 2:
        return name[0], name[1:]
    return None


def _join(first: str, rest: str, like: str) -> str:
    return f"{first}{rest}" if " " not in like and lang.detect(like) == "zh" else f"{first} {rest}"


def absent_names(index: Index, seed: int) -> dict[str, list[str]]:
    """Per entity type, recombined names no text unit contains, in a seeded order."""
    corpus = "\n".join(index.text_units[S.TEXT]).casefold()
    rng = random.Random(seed)
    found: dict[str, list[str]] = {}
    for kind, titles in index.entities.groupby(S.TYPE)[S.TITLE]:
        split = [(t, p) for t in sorted(set(titles)) if (p := _parts(t))]
        made = {
            _join(a[0], b[1], t)
            for t, a in split
            for u, b in split
            if t != u and a[0] != b[0] and b[1] != a[1]
        }
        names = sorted(n for n in made if n.casefold() not in corpus)
        rng.shuffle(names)
        if names:
            found[str(kind)] = names
    return found


def plant(questions: pd.DataFrame, index: Index, count: int, seed: int = 0) -> pd.DataFrame:
    """Return up to ``count`` unanswerable questions made from ``questions``' answerable ones:
    each question's longest entity name swapped for an absent name of that entity's type.
    A planted question keeps its source's split (a dev question's twin is dev); the sources
    are taken in a seeded order alternating the splits, so both get planted questions."""
    names = absent_names(index, seed)
    entities = index.entities.sort_values(S.TITLE, key=lambda t: -t.str.len(), kind="stable")
    pairs = list(zip(entities[S.TITLE].astype(str), entities[S.TYPE].astype(str), strict=True))
    answerable = questions[questions["type"] != UNANSWERABLE]
    turns = [iter(rows) for rows in _by_split(answerable, seed)]
    rows: list[dict] = []
    while turns and len(rows) < count:
        for turn in list(turns):  # one planted question of each split in turn
            made = next((r for q in turn if (r := _twin(q, pairs, names))), None)
            if made is None:
                turns.remove(turn)
            elif len(rows) < count:
                rows.append(made)
    return pd.DataFrame(rows)


def _twin(question, pairs: list[tuple[str, str]], names: dict[str, list[str]]) -> dict | None:
    """``question`` with its longest entity name swapped for an absent one of that type."""
    text = question.question
    for title, kind in pairs:
        at = text.casefold().find(title.casefold())
        if at < 0 or not names.get(kind):
            continue
        absent = names[kind].pop()
        return {
            "id": f"{question.id}-absent",
            "question": text[:at] + absent + text[at + len(title) :],
            "reference": REFERENCE,
            "type": UNANSWERABLE,
            "split": getattr(question, "split", DEFAULT_SPLIT) or DEFAULT_SPLIT,
            "support": [],
            "answer_keywords": [],
            "planted_from": question.id,
            "absent_name": absent,
        }
    return None


def _by_split(questions: pd.DataFrame, seed: int) -> list[list]:
    """The questions of each split (in split order), each in a seeded order."""
    rows = questions.sample(frac=1.0, random_state=seed).itertuples(index=False)
    by_split: dict[str, list] = {}
    for row in rows:
        by_split.setdefault(getattr(row, "split", DEFAULT_SPLIT) or DEFAULT_SPLIT, []).append(row)
    return [by_split[k] for k in sorted(by_split)]
