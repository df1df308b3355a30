"""Alias and acronym merging without an LLM: one node for "KBMI" and "Kestrel Bay Marine
Institute", when the text defines the acronym ("Long Name (ABBR)", "ABBR (Long Name)", "ABBR,
the Long Name") or its letters are the initials of exactly one other entity that most of its
chunks also name. An acronym two long names could stand for is left alone (a wrong merge
mixes two entities' facts). The mention tables are rewritten, so everything follows.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import mentioned, name_key

ALIAS_SELF_LOOP = "relationship of an alias with its long name"
# Lower-case words a long name may hold; their initials may or may not be in the acronym
# ("Department of Energy" is DOE, "Bank of England" is BoE or BE).
_CONNECTORS = frozenset({"of", "and", "for", "the", "on", "de", "du", "la", "&", "in", "at"})
_ACRONYM = r"[A-Z][A-Za-z]?(?:[A-Z0-9&]|\.(?=[A-Z])){1,9}"
_LONG = r"[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|of|and|for|the|on|de|du|la|&|in|at))*"
DEFINITIONS = (
    # Long Name (ABBR): the long name is the shortest tail of the capitalized run that fits
    ("long (abbr)", re.compile(rf"({_LONG})\s+\(\s*({_ACRONYM})s?\s*\)"), "tail"),
    # ABBR (Long Name)
    ("abbr (long)", re.compile(rf"\b({_ACRONYM})s?\s+\(\s*(?:the\s+)?({_LONG})\s*\)"), "head"),
    # ABBR, the Long Name
    ("abbr, the long", re.compile(rf"\b({_ACRONYM}),\s+the\s+({_LONG})"), "head"),
)


@dataclass(frozen=True)
class AliasPair:
    """One merge: the alias's key goes to the long name's key, found by ``rule`` in a chunk."""

    alias: str
    canonical: str
    rule: str
    text_unit_id: str


def is_acronym(name: str) -> bool:
    """Return whether ``name`` looks like an acronym: 2-10 characters, mostly capitals."""
    letters = name.replace(".", "").replace("&", "").rstrip("s")
    return (
        2 <= len(letters) <= 10
        and name[:1].isupper()
        and sum(c.isupper() for c in letters) >= max(2, len(letters) - 1)
        and " " not in name
    )


def _letters(acronym: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", acronym).rstrip("s").upper()


def _name_words(long_name: str) -> list[str]:
    words = [w for w in re.split(r"[\s-]+", long_name) if w]
    return words[1:] if words and words[0].casefold() == "the" else words


def _initials(words: list[str], connectors: bool) -> str:
    """Return the initials of ``words``, with or without those of connector words."""
    kept = [w for w in words if w != "&" and (connectors or w.casefold() not in _CONNECTORS)]
    return "".join(w[0] for w in kept).upper()


def initials_fit(acronym: str, long_name: str, connectors: bool | None = None) -> bool:
    """Return whether the acronym spells the initials of ``long_name``'s words (a leading
    "The" skipped; connector words counted, skipped, or with ``None`` either)."""
    words = _name_words(long_name)
    if len(words) < 2 or not words[0][0].isupper():
        return False
    modes = (False, True) if connectors is None else (connectors,)
    return any(_letters(acronym) == _initials(words, mode) for mode in modes)


def _fitting_span(acronym: str, long_name: str, keep: str) -> str | None:
    """Return the shortest tail (or head) of ``long_name`` whose initials the acronym spells,
    skipping connectors' initials first."""
    words = long_name.split()
    spans = (
        [words[cut:] for cut in range(len(words) - 1, -1, -1)]
        if keep == "tail"
        else [words[: cut + 1] for cut in range(len(words))]
    )
    for connectors in (False, True):
        for span in spans:
            text = " ".join(span)
            if initials_fit(acronym, text, connectors):
                return text
    return None


