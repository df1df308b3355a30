"""Entity resolution without an LLM: which nodes name one entity ("Marsh", "Councillor Lena
Marsh"), as a canonical-entity map read at query time (``query.entity_resolution``); the index
itself is never rewritten. Rules by title, surname, acronym and spelling, thresholds set a
priori (docs/entity-resolution.md)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import combinations

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.graph.aliases import initials_fit, is_acronym

# Leading words that are a role, not a name (name_key drops a few only before two more words).
TITLES = frozenset(
    "dr doctor mr mrs ms miss mx prof professor sir dame director mayor councillor councilor "
    "alderman senator sen rep representative congressman congresswoman governor gov president "
    "chancellor judge commissioner ambassador colonel col lieutenant lt captain capt commander "
    "admiral sergeant sgt detective inspector superintendent rev reverend bishop rabbi "
    "imam".split()
)
PERSONS = ("person", "unknown")  # types a title or surname rule applies to
SPELLING_RATIO = 0.85  # a misspelt word's similarity to the right one, at least
DESCRIPTION_COSINE = 0.9  # descriptions this close say the same about the entity
UNKNOWN = "unknown"
ALIAS_COLUMNS = [S.ID, "canonical_id", S.TITLE, "canonical_title", "rule"]
_DIRECTIONS = ("north", "south", "east", "west")  # "Southwest"/"Southeast": two places
_ROMAN = re.compile(r"^[ivxlcdm]+$")


def core_name(title: str, person: bool = True) -> str:
    """Return the merge key of ``title``, for a person without its leading titles
    ("Councillor Marsh": marsh; "Deputy Prime Minister", not a person, keeps them)."""
    words = name_key(title).split()
    while person and len(words) > 1 and words[0].rstrip(".") in TITLES:
        words = words[1:]
    return " ".join(words)


def _numbers(core: str) -> set[str]:
    """Return the words of ``core`` that are numbers (arabic or roman): "apollo 11", "xli"."""
    return {w for w in core.split() if any(c.isdigit() for c in w) or _ROMAN.match(w)}


def types_agree(a: str, b: str) -> bool:
    return a == b or UNKNOWN in (a, b)


@dataclass
class _Node:
    id: str
    title: str
    core: str
    type: str
    frequency: int
    units: frozenset[str]


class _Evidence:
    """Shared text units, shared neighbours and description similarity of two entities."""

    def __init__(self, entities: pd.DataFrame, relationships: pd.DataFrame) -> None:
        self.neighbours: dict[str, set[str]] = defaultdict(set)
        for s, t in zip(relationships[S.SOURCE_ID], relationships[S.TARGET_ID], strict=True):
            self.neighbours[s].add(t)
            self.neighbours[t].add(s)
        self.row = {e: i for i, e in enumerate(entities[S.ID])}
        described = entities[S.DESCRIPTION].fillna("").str.strip().astype(bool).to_numpy()
        vectors = entities[S.DESCRIPTION_EMBEDDING] if len(entities) else []
        rows = [np.asarray(v, dtype=np.float32) for v in vectors]
        matrix = np.stack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        self.vectors = matrix / np.where(norms > 0, norms, 1)
        self.described = described

    def __call__(self, a: _Node, b: _Node) -> bool:
        if a.units & b.units or self.neighbours[a.id] & self.neighbours[b.id]:
            return True
        i, j = self.row[a.id], self.row[b.id]
        if not (self.described[i] and self.described[j]):
            return False
        return float(self.vectors[i] @ self.vectors[j]) >= DESCRIPTION_COSINE


def _nodes(entities: pd.DataFrame) -> list[_Node]:
    return [
        _Node(
            getattr(row, S.ID),
            getattr(row, S.TITLE),
            core_name(getattr(row, S.TITLE), str(getattr(row, S.TYPE)).casefold() in PERSONS),
            str(getattr(row, S.TYPE)).casefold(),
            int(getattr(row, S.FREQUENCY)),
            frozenset(getattr(row, S.TEXT_UNIT_IDS)),
        )
        for row in entities.itertuples(index=False)
    ]


def _title_pairs(nodes: list[_Node]) -> list[tuple[_Node, _Node, str]]:
    by_core: dict[str, list[_Node]] = defaultdict(list)
    for node in nodes:
        if node.core:
            by_core[node.core].append(node)
    return [
        (a, b, "title")
        for group in by_core.values()
        for a, b in combinations(group, 2)
        if types_agree(a.type, b.type)
    ]


def _surname_pairs(nodes: list[_Node]) -> list[tuple[_Node, _Node, str]]:
    full_of: dict[str, set[str]] = defaultdict(set)  # last word -> full person names
    person = {n.core: n for n in nodes if n.type == "person" and len(n.core.split()) > 1}
    for core in person:
        full_of[core.split()[-1]].add(core)
    pairs = []
    for node in nodes:
        fulls = full_of.get(node.core, set())
        if " " not in node.core and len(fulls) == 1 and node.type in PERSONS:
            pairs.append((node, person[next(iter(fulls))], "surname"))
    return pairs


def _acronym_pairs(nodes: list[_Node]) -> list[tuple[_Node, _Node, str]]:
    pairs = []
    long_names = [n for n in nodes if len(n.core.split()) > 1]
    by_first: dict[str, list[_Node]] = defaultdict(list)
    for node in long_names:
        by_first[node.core[0]].append(node)
    for node in nodes:
        if not is_acronym(node.title):
            continue
        letter = node.title[0].casefold()
        fits = [
            n
            for n in by_first.get(letter, [])
            if types_agree(n.type, node.type) and initials_fit(node.title, n.title)
        ]
        distinct = {n.core: n for n in fits}
        if len(distinct) == 1:
            pairs.append((node, next(iter(distinct.values())), "acronym"))
    return pairs


def compact(core: str) -> str:
    """Return ``core`` without spaces, hyphens and dots ("palais royal": palaisroyal)."""
    return re.sub(r"[\s.-]", "", core)


def typo(a: str, b: str) -> bool:
    """Return whether two names differ by one misspelt word: alike (SPELLING_RATIO), 5+ letters,
    same first and last letter, not a suffix of the other, and no number or compass point in it."""
    wa, wb = a.split(), b.split()
    diff = [(x, y) for x, y in zip(wa, wb, strict=False) if x != y]
    if len(wa) != len(wb) or len(diff) != 1:
        return False
    ((x, y),) = diff
    return (
        min(len(x), len(y)) >= 5
        and (x[0], x[-1]) == (y[0], y[-1])
        and not any(d in x or d in y for d in _DIRECTIONS)
        and not (x.startswith(y) or y.startswith(x))
        and not _numbers(x) | _numbers(y)
        and SequenceMatcher(None, x, y).ratio() >= SPELLING_RATIO
    )


def _spelling_pairs(nodes: list[_Node]) -> list[tuple[_Node, _Node, str]]:
    by_compact: dict[tuple[str, str], list[_Node]] = defaultdict(list)
    blocks: dict[tuple[str, str], list[_Node]] = defaultdict(list)
    for node in nodes:
        by_compact[(node.type, compact(node.core))].append(node)
        for i, word in enumerate(node.core.split()):
            blocks[(node.type, f"{i}:{word}")].append(node)  # misspelt elsewhere
    pairs = [
        (a, b, "spelling")
        for group in by_compact.values()
        for a, b in combinations(group, 2)
        if a.core != b.core
    ]
    seen = set()
    for group in blocks.values():
        if len(group) > 200:  # a word hundreds of names share tells nothing
            continue
        for a, b in combinations(group, 2):
            if (a.id, b.id) not in seen and typo(a.core, b.core):
                seen.add((a.id, b.id))
                pairs.append((a, b, "spelling"))
    return pairs


def _compatible(cores_a: set[str], cores_b: set[str]) -> bool:
    """Return whether two groups' full names may be one entity's: every pair of multi-word
    names is equal, one's words within the other's, or a near-identical spelling."""
    for x in (c for c in cores_a if " " in c):
        for y in (c for c in cores_b if " " in c):
            wx, wy = set(x.split()), set(y.split())
            close = SequenceMatcher(None, x, y).ratio() >= SPELLING_RATIO
            if not (wx <= wy or wy <= wx or close):
                return False
    return True


def resolve_entities(entities: pd.DataFrame, relationships: pd.DataFrame) -> pd.DataFrame:
    """Return the entity_aliases table, a row per entity merged into another (the canonical is the
    group's fullest, most frequent name); the same tables give the same map."""
    nodes = _nodes(entities)
    evidence = _Evidence(entities, relationships)
    group_of = {n.id: n.id for n in nodes}
    members: dict[str, list[_Node]] = {n.id: [n] for n in nodes}
    rule_of: dict[str, str] = {}
    candidates = _title_pairs(nodes)
    candidates += [
        p for p in _surname_pairs(nodes) + _spelling_pairs(nodes) if evidence(p[0], p[1])
    ]
    # aliases.py's test: most of the acronym's chunks name the long name too ("FM" in 22
    # radio paragraphs is not the "Foreign Ministry" one of them names)
    candidates += [
        p for p in _acronym_pairs(nodes) if 2 * len(p[0].units & p[1].units) > len(p[0].units)
    ]
    for a, b, rule in candidates:
        ga, gb = group_of[a.id], group_of[b.id]
        if ga == gb:
            continue
        cores_a = {n.core for n in members[ga]}
        cores_b = {n.core for n in members[gb]}
        types = {n.type for n in members[ga] + members[gb]} - {UNKNOWN}
        if len(types) > 1 or not _compatible(cores_a, cores_b):
            continue
        for node in members[gb]:
            group_of[node.id] = ga
        members[ga] += members.pop(gb)
        rule_of.setdefault(a.id, rule)
        rule_of.setdefault(b.id, rule)
    rows = []
    for group in members.values():
        if len(group) < 2:
            continue
        canonical = min(group, key=lambda n: (-len(n.core.split()), -n.frequency, n.title, n.id))
        for node in sorted(group, key=lambda n: n.id):
            if node is not canonical:
                rows.append((node.id, canonical.id, node.title, canonical.title, rule_of[node.id]))
    return pd.DataFrame(rows, columns=ALIAS_COLUMNS)


class Resolution:
    """The canonical-entity map of one index, and the merged view the graph methods read."""

    def __init__(
        self, entities: pd.DataFrame, relationships: pd.DataFrame, aliases: pd.DataFrame
    ) -> None:
        self.entities, self.relationships, self.aliases = entities, relationships, aliases
        self.canonical_of = dict(zip(aliases[S.ID], aliases["canonical_id"], strict=True))
        self._members: dict[str, list[str]] = defaultdict(list)
        for alias, canonical in self.canonical_of.items():
            self._members[canonical].append(alias)

    @classmethod
    def of(cls, entities: pd.DataFrame, relationships: pd.DataFrame) -> Resolution:
        return cls(entities, relationships, resolve_entities(entities, relationships))

    def canonical(self, entity_id: str) -> str:
        """Return the id of the entity ``entity_id`` names (itself when not merged)."""
        return self.canonical_of.get(entity_id, entity_id)

    def members(self, entity_id: str) -> list[str]:
        """Return every id of ``entity_id``'s entity, the canonical first."""
        canonical = self.canonical(entity_id)
        return [canonical, *self._members.get(canonical, [])]

    def expand(self, entity_ids: set[str]) -> set[str]:
        """Return ``entity_ids`` with every other id of their entities."""
        return {m for e in entity_ids for m in self.members(e)}

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Return the merged graph: an entity row per canonical (text units united, frequency
        summed), every relationship row in order with its ends mapped to their canonicals."""
        entities = self.entities[~self.entities[S.ID].isin(self.canonical_of)].copy()
        units_of = dict(zip(self.entities[S.ID], self.entities[S.TEXT_UNIT_IDS], strict=True))
        frequency_of = dict(zip(self.entities[S.ID], self.entities[S.FREQUENCY], strict=True))
        ids = list(entities[S.ID])
        entities[S.TEXT_UNIT_IDS] = [
            list(dict.fromkeys(u for m in self.members(e) for u in units_of[m])) for e in ids
        ]
        entities[S.FREQUENCY] = [sum(int(frequency_of[m]) for m in self.members(e)) for e in ids]
        title_of = dict(zip(self.entities[S.ID], self.entities[S.TITLE], strict=True))
        relationships = self.relationships.copy()
        for id_column, title_column in (
            (S.SOURCE_ID, S.SOURCE_ENTITY),
            (S.TARGET_ID, S.TARGET_ENTITY),
        ):
            relationships[id_column] = relationships[id_column].map(self.canonical)
            relationships[title_column] = relationships[id_column].map(title_of)
        return entities.reset_index(drop=True), relationships
