"""Descriptions held to their sources: a sentence naming a name or number its chunk lacks is
*unsupported*. Why: a small extractor adds what it knows, and every method would read it as a
fact of the corpus. ``index.ground_descriptions`` drops such sentences into ``dropped``."""

from __future__ import annotations

import re

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.stage import dropped_row
from graphrag.text.lang import sentences

UNGROUNDED = "ungrounded description"  # the dropped table's reason
_TERM = re.compile(r"^(?:[A-Z][\w'-]*|\d[\d,.:/]*\d|\d)$")
_PUNCT = "\"'()[]{},.;:!?“”‘’"


def sentence_terms(sentence: str) -> list[str]:
    """Return the names and numbers of a sentence: capitalized words after the first word
    (which is capitalized anyway), acronyms and numbers anywhere."""
    words = [w.strip(_PUNCT) for w in sentence.split()]
    terms = []
    for i, word in enumerate(words):
        if not _TERM.match(word) or (len(word) == 1 and not word.isdigit()):
            continue  # "A", "I": no name
        if i == 0 and not word[0].isdigit() and not word.isupper():
            continue
        terms.append(word)
    return terms


def missing_terms(sentence: str, source: str) -> list[str]:
    """Return the terms of ``sentence`` that ``source`` does not contain as a whole word."""
    lowered = source.lower()
    return [
        term
        for term in sentence_terms(sentence)
        if not re.search(rf"(?<!\w){re.escape(term.lower())}(?!\w)", lowered)
    ]


def split_grounded(description: str, source: str) -> tuple[str, list[str]]:
    """Return (the supported sentences joined, the unsupported sentences)."""
    kept, dropped = [], []
    for sentence in sentences(description or ""):
        (dropped if missing_terms(sentence, source) else kept).append(sentence)
    return " ".join(kept), dropped


def ground_mentions(
    mentions: pd.DataFrame, text_units: pd.DataFrame, name_columns: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (the mentions with only supported sentences, the dropped sentences' rows); each
    mention is checked against its own chunk, ``name_columns`` name it in the dropped table."""
    text_of = dict(zip(text_units[S.ID], text_units[S.TEXT], strict=True))
    grounded = mentions.copy()
    rows = []
    for i, row in enumerate(mentions.itertuples(index=False)):
        unit = getattr(row, S.TEXT_UNIT_ID)
        kept, dropped = split_grounded(getattr(row, S.DESCRIPTION), text_of.get(unit, ""))
        if not dropped:
            continue
        grounded.iloc[i, grounded.columns.get_loc(S.DESCRIPTION)] = kept
        name = " -> ".join(str(getattr(row, c)) for c in name_columns)
        rows += [dropped_row(unit, name, UNGROUNDED, s) for s in dropped]
    return grounded, pd.DataFrame(rows, columns=S.DROPPED_COLUMNS)


def unsupported_sentences(
    entities: pd.DataFrame, relationships: pd.DataFrame, text_units: pd.DataFrame
) -> pd.DataFrame:
    """Return (kind, name, sentence, missing terms) per description sentence of a built index,
    checked against all the chunks it was extracted from."""
    text_of = dict(zip(text_units[S.ID], text_units[S.TEXT], strict=True))
    rows = []
    pairs = relationships[S.SOURCE_ENTITY] + " -> " + relationships[S.TARGET_ENTITY]
    tables = [("entity", entities, entities[S.TITLE]), ("relationship", relationships, pairs)]
    for kind, table, names in tables:
        for name, description, units in zip(
            names, table[S.DESCRIPTION], table[S.TEXT_UNIT_IDS], strict=True
        ):
            source = " ".join(text_of.get(u, "") for u in units)
            for sentence in sentences(description or ""):
                missing = missing_terms(sentence, source)
                rows.append({"kind": kind, "name": name, "sentence": sentence, "missing": missing})
    return pd.DataFrame(rows, columns=["kind", "name", "sentence", "missing"])
