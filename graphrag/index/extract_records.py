"""Extraction in the record format (``index.extraction_format = "records"``): one plain-text
call per chunk whose reply is parsed line by line (graphrag/index/records.py).

A reply cut off at the token cap is not a failure here, unlike a cut-off JSON reply: every
record finished before the cap is kept, and the unfinished last line is reported. Malformed
lines and the count of repeated records become rows of the index's ``dropped`` table (with
why), never an exception. Gleaning is not offered in this format yet.
"""

from __future__ import annotations

from typing import Any

from graphrag import prompts
from graphrag.config import IndexSettings
from graphrag.index.records import parse_records
from graphrag.llm import ChatLLM

MALFORMED_RECORD = "malformed record line"
REPEATED_RECORDS = "repeated records dropped"
STOPPED_EARLY = "reply stopped early (index.stop_repeats)"


async def extract_chunk_records(llm: ChatLLM, text: str, settings: IndexSettings) -> dict[str, Any]:
    """Return the chunk's extraction in the JSON format's shape; ``"kept_out"`` lists
    (name, reason, detail) of malformed lines and repeats for the dropped table."""
    completion = await llm.achat(
        prompts.extract_graph_records(text, settings.entity_types),
        stop_rule="records" if settings.stop_repeats else None,
    )
    parsed = parse_records(completion.text)
    kept_out = [
        (line[:200], MALFORMED_RECORD, f"line {n}: {why}") for n, line, why in parsed.malformed
    ]
    if parsed.duplicates:
        kept_out.append((f"{parsed.duplicates} records", REPEATED_RECORDS, ""))
    if completion.stopped_early:
        kept_out.append(("the rest of the reply", STOPPED_EARLY, completion.stopped_early))
    return {**parsed.extraction(), "errors": [], "kept_out": kept_out}
