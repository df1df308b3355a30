"""Entities and relationships per text unit, by one LLM call per chunk (or per pack of short
documents) replying in records (record_calls.py); the parsed records become the entity,
relationship and dropped tables here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import display_name, is_clause, mentioned, name_key
from graphrag.index.extract.record_calls import (
    ASKED_AGAIN,
    extract_chunk_records,
    extract_packed_records,
    pack_text_units,
)
from graphrag.index.llm_stage import error_table, run_llm_stage
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings

ENTITY_COLUMNS = [S.TITLE, S.NAME_KEY, S.TYPE, S.DESCRIPTION, S.TEXT_UNIT_ID]
ENDS = [S.SOURCE_ENTITY, S.TARGET_ENTITY, S.SOURCE_KEY, S.TARGET_KEY]
RELATIONSHIP_COLUMNS = [*ENDS, S.DESCRIPTION, S.STRENGTH, S.TEXT_UNIT_ID]


def drop_names_not_in_text(raw: dict[str, Any], text: str) -> tuple[dict[str, Any], list[str]]:
    """Return the extraction without the entities ``text`` never mentions (copied from the
    worked example, or invented) nor their relationships, and the names dropped."""
    return drop_names(raw, lambda name: mentioned(name, text))


def drop_clause_names(raw: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return the extraction without the names that are clauses (names.is_clause) nor their
    relationships, and the names dropped."""
    return drop_names(raw, lambda name: not is_clause(name))


def drop_names(
    raw: dict[str, Any], keep: Callable[[str], bool]
) -> tuple[dict[str, Any], list[str]]:
    """Return the extraction without the entities whose name ``keep`` refuses nor their
    relationships, and the names dropped."""
    entities, relationships = raw.get("entities", []), raw.get("relationships", [])
    names = [e["name"] for e in entities] + [
        n for r in relationships for n in (r["source"], r["target"])
    ]
    dropped = {display_name(name) for name in names if not keep(name)}
    kept = [e for e in entities if display_name(e["name"]) not in dropped]
    ends = ((r, display_name(r["source"]), display_name(r["target"])) for r in relationships)
    linked = [r for r, a, b in ends if a not in dropped and b not in dropped]
    return {"entities": kept, "relationships": linked}, sorted(dropped)


NOT_IN_CHUNK = "not mentioned in its chunk"
CLAUSE_NAME = "a clause, not a name"
SELF_LOOP = "relationship of an entity with itself"
# Kept out of the graph: merging it would change the recorded description-summary prompts.
REPEATED_NAME = "another description of a name already listed in this chunk"


