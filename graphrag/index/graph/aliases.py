"""Alias and acronym merging without an LLM: one node for "KBMI" and "Kestrel Bay Marine
Institute", when the text defines the acronym ("Long Name (ABBR)", "ABBR (Long Name)", "ABBR,
the Long Name") or its letters are the initials of exactly one other entity that most of its
chunks also name. An acronym two long names could stand for is left alone (a wrong merge
mixes two entities' facts). The mention tables are rewritten, so everything follows.

Chinese short forms (:func:`short_forms`) have no capitals to go by: a name is the short form
of a longer one in the same document when the text says so (L（简称S）), when it is the
longer name without a generic tail (舟山 / 舟山市, 阿里巴巴 / 阿里巴巴集团), or when it keeps the
longer name's start and its organization or place word (青澜湾合作社 / 青澜湾海藻养殖合作社).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import mentioned, name_key
from graphrag.text.lang import chinese

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


def _short_form_rule(short: str, short_type: str, full: str, full_type: str, text: str) -> str:
    """Return the rule by which ``short`` names ``full`` in ``text`` ("" when none does)."""
    if not 2 <= len(short) < len(full) or short in chinese.NOT_NAMES:
        return ""
    said = rf"{re.escape(full)}[^。；\n]{{0,12}}?简称为?[「“『\"]?{re.escape(short)}"
    if re.search(said, text):
        return "简称"
    # jieba tags transliterated places and brands as people (米泽/nr, 阿里巴巴/nrt)
    if short_type not in (full_type, "person"):
        return ""
    tail = full[len(short) :] if full.startswith(short) else ""
    # 天津市 is not 天津市区: a place with a tail of its own is a full name already
    tailed = any(short.endswith(t) for t, kind in chinese.GENERIC_TAILS.items() if kind == "geo")
    if chinese.GENERIC_TAILS.get(tail) == full_type and not (tailed and full_type == "geo"):
        return "generic tail"
    for cut in range(len(short) - 1, 1, -1):
        start, head, middle = short[:cut], short[cut:], full[cut : len(full) - len(short) + cut]
        if (
            full.startswith(start)
            and full.endswith(head)
            and chinese.suffix_type(head) == full_type
            and not any(word in middle for word in chinese.SUFFIX_TYPES)  # a parent or a part
            and not chinese.is_dictionary_word(short)  # 北京大学 is not 北京师范大学
        ):
            return "start and head"
    return ""


def unit_documents(text_units: pd.DataFrame) -> dict[str, str]:
    """Return {text unit id: its (first) document id}; a table without documents: the unit."""
    units = text_units.get(S.DOCUMENT_IDS, text_units[S.ID].map(lambda unit: [unit]))
    return dict(zip(text_units[S.ID], units.str[0], strict=True))


def short_forms(
    names: list[tuple[str, str, str]], text_units: pd.DataFrame
) -> dict[tuple[str, str], tuple[str, str]]:
    """Return {(document, short form): (full name, rule)} among ``names`` ((text unit id,
    name, type)) written in Han characters: the merge holds in the document that names both
    (宝山 is 宝山区 beside it, not in another document's 宝山镇). A short form that could stand
    for two full names there, or a full name that is itself a short form, is left alone, as
    an ambiguous acronym is."""
    document_of = unit_documents(text_units)
    texts: dict[str, str] = defaultdict(str)
    for unit, text in zip(text_units[S.ID], text_units[S.TEXT], strict=True):
        texts[document_of[unit]] += text
    by_document: dict[str, dict[str, str]] = defaultdict(dict)
    for unit, name, kind in names:
        if all(chinese.HAN.match(c) for c in name):
            by_document[document_of[unit]].setdefault(name, kind)
    merges = {}
    for document, types in by_document.items():
        found: dict[str, dict[str, str]] = defaultdict(dict)
        for short, short_type in types.items():
            for full, full_type in types.items():
                rule = _short_form_rule(short, short_type, full, full_type, texts[document])
                if rule:
                    found[short][full] = rule
        for short, fulls in found.items():
            if len(fulls) == 1 and next(iter(fulls)) not in found:
                merges[(document, short)] = next(iter(fulls.items()))
    return merges


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
    names = list(zip(*(entity_mentions[c] for c in (S.TEXT_UNIT_ID, S.TITLE, S.TYPE)), strict=True))
    titles, units = entity_mentions[S.TITLE], entity_mentions[S.TEXT_UNIT_ID]
    first_unit = dict(zip(titles[::-1], units[::-1], strict=True))
    for (_, short), (full, rule) in short_forms(names, text_units).items():
        candidates[name_key(short)].setdefault(name_key(full), (rule, first_unit[short]))
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
