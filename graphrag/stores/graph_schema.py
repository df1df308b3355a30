"""The graph schema both graph databases hold, declared once as data so LadybugDB and Neo4j
cannot drift; an index's rows in it, keyed by their index ids, and what changed between two
versions of those rows."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from graphrag import schemas as S

KEY = "id"
STRING, INT, FLOAT, STRINGS = "STRING", "INT64", "DOUBLE", "STRING[]"

# label -> property -> type (LadybugDB's names; Neo4j stores the same values)
NODES: dict[str, dict[str, str]] = {
    # no ``source``: the file path differs between machines, and a prompt showing the
    # schema must not (its recorded replies are keyed by the prompt)
    "Document": {KEY: STRING, "title": STRING, "human_readable_id": INT},
    "TextUnit": {KEY: STRING, "text": STRING, "n_tokens": INT, "human_readable_id": INT},
    "Entity": {
        KEY: STRING,
        "title": STRING,
        "type": STRING,
        "description": STRING,
        "degree": INT,
        "frequency": INT,
        "human_readable_id": INT,
    },
    "Community": {
        KEY: STRING,
        "community": INT,
        "level": INT,
        "title": STRING,
        "summary": STRING,
        "rating": FLOAT,
        "size": INT,
    },
}

# relationship type -> (from label, to label, property -> type)
RELATIONSHIPS: dict[str, tuple[str, str, dict[str, str]]] = {
    "RELATED": (
        "Entity",
        "Entity",
        {KEY: STRING, "description": STRING, "weight": FLOAT, "text_unit_ids": STRINGS},
    ),
    "MENTIONED_IN": ("Entity", "TextUnit", {}),
    "PART_OF": ("TextUnit", "Document", {}),
    "IN_COMMUNITY": ("Entity", "Community", {}),
    "CHILD_OF": ("Community", "Community", {}),
}

# the order example values are taken in: the most connected first, then by id
EXAMPLE_ORDER = {
    "Document": "n.human_readable_id, n.id",
    "TextUnit": "n.human_readable_id, n.id",
    "Entity": "n.degree DESC, n.id",
    "Community": "n.level, n.size DESC, n.id",
    "RELATED": "n.weight DESC, n.id",
}
ENDS = ["source", "target"]  # the key columns of a relationship row: its two nodes' ids


def key_of(name: str) -> list[str]:
    """Return the columns that identify a row of label or relationship type ``name``."""
    return [KEY] if name in NODES or KEY in RELATIONSHIPS[name][2] else ENDS


def columns_of(name: str) -> dict[str, str]:
    """Return the columns of a row of ``name`` with their types (a relationship's ends first)."""
    if name in NODES:
        return NODES[name]
    return {"source": STRING, "target": STRING, **RELATIONSHIPS[name][2]}


def _column(table: pd.DataFrame, name: str) -> list[Any]:
    return table[name].tolist() if name in table.columns else [None] * len(table)


def _pairs(table: pd.DataFrame, lists: str) -> pd.DataFrame:
    """Return (source: the row's id, target: each id of its ``lists`` column) pairs."""
    pairs = [
        (row_id, str(item))
        for row_id, items in zip(table[S.ID], _column(table, lists), strict=True)
        if items is not None
        for item in items
    ]
    return pd.DataFrame(pairs, columns=ENDS)


def _communities(index: Any) -> pd.DataFrame:
    """Return the communities with their report's title, summary and rating (when written)."""
    communities = index.communities
    reports = index.community_reports.drop_duplicates(S.COMMUNITY).set_index(S.COMMUNITY)
    number = list(communities[S.COMMUNITY])

    def report(column: str, default: list[Any]) -> list[Any]:
        if column not in reports.columns:
            return default
        found = reports[column].reindex(number)
        return [d if pd.isna(v) else v for v, d in zip(found, default, strict=True)]

    return pd.DataFrame(
        {
            KEY: communities[S.ID],
            "community": number,
            "level": communities[S.LEVEL],
            "title": report(S.TITLE, _column(communities, S.TITLE)),
            "summary": report(S.SUMMARY, [None] * len(number)),
            "rating": report(S.RATING, [None] * len(number)),
            "size": _column(communities, S.SIZE),
        }
    )


def graph_rows(index: Any) -> dict[str, pd.DataFrame]:
    """Return the typed rows of every label and relationship type for an ``Index``, one per key;
    relationships whose two nodes are not both there are left out."""
    entities, units, documents = index.entities, index.text_units, index.documents
    communities = index.communities
    relationships = index.relationships
    rows = {
        "Document": documents,
        "TextUnit": units,
        "Entity": entities,
        "Community": _communities(index),
        "RELATED": pd.DataFrame(
            {
                "source": relationships[S.SOURCE_ID],
                "target": relationships[S.TARGET_ID],
                KEY: relationships[S.ID],
                "description": _column(relationships, S.DESCRIPTION),
                "weight": _column(relationships, S.WEIGHT),
                "text_unit_ids": _column(relationships, S.TEXT_UNIT_IDS),
            }
        ),
        "MENTIONED_IN": _pairs(entities, S.TEXT_UNIT_IDS),
        "PART_OF": _pairs(units, S.DOCUMENT_IDS),
        "IN_COMMUNITY": _members(communities),
        "CHILD_OF": _children(communities),
    }
    typed = {name: _typed(frame, name) for name, frame in rows.items()}
    for name, (source, target, _) in RELATIONSHIPS.items():
        frame = typed[name]
        known = frame["source"].isin(typed[source][KEY]) & frame["target"].isin(typed[target][KEY])
        typed[name] = frame[known].reset_index(drop=True)
    return typed


def _members(communities: pd.DataFrame) -> pd.DataFrame:
    """Return (entity id, community id) for every member of every community."""
    pairs = _pairs(communities, S.ENTITY_IDS)
    return pairs.rename(columns={"source": "target", "target": "source"})[ENDS]


def _children(communities: pd.DataFrame) -> pd.DataFrame:
    """Return (community id, its parent's id) for every community with a parent."""
    by_number = dict(zip(communities[S.COMMUNITY], communities[S.ID], strict=True))
    pairs = [
        (child, by_number[parent])
        for child, parent in zip(communities[S.ID], _column(communities, S.PARENT), strict=True)
        if parent is not None and parent in by_number
    ]
    return pd.DataFrame(pairs, columns=ENDS)


def plain(value: Any) -> Any:
    """Return ``value`` as a plain Python value: None for a missing one, a tuple of strings
    for a list, an int or float for a numpy number (so rows of both engines compare)."""
    kind = type(value)
    if kind is str or kind is int:  # most values: first, as this runs for every cell
        return value
    if kind is float:
        return None if math.isnan(value) else value
    if value is None or value is pd.NA:
        return None
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(str(v) for v in value)
    if isinstance(value, np.generic):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def _typed(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Return the columns of ``name`` from ``table`` as plain values of their types (missing
    columns empty), one row per key."""
    cast = {
        STRING: lambda v: None if v is None else str(v),
        INT: lambda v: None if v is None else int(v),
        FLOAT: lambda v: None if v is None else float(v),
        STRINGS: lambda v: [] if v is None else list(v),
    }
    out = pd.DataFrame(
        {c: [cast[t](plain(v)) for v in _column(table, c)] for c, t in columns_of(name).items()},
        dtype=object,
    )
    return out.drop_duplicates(subset=key_of(name)).reset_index(drop=True)


@dataclass
class Changes:
    """What loading ``wanted`` over ``current`` rows of one label or type does."""

    added: pd.DataFrame  # wanted rows whose key is new
    updated: pd.DataFrame  # wanted rows whose key is there with other values
    replaced: pd.DataFrame  # the current rows of those keys
    removed: pd.DataFrame  # current rows whose key is no longer wanted

    def counts(self) -> dict[str, int]:
        return {
            "added": len(self.added),
            "updated": len(self.updated),
            "removed": len(self.removed),
        }


def _keys(frame: pd.DataFrame, key: list[str]) -> pd.Index:
    return pd.MultiIndex.from_frame(frame[key]) if len(key) > 1 else pd.Index(frame[key[0]])


def _comparable(column: pd.Series) -> np.ndarray:
    """Return ``column`` as an object array whose items compare with ``!=`` (a list as one
    string: numpy cannot hold sequences as items of a 1-d array)."""
    values = column.tolist()
    first = next((v for v in values if v is not None), None)
    if isinstance(first, list | tuple | np.ndarray):
        values = [None if v is None else "\x1f".join(map(str, v)) for v in values]
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def changes(current: pd.DataFrame, wanted: pd.DataFrame, key: list[str]) -> Changes:
    """Return the rows to add, update and remove to turn ``current`` into ``wanted`` (both
    of plain values, one row per key)."""
    current = current[wanted.columns]
    now, then = _keys(current, key), _keys(wanted, key)
    new, gone = ~then.isin(now), ~now.isin(then)
    differs = np.zeros(len(wanted), dtype=bool)
    kept = np.flatnonzero(~new)
    at = now.get_indexer(then[kept])  # each kept wanted row's current row
    for column in (c for c in wanted.columns if c not in key):
        differs[kept] |= _comparable(wanted[column])[kept] != _comparable(current[column])[at]
    replaced = np.zeros(len(current), dtype=bool)
    replaced[at[differs[kept]]] = True
    return Changes(
        added=wanted[new].reset_index(drop=True),
        updated=wanted[differs].reset_index(drop=True),
        replaced=current[replaced].reset_index(drop=True),
        removed=current[gone].reset_index(drop=True),
    )


def describe(schema: dict[str, Any]) -> str:
    """Return ``schema`` (``GraphDatabase.schema()``) as the lines a Text-to-Cypher prompt
    shows: each label and relationship type, its properties with types and example values."""

    def properties(props: dict[str, dict[str, Any]]) -> list[str]:
        lines = []
        for name, about in props.items():
            shown = about.get("values") or about.get("examples") or []
            kind = "one of" if "values" in about else "e.g."
            examples = f" ({kind} {', '.join(map(repr, shown))})" if shown else ""
            lines.append(f"    {name}: {about['type']}{examples}")
        return lines

    lines = ["Node labels:"]
    for label, about in schema["nodes"].items():
        lines += [f"  (:{label}) {about['count']} nodes", *properties(about["properties"])]
    lines.append("Relationship types:")
    for kind, about in schema["relationships"].items():
        lines.append(f"  (:{about['from']})-[:{kind}]->(:{about['to']}) {about['count']} edges")
        lines += properties(about["properties"])
    return "\n".join(lines)