def parse_extraction(
    raw: dict[str, Any], text_unit_id: str, settings: IndexSettings
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Return entity rows, relationship rows and dropped items of one chunk's extraction: an
    unlisted endpoint becomes an entity of unknown type; repeats and self-loops are dropped rows."""
    entities: list[dict[str, Any]] = []
    relationships, dropped = [], []
    seen: dict[str, set[str]] = {}
    for item in raw.get("entities", []):
        title = display_name(item["name"])
        key = name_key(title, settings.aliases)
        description = item["description"].strip()
        if not key or description in seen.get(key, ()):
            continue
        if key in seen:
            seen[key].add(description)
            dropped.append(dropped_row(text_unit_id, title, REPEATED_NAME, description))
            continue
        seen[key] = {description}
        row = (title, key, item["type"], description, text_unit_id)
        entities.append(dict(zip(ENTITY_COLUMNS, row, strict=True)))
    for item in raw.get("relationships", []):
        source, target = display_name(item["source"]), display_name(item["target"])
        source_key, target_key = (name_key(n, settings.aliases) for n in (source, target))
        if not source_key or not target_key:
            continue
        if source_key == target_key:
            name, description = f"{source} -> {target}", item["description"].strip()
            dropped.append(dropped_row(text_unit_id, name, SELF_LOOP, description))
            continue
        for title, key in ((source, source_key), (target, target_key)):
            if key not in seen:
                seen[key] = {""}
                row = (title, key, "unknown", "", text_unit_id)
                entities.append(dict(zip(ENTITY_COLUMNS, row, strict=True)))
        row = (source, target, source_key, target_key, item["description"].strip())
        row += (int(item["strength"]), text_unit_id)
        relationships.append(dict(zip(RELATIONSHIP_COLUMNS, row, strict=True)))
    return entities, relationships, dropped


def dropped_row(text_unit_id: str, name: str, reason: str, description: str = "") -> dict:
    """Return one row of the dropped table."""
    return dict(zip(S.DROPPED_COLUMNS, (text_unit_id, name, reason, description), strict=True))


def extraction_calls(text_units: pd.DataFrame, settings: IndexSettings) -> list[list[int]]:
    """Return the row positions of ``text_units`` each extraction call reads: one unit per
    call, or short whole documents packed together (``index.pack_documents_tokens``)."""
    if not settings.pack_documents_tokens:
        return [[i] for i in range(len(text_units))]
    return pack_text_units(text_units, settings.pack_documents_tokens)


def reextract_empty(
    units: list[tuple[str, str]],
    results: list[dict[str, Any] | None],
    llm: ChatLLM,
    settings: IndexSettings,
    progress: bool,
) -> list[dict[str, str]]:
    """Ask once more, alone and with another worked example, for each unit whose reply named nothing
    its text mentions (a small model may answer the example); return the error rows."""
    empty = []
    for i, ((_, text), result) in enumerate(zip(units, results, strict=True)):
        if result is None:
            continue
        grounded, _ = drop_names_not_in_text(result, text)
        if not grounded["entities"] and not grounded["relationships"]:
            empty.append(i)
    if not empty:
        return []
    calls = [extract_chunk_records(llm, units[i][1], settings, again=True) for i in empty]
    again, errors = run_llm_stage("extract_again", [units[i][0] for i in empty], calls, progress)
    for i, result in zip(empty, again, strict=True):
        first = results[i]
        if result is None or first is None:
            continue
        names = sorted({display_name(e["name"]) for e in first["entities"]})
        note = ("the first reply", ASKED_AGAIN, "; ".join(names)[:200])
        result["kept_out"] = [*first.get("kept_out", []), note, *result["kept_out"]]
        results[i] = result
    return errors


def extract_graph(
    text_units: pd.DataFrame, llm: ChatLLM, settings: IndexSettings, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entity mentions, relationship mentions, errors, dropped): a failed call is an errors
    row (retried next run); names not in the chunk and self-loops are ``dropped`` rows."""
    units = list(text_units[[S.ID, S.TEXT]].itertuples(index=False, name=None))
    groups = extraction_calls(text_units, settings)
    calls = [
        extract_chunk_records(llm, units[group[0]][1], settings)
        if len(group) == 1
        else extract_packed_records(llm, [units[i][1] for i in group], settings)
        for group in groups
    ]
    call_results, errors = run_llm_stage(
        "extract", ["+".join(units[i][0] for i in group) for group in groups], calls, progress
    )
    results: list[dict[str, Any] | None] = [None] * len(units)
    for group, result in zip(groups, call_results, strict=True):
        for i, part in zip(group, [result] if len(group) == 1 else result or [], strict=False):
            results[i] = part
    if settings.reextract_empty:
        errors += reextract_empty(units, results, llm, settings, progress)
    entity_rows, relationship_rows, dropped_rows = [], [], []
    for (unit_id, text), result in zip(units, results, strict=True):
        if result is None:
            continue
        dropped_rows += [dropped_row(unit_id, *item) for item in result.get("kept_out", [])]
        result, ungrounded = drop_names_not_in_text(result, text)
        dropped_rows += [dropped_row(unit_id, name, NOT_IN_CHUNK) for name in ungrounded]
        if settings.drop_clause_names:
            result, clauses = drop_clause_names(result)
            dropped_rows += [dropped_row(unit_id, name, CLAUSE_NAME) for name in clauses]
        entities, relationships, dropped = parse_extraction(result, unit_id, settings)
        entity_rows += entities
        relationship_rows += relationships
        dropped_rows += dropped
    return (
        pd.DataFrame(entity_rows, columns=ENTITY_COLUMNS),
        pd.DataFrame(relationship_rows, columns=RELATIONSHIP_COLUMNS),
        error_table(errors),
        pd.DataFrame(dropped_rows, columns=S.DROPPED_COLUMNS),
    )
