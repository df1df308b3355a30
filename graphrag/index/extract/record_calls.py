"""Extraction calls in the record format: one plain-text call per chunk (or per pack of short
documents, ``index.pack_documents_tokens``), its reply parsed by records.py; what a reply got
wrong becomes ``dropped`` rows, never an exception."""

from __future__ import annotations

from typing import Any

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.names import mentioned
from graphrag.index.extract.records import RECORD_STOP, ParsedRecords, parse_records
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings
from graphrag.text import lang
from graphrag.text.tokens import message_tokens

MALFORMED_RECORD = "malformed record line"
REPEATED_RECORDS = "repeated records dropped"
STOPPED_EARLY = "reply stopped early (index.stop_repeats)"
ASKED_AGAIN = "first reply named nothing the text mentions; asked again (index.reextract_empty)"
# Completion room per document of a packed call (a short paragraph's records, with spare).
PACKED_TOKENS_PER_DOCUMENT = 300


async def extract_chunk_records(
    llm: ChatLLM, text: str, settings: IndexSettings, again: bool = False
) -> dict[str, Any]:
    """Return the chunk's extraction, ``"kept_out"`` listing (name, reason, detail) of what it got
    wrong; ``again``: asked with the second worked example (``index.reextract_empty``)."""
    build = prompts.extract_graph_records_again if again else prompts.extract_graph_records
    language = texts_language([text])
    messages = _styled(build(text, settings.entity_types, language), settings)
    reply, stops = await _records_reply(llm, messages, settings, language=language)
    parsed = parse_records(reply)
    return {**parsed.extraction(), "kept_out": _kept_out(parsed, stops)}


def _styled(messages: list[dict[str, str]], settings: IndexSettings) -> list[dict[str, str]]:
    """Return the extraction ``messages`` in the record style the settings ask for."""
    return prompts.in_pipe_style(messages) if settings.record_style == "pipe" else messages


async def _records_reply(
    llm: ChatLLM,
    messages: list[dict[str, str]],
    settings: IndexSettings,
    max_tokens: int | None = None,
    language: str = "en",
) -> tuple[str, list[str]]:
    """Return the reply and why it stopped early. A reply stopped or cut before any relationship
    (or, ``index.relationships_follow_up``, one with 2+ entities and none) gets a relationships
    call, in the extraction's ``language``."""
    rule = RECORD_STOP if settings.stop_repeats else None
    completion = await llm.achat(messages, max_tokens=max_tokens, stop_rule=rule)
    reply, stops = completion.text, [completion.stopped_early]
    capped = completion.finish_reason == "length" and not completion.stopped_early
    cut = completion.stopped_early or capped
    first = parse_records(reply) if cut or settings.relationships_follow_up else None
    if first is not None and not first.relationships and (cut or len(first.entities) >= 2):
        kept = reply.rpartition("\n")[0] if capped else reply
        follow_up = await llm.achat(
            prompts.relationships_after_loop(messages, kept.rstrip("\n"), language),
            max_tokens=max_tokens,
            stop_rule=rule,
        )
        reply = reply.rstrip("\n") + "\n" + follow_up.text
        stops.append(follow_up.stopped_early)
    return reply, [s for s in stops if s]


def _kept_out(parsed: ParsedRecords, stops: list[str]) -> list[tuple[str, str, str]]:
    """Return (name, reason, detail) rows of the dropped table for what a reply got wrong."""
    kept_out = [
        (line[:200], MALFORMED_RECORD, f"line {n}: {why}") for n, line, why in parsed.malformed
    ]
    if parsed.duplicates:
        kept_out.append((f"{parsed.duplicates} records", REPEATED_RECORDS, ""))
    kept_out += [("the rest of the reply", STOPPED_EARLY, why) for why in stops]
    return kept_out


def pack_text_units(text_units: pd.DataFrame, budget: int) -> list[list[int]]:
    """Return the extraction calls as groups of row positions: consecutive whole-document units up
    to ``budget`` tokens, so short paragraphs share the prompt's fixed part; other chunks alone."""
    document_of = text_units[S.DOCUMENT_IDS].map(lambda ids: ids[0] if len(ids) == 1 else None)
    units_per_document = document_of.value_counts()
    groups: list[list[int]] = []
    packed, size = [], 0
    sizes = zip(document_of, text_units[S.N_TOKENS], strict=True)
    for position, (document, n_tokens) in enumerate(sizes):
        whole = document is not None and units_per_document[document] == 1
        if packed and (not whole or size + n_tokens > budget):
            groups.append(packed)
            packed, size = [], 0
        if whole and n_tokens < budget:
            packed.append(position)
            size += n_tokens
        else:
            groups.append([position])
    if packed:
        groups.append(packed)
    return groups


def texts_language(texts: list[str]) -> str:
    """Return the language the records extraction of ``texts`` is asked in: that of them all,
    read as one text (a pack mixing scripts is asked in its majority's)."""
    return lang.detect("\n".join(texts))


def records_request(
    llm: ChatLLM, texts: list[str], settings: IndexSettings, language: str
) -> tuple[list[dict[str, str]], int | None]:
    """Return the first request of the records extraction of ``texts`` (one chunk, or whole
    documents packed) in ``language`` (:func:`texts_language`): its messages and its reply cap
    (None: ``llm.max_tokens``)."""
    if len(texts) == 1:
        messages = prompts.extract_graph_records(texts[0], settings.entity_types, language)
        return _styled(messages, settings), None
    packed = prompts.extract_graph_records_packed(texts, settings.entity_types, language)
    messages = _styled(packed, settings)
    return messages, _packed_room(llm, messages, len(texts))


def _packed_room(llm: ChatLLM, messages: list[dict[str, str]], documents: int) -> int:
    """Return the completion room of a packed call: ``llm.max_tokens``, or more with many
    documents (a cut-off reply loses the records of the last ones), within the context."""
    room = max(llm.settings.llm.max_tokens, documents * PACKED_TOKENS_PER_DOCUMENT)
    limit = llm.context_limit()
    return room if limit is None else max(1, min(room, limit - message_tokens(messages)))


def _record_unit(kind: str, record: dict[str, Any], texts: list[str]) -> int:
    """Return the document (position in ``texts``) a packed record belongs to: its label if that
    document mentions its names, else the first that does, else its label, else the first."""
    names = [record["name"]] if kind == "entity" else [record["source"], record["target"]]
    label = record.pop("label", None)
    labelled = int(label) - 1 if label and label.isdigit() and int(label) <= len(texts) else None
    fits = [i for i, text in enumerate(texts) if all(mentioned(n, text) for n in names)]
    if labelled is not None and (labelled in fits or not fits):
        return labelled
    return fits[0] if fits else 0


async def extract_packed_records(
    llm: ChatLLM, texts: list[str], settings: IndexSettings
) -> list[dict[str, Any]]:
    """Return one extraction per document of a packed call (as :func:`extract_chunk_records`); what
    the reply got wrong as a whole is listed with the first document."""
    language = texts_language(texts)
    messages, room = records_request(llm, texts, settings, language)
    reply, stops = await _records_reply(llm, messages, settings, room, language)
    parsed = parse_records(reply)
    results = [{"entities": [], "relationships": [], "kept_out": []} for _ in texts]
    for kind, records in (("entity", parsed.entities), ("relationship", parsed.relationships)):
        for record in records:
            unit = results[_record_unit(kind, record, texts)]
            unit["entities" if kind == "entity" else "relationships"].append(record)
    results[0]["kept_out"] = _kept_out(parsed, stops)
    return results
