"""Extraction replies as one record per line, parsed strictly and repaired locally:
``("entity"<|>Lena Ortiz<|>person<|>Chairs the club.)`` or, ``index.record_style = "pipe"``,
``entity|Lena Ortiz|person|Chairs the club.`` Why lines: a reply cut at the token cap keeps
every finished record, and a repetition loop shows record by record (:class:`RecordStop`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from graphrag.index.extract.names import name_key
from graphrag.llm.stream import StopRuleFactory

TUPLE = "<|>"
RECORD = "##"
COMPLETE = "<|COMPLETE|>"
DEFAULT_STRENGTH = 5  # a relationship whose strength is missing or unreadable (1-10 scale)
# A packed call (several documents in one prompt) labels each record with its document: "[2] (...)"
_LABEL = re.compile(r"^\[\s*(\w{1,12})\s*\]\s*")
REPEATED = "repeated record"
MIRRORED = "entities restated as relationships to their types"
_KIND = re.compile(r'^\(?\s*["\']?(entity|relationship)["\']?\s*$', re.IGNORECASE)
# A delimiter the model wrote without one of its ends ("<|" or "|>")
_LOOSE_TUPLE = re.compile(r"<\|>|<\||\|>")
# The pipe style (``index.record_style = "pipe"``); either style is read whatever the setting.
PIPE = "|"
_PARENTHESES_REPAIR = {  # (opens, closes) -> what was added
    (True, False): "closing parenthesis added",
    (False, True): "opening parenthesis added",
    (False, False): "parentheses added",
}
_PIPE_RECORD = re.compile(r'^\(?\s*["\']?(entity|relationship)["\']?\s*\|(?!>)', re.IGNORECASE)


@dataclass
class ParsedRecords:
    """What a reply held: the extraction as entity and relationship dicts, and what was wrong."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    relationships: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[tuple[int, str, str]] = field(default_factory=list)  # (line, text, why)
    repaired: list[tuple[int, str]] = field(default_factory=list)  # (line, what was repaired)
    duplicates: int = 0
    complete: bool = False  # the completion marker was reached

    def extraction(self) -> dict[str, list[dict[str, Any]]]:
        """Return ``{"entities": [...], "relationships": [...]}``, the shape stage.py reads."""
        return {"entities": self.entities, "relationships": self.relationships}


def _lines(text: str) -> list[tuple[int, str]]:
    """Return (line number, record text) pairs: ``##`` also ends a record, blank lines go."""
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        for part in line.split(RECORD):
            if part.strip():
                out.append((number, part.strip()))
    return out


def _strip_record(line: str) -> tuple[str, list[str]]:
    """Return the record's inside without its parentheses, and the repairs made."""
    opens, closes = line.startswith("("), line.endswith(")")
    repair = _PARENTHESES_REPAIR.get((opens, closes))
    return line[opens : len(line) - closes], [repair] if repair else []


def _field(value: str) -> str:
    return value.strip().strip("\"'").strip()


def _strength(value: str) -> tuple[int | None, str | None]:
    try:
        number = float(_field(value))
    except ValueError:
        return None, None
    if not number.is_integer() or not 1 <= number <= 10:
        rounded = min(10, max(1, round(number)))
        return rounded, f"strength {value.strip()!r} read as {rounded}"
    return int(number), None if _field(value) == str(int(number)) else "strength as integer"


def parse_record(line: str) -> tuple[dict[str, Any] | None, str, list[str]]:
    """Return (record or None, its kind or why it failed, repairs) of one record line; a
    labelled line's record carries its ``label``."""
    label = _LABEL.match(line)
    record, kind, repairs = _parse_unlabelled(line[label.end() :] if label else line)
    if record is not None and label is not None:
        record["label"] = label.group(1)
    return record, kind, repairs


def _parse_unlabelled(line: str) -> tuple[dict[str, Any] | None, str, list[str]]:
    if TUPLE not in line and _PIPE_RECORD.match(line):  # index.record_style = "pipe"
        inside, repairs = line, []
        if line.startswith("(") and line.endswith(")"):
            inside = line[1:-1]
        fields = inside.split(PIPE)
    else:
        inside, repairs = _strip_record(line)
        fields = inside.split(TUPLE)
    if not _KIND.match(fields[0]) and _KIND.match(_LOOSE_TUPLE.split(inside)[0]):
        fields = _LOOSE_TUPLE.split(inside.removesuffix(">"))
        repairs.append("delimiters written without one of their ends read as <|>")
    match = _KIND.match(fields[0])
    if not match:
        return None, f"not an entity or relationship record: {fields[0][:40]!r}", repairs
    kind = match.group(1).lower()
    values = [_field(v) for v in fields[1:]]
    if kind == "entity" and _relationship_as_entity(values):
        kind = "relationship"
        repairs.append("relationship written as an entity record read as a relationship")
        if _strength(values[-1])[0] is None:  # source, target, target's type, description
            values = [values[0], values[1], values[3]]
    if kind == "entity" and len(values) == 2 and " " in values[1]:  # name, description
        values = [values[0], "unknown", values[1]]
        repairs.append("entity record without a type read with type unknown")
    if kind == "relationship" and len(values) == 2 and values[0] and " " in values[1]:
        # a name and a sentence, no target: a fact about that entity, kept as its description
        kind, values = "entity", [values[0], "unknown", values[1]]
        repairs.append("relationship record without a target read as an entity description")
    if kind == "entity":
        if len(values) < 3 or not values[0]:
            return None, f"entity record with {len(values)} of 3 fields", repairs
        if len(values) > 3:  # the delimiter inside the description
            repairs.append("extra delimiters kept in the description")
            values = [*values[:2], " ".join(values[2:])]
        name, kind_name, description = values
        return {"name": name, "type": kind_name, "description": description}, "entity", repairs
    if len(values) < 3 or not values[0] or not values[1]:
        return None, f"relationship record with {len(values)} of 4 fields", repairs
    strength, note = (None, None) if len(values) < 4 else _strength(values[-1])
    if strength is None:
        strength = DEFAULT_STRENGTH
        repairs.append(f"missing or unreadable strength set to {DEFAULT_STRENGTH}")
        description = " ".join(values[2:]) if len(values) > 4 else values[2]
    else:
        description = " ".join(values[2:-1])
    if note:
        repairs.append(note)
    record = {"source": values[0], "target": values[1], "description": description}
    return {**record, "strength": strength}, "relationship", repairs


