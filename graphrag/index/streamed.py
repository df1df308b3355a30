"""The index's requests that are streamed under a stop rule, told apart by their body: what
``graphrag cache migrate`` (graphrag/llm/migrate.py) needs to key an older record under the
rule it was recorded with. A new streamed request family is added here with its rule."""

from __future__ import annotations

from typing import Any

from graphrag import prompts
from graphrag.index.extract.records import RECORD_STOP
from graphrag.index.reports.stop import REPORT_COPY_STOP
from graphrag.index.reports.write import REPORT_SCHEMA_NAME
from graphrag.llm.migrate import StreamedFamily
from graphrag.settings import IndexSettings


def _schema_name(body: dict[str, Any]) -> str | None:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name")


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

    def is_report(body: dict[str, Any]) -> bool:
        return _schema_name(body) == REPORT_SCHEMA_NAME

    return [
        StreamedFamily(RECORD_STOP, is_record_extraction),
        StreamedFamily(REPORT_COPY_STOP, is_report),
    ]
