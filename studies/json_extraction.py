"""Record replies made outside the workbench's own calls: an extraction written as record lines
(what tests' fake models answer), and the recorded replies of the removed JSON extraction
format read as records (tests and studies/benchmarks/index_cost.py read their loops)."""

from __future__ import annotations

import json
import re
from typing import Any

from graphrag.index.extract.records import COMPLETE, DEFAULT_STRENGTH, TUPLE


def to_records(extraction: dict[str, Any]) -> str:
    """Return an extraction (``ParsedRecords.extraction``'s dict) as record lines, completion
    marker last."""
    lines = [
        f'("entity"{TUPLE}{e["name"]}{TUPLE}{e["type"]}{TUPLE}{e["description"]})'
        for e in extraction.get("entities", [])
    ]
    lines += [
        f'("relationship"{TUPLE}{r["source"]}{TUPLE}{r["target"]}{TUPLE}{r["description"]}'
        f"{TUPLE}{r['strength']})"
        for r in extraction.get("relationships", [])
    ]
    return "\n".join([*lines, COMPLETE])


def records_from_json_reply(reply: str) -> str:
    """Return the record lines of a JSON extraction reply, even one cut at the cap: the demo
    cache still holds replies of the removed JSON format, whose loops tests and studies read as
    records."""
    try:
        value = json.loads(reply)
    except ValueError:
        value = None
    if isinstance(value, dict):
        return to_records(value)
    decoder = json.JSONDecoder()
    found: dict[str, list[dict[str, Any]]] = {"entities": [], "relationships": []}
    for start in (m.start() for m in re.finditer(r"\{", reply)):
        try:
            item, _ = decoder.raw_decode(reply, start)
        except ValueError:
            continue
        if isinstance(item, dict) and {"name", "type", "description"} <= item.keys():
            found["entities"].append(item)
        elif isinstance(item, dict) and {"source", "target", "description"} <= item.keys():
            found["relationships"].append({"strength": DEFAULT_STRENGTH, **item})
    return to_records(found).removesuffix(COMPLETE).rstrip("\n")