def _relationship_as_entity(values: list[str]) -> bool:
    """Whether an "entity" record's four fields are a relationship: source, target and a
    description with a strength, or with the target's type (one lowercase word) before it."""
    if len(values) != 4 or not values[1] or values[1][0].islower():
        return False
    strength_last = _strength(values[3])[0] is not None
    type_third = re.fullmatch(r"[a-z]{2,20}", values[2]) is not None
    return strength_last or type_third


def _identity(kind: str, record: dict[str, Any]) -> tuple:
    """Return what makes two records the same: kind, label, normalized names, description."""
    label = record.get("label")
    if kind == "entity":
        return kind, label, name_key(record["name"]), record["description"].casefold()
    ends = (name_key(record["source"]), name_key(record["target"]))
    return kind, label, *ends, record["description"].casefold()


def parse_records(text: str) -> ParsedRecords:
    """Return the records of a reply: repaired where a local fix suffices, malformed lines
    listed (never raised), and every repeat of an earlier record dropped and counted."""
    parsed = ParsedRecords()
    seen: set[tuple] = set()
    for number, line in _lines(text):
        if line == COMPLETE or line.endswith(COMPLETE):
            parsed.complete = True
            line = line.removesuffix(COMPLETE).strip()
            if not line:
                continue
        record, kind, repairs = parse_record(line)
        if record is None:
            parsed.malformed.append((number, line, kind))
            continue
        identity = _identity(kind, record)
        if identity in seen:
            parsed.duplicates += 1
            continue
        seen.add(identity)
        parsed.repaired += [(number, r) for r in repairs]
        (parsed.entities if kind == "entity" else parsed.relationships).append(record)
    return parsed


class RecordStop:
    """The stop rule of a streamed record reply (``index.stop_repeats``): at ``run`` lines in a
    row repeating earlier ones (one repeat is often a near-duplicate), or ``mirror_run`` mirrored
    ones."""

    def __init__(self, run: int = 2, mirror_run: int = 3) -> None:
        self.run = run
        self.mirror_run = mirror_run
        self._seen: set[str] = set()
        self._repeats: list[int] = []  # starts of the current run of repeated lines
        self._types: dict[str, str] = {}  # entity name key -> type key (unlabelled records)
        self._mirrors: list[int] = []  # starts of the current run of mirrored entities
        self._read = 0  # characters of the reply already read, always at a line start

    def check(self, partial: str) -> tuple[int, str] | None:
        """Return (offset of the line to stop at, why) once the reply should end, else None.
        Only complete lines are read (the last line may still be growing)."""
        while (end := partial.find("\n", self._read)) >= 0:
            start, self._read = self._read, end + 1
            for part in partial[start:end].split(RECORD):
                record, kind, _ = parse_record(part.strip()) if part.strip() else (None, "", [])
                if record is None:
                    continue
                identity = " ".join(part.split()).casefold()
                if identity not in self._seen:
                    self._seen.add(identity)
                    self._repeats = []
                    if self._mirrored(kind, record, start):
                        return self._mirrors[0], MIRRORED
                    continue
                self._repeats.append(start)
                if len(self._repeats) >= self.run:
                    return self._repeats[0], REPEATED
        return None

    def _mirrored(self, kind: str, record: dict[str, Any], start: int) -> bool:
        """Whether ``record`` ends ``mirror_run`` relationships restating entities as relationships
        to their types; never in a packed reply (its later documents would be lost)."""
        if record.get("label") is not None:
            return False
        if kind == "entity":
            self._types[name_key(record["name"])] = name_key(str(record.get("type", "")))
        elif self._types.get(name_key(record["source"])) == name_key(record["target"]):
            self._mirrors.append(start)
            return len(self._mirrors) >= self.mirror_run
        self._mirrors = []
        return False


# The rule as the chat client takes it; its spec is part of every record request's cache key.
RECORD_STOP = StopRuleFactory("record_repeats", RecordStop, params=(("run", 2), ("mirror_run", 3)))
