"""The index's requests that are streamed under a stop rule, told apart by their body: what
``graphrag cache migrate`` (graphrag/llm/migrate.py) needs to key an older record under the
rule it was recorded with. A new streamed request family is added here with its rule."""

from __future__ import annotations

from typing import Any

from graphrag import prompts
from graphrag.index.extract.records import RECORD_STOP
from graphrag.llm.migrate import StreamedFamily
from graphrag.settings import IndexSettings


def _records_opening() -> str:
    """The opening the record-format extraction prompts share (every version recorded so far:
    up to the first comma of the system message)."""
    system = prompts.extract_graph_records("", IndexSettings().entity_types)[0]["content"]
    return system.split(",")[0]


def streamed_families() -> list[StreamedFamily]:
    """Return the index's streamed request families with their stop rules."""
    opening = _records_opening()

    def is_record_extraction(body: dict[str, Any]) -> bool:
        messages = body.get("messages") or []
        return (
            "response_format" not in body
            and bool(messages)
            and messages[0].get("role") == "system"
            and str(messages[0].get("content", "")).startswith(opening)
        )

    return [StreamedFamily(RECORD_STOP, is_record_extraction)]