def definitions(text: str) -> list[tuple[str, str, str]]:
    """Return (acronym, long name, rule) for every definition in ``text`` whose initials fit."""
    found = []
    for rule, pattern, keep in DEFINITIONS:
        for match in pattern.finditer(text):
            first, second = match.groups()
            acronym, long_name = (second, first) if keep == "tail" else (first, second)
            span = _fitting_span(acronym, long_name, keep)
            if span and is_acronym(acronym):
                found.append((acronym, span, rule))
    return found


def find_alias_pairs(entity_mentions: pd.DataFrame, text_units: pd.DataFrame) -> list[AliasPair]:
    """Return the acronym merges the chunk text supports among the mentioned entities."""
    keys = set(entity_mentions[S.NAME_KEY])
    text_of = dict(zip(text_units[S.ID], text_units[S.TEXT], strict=True))
    candidates: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for unit, text in text_of.items():
        for acronym, long_name, rule in definitions(text):
            alias, canonical = name_key(acronym), name_key(long_name)
            if alias in keys and canonical in keys and alias != canonical:
                candidates[alias].setdefault(canonical, (rule, unit))
    titles = entity_mentions.drop_duplicates(S.NAME_KEY).set_index(S.NAME_KEY)[S.TITLE]
    units_of = entity_mentions.groupby(S.NAME_KEY)[S.TEXT_UNIT_ID].apply(list)
    for alias, title in titles.items():
        if alias in candidates or not is_acronym(title):
            continue
        units = list(dict.fromkeys(units_of[alias]))
        texts = [text_of.get(unit, "") for unit in units]
        for canonical, long_title in titles.items():
            if canonical == alias or not initials_fit(title, long_title):
                continue
            together = [
                u for u, text in zip(units, texts, strict=True) if mentioned(long_title, text)
            ]
            # most of the acronym's chunks must name the long name too
            if 2 * len(together) > len(texts):
                candidates[alias].setdefault(canonical, ("initials in one chunk", together[0]))
    pairs = []
    for alias, found in sorted(candidates.items()):
        if len(found) == 1:  # an acronym that could stand for two names is left alone
            ((canonical, (rule, unit)),) = found.items()
            if canonical not in candidates:  # no chains: a long name is never an alias
                pairs.append(AliasPair(alias, canonical, rule, unit))
    return pairs


def merge_alias_mentions(
    entity_mentions: pd.DataFrame, relationship_mentions: pd.DataFrame, pairs: list[AliasPair]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entity mentions, relationship mentions, dropped) with every alias rewritten to
    its long name's key and title; an edge of an alias with its long name is dropped."""
    to = {p.alias: p.canonical for p in pairs}
    long_title = (
        entity_mentions[entity_mentions[S.NAME_KEY].isin(set(to.values()))]
        .groupby(S.NAME_KEY)[S.TITLE]
        .agg(lambda titles: titles.value_counts().index[0])
    )
    entities = entity_mentions.copy()
    aliased = entities[S.NAME_KEY].isin(to)
    entities.loc[aliased, S.NAME_KEY] = entities.loc[aliased, S.NAME_KEY].map(to)
    entities.loc[aliased, S.TITLE] = entities.loc[aliased, S.NAME_KEY].map(long_title)
    relationships = relationship_mentions.copy()
    for column in (S.SOURCE_KEY, S.TARGET_KEY):
        relationships[column] = relationships[column].map(lambda k: to.get(k, k))
    loops = relationships[S.SOURCE_KEY] == relationships[S.TARGET_KEY]
    lost = relationships[loops]
    dropped = pd.DataFrame(
        {
            S.TEXT_UNIT_ID: lost[S.TEXT_UNIT_ID],
            S.NAME: lost[S.SOURCE_ENTITY] + " -> " + lost[S.TARGET_ENTITY],
            S.REASON: ALIAS_SELF_LOOP,
            S.DESCRIPTION: lost[S.DESCRIPTION],
        },
        columns=S.DROPPED_COLUMNS,
    )
    return entities, relationships[~loops].reset_index(drop=True), dropped.reset_index(drop=True)
