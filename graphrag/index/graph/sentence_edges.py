"""Relationships from sentences (``index.sentence_edges_max_entities``): two entities one short
sentence names together, with no LLM relationship, become related by it. Why: a small model
lists entities well but relationships sparsely (docs/research-log.md)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import display_name
from graphrag.index.extract.nlp import sentences, trim_text
from graphrag.index.ids import stable_id

SENTENCE_EDGE_STRENGTH = 1.0  # below any strength the LLM gives (1-10), once per sentence
MAX_DESCRIPTION_CHARS = 300
EDGE_COLUMNS = [S.ID, S.SOURCE_ENTITY, S.TARGET_ENTITY, S.SOURCE_ID, S.TARGET_ID, S.DESCRIPTION]
EDGE_COLUMNS += [S.WEIGHT, S.TEXT_UNIT_IDS]


def named_in(sentence: str, names: Iterable[str]) -> set[str]:
    """Return the ``names`` that ``sentence`` names as a whole phrase, a longer name's words
    taken before a shorter name inside them."""
    text = sentence.casefold()
    found = set()
    for name in sorted(names, key=len, reverse=True):
        pattern = rf"(?<!\w){re.escape(name.casefold())}(?!\w)"
        if re.search(pattern, text):
            found.add(name)
            text = re.sub(pattern, " ", text)
    return found


def _surface_forms(entity_mentions: pd.DataFrame) -> dict[str, dict[str, str]]:
    """Return, per text unit, each surface form of its entities -> the entity's name key."""
    forms: dict[str, dict[str, str]] = {}
    columns = (S.TEXT_UNIT_ID, S.TITLE, S.NAME_KEY)
    for unit, title, key in zip(*(entity_mentions[c] for c in columns), strict=True):
        name = display_name(title)
        if name:
            forms.setdefault(unit, {})[name] = key
    return forms


def add_sentence_edges(
    relationships: pd.DataFrame, entities, entity_mentions, text_units, max_entities: int
) -> pd.DataFrame:
    """Return ``relationships`` plus a row per unrelated pair of a chunk's entities that a
    sentence of at most ``max_entities`` names together (its first such sentence, weight one per
    sentence)."""
    if max_entities < 2 or entity_mentions.empty:
        return relationships
    id_of = dict(zip(entities[S.NAME_KEY], entities[S.ID], strict=True))
    title_of = dict(zip(entities[S.NAME_KEY], entities[S.TITLE], strict=True))
    ends = zip(relationships[S.SOURCE_ID], relationships[S.TARGET_ID], strict=True)
    related = {frozenset(p) for p in ends}
    found: dict[tuple[str, str], dict] = {}
    forms_of_unit = _surface_forms(entity_mentions)
    for unit, text in zip(text_units[S.ID], text_units[S.TEXT], strict=True):
        forms = {name: key for name, key in forms_of_unit.get(unit, {}).items() if key in id_of}
        if len(set(forms.values())) < 2:
            continue
        for sentence in sentences(text):
            keys = {forms[name] for name in named_in(sentence, forms)}
            if not 2 <= len(keys) <= max_entities:
                continue
            for a, b in itertools.combinations(sorted(keys), 2):
                if frozenset((id_of[a], id_of[b])) in related:
                    continue
                if (a, b) not in found:
                    description = trim_text(sentence, MAX_DESCRIPTION_CHARS)
                    row = (stable_id("relationship", a, b), title_of[a], title_of[b], id_of[a])
                    row += (id_of[b], description, 0.0, [])
                    found[(a, b)] = dict(zip(EDGE_COLUMNS, row, strict=True))
                edge = found[(a, b)]
                edge[S.WEIGHT] += SENTENCE_EDGE_STRENGTH
                if unit not in edge[S.TEXT_UNIT_IDS]:
                    edge[S.TEXT_UNIT_IDS].append(unit)
    if not found:
        return relationships
    added = pd.DataFrame(list(found.values()))
    if S.DESCRIPTIONS in relationships.columns:
        added[S.DESCRIPTIONS] = added[S.DESCRIPTION].map(lambda d: [d])
    return pd.concat([relationships, added[relationships.columns]], ignore_index=True)
