"""Text-to-Cypher: the model writes one read-only query over the graph database holding the index
(or says NOT_IN_GRAPH); the guard (stores/cypher_guard.py) bounds it; an error or no rows get
one repair turn; the rows are the context, their entities' text units the sources. No rows
after the repair: the answer is "not in the graph", never a guess (docs/methods.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from graphrag import prompts
from graphrag.query.base import Answer, ContextItem, Method, Retrieval, note_failure
from graphrag.query.registry import register
from graphrag.stores.cypher_guard import CypherRefused, GuardLimits, run_guarded
from graphrag.stores.graph_db import (
    GraphDatabase,
    GraphQueryError,
    default_graph_db_path,
    open_graph_db,
)
from graphrag.text import lang

NOT_IN_GRAPH = "NOT_IN_GRAPH"
ROWS_SOURCE = "cypher:rows"
VALUE_CHARS = 160  # a longer value (a description) is cut in the answer prompt
# what the query prompt leaves out of the schema: keys and numbers no question asks about
HIDDEN_PROPERTIES = frozenset(
    {"id", "human_readable_id", "n_tokens", "frequency", "text_unit_ids", "rating", "size"}
    | {"community", "weight", "source"}
)
VALUES_CHARS = 160  # a categorical property's values are listed up to this length
EXAMPLE_CHARS = 40
_CLAUSE = re.compile(r"\b(?:OPTIONAL\s+MATCH|MATCH|WITH|UNWIND|RETURN|CALL)\b", re.IGNORECASE)
_FENCE = re.compile(r"```(?:cypher)?\s*(.*?)(?:```|$)", re.DOTALL | re.IGNORECASE)
# the workbench's own query: the text units the rows' entities came from (values as parameters)
PROVENANCE = (
    "MATCH (e:Entity)-[:MENTIONED_IN]->(t:TextUnit) WHERE e.title IN $values OR e.id IN $values "
    "RETURN t.id AS id, count(DISTINCT e) AS n ORDER BY n DESC, id"
)


QUERY_MAX_TOKENS = 200  # a query longer than this is one the guard would refuse anyway


# Seconds a query may run before the engine stops it (an error the repair turn reads)
TIMEOUT_S = 10.0


@dataclass
class CypherSettings:
    """``[query.cypher]``."""

    database: str = ""
    """The graph database: a LadybugDB folder or a bolt:// URL ("": the index's own LadybugDB
    beside its folder, loaded from the index on first use, as `graphrag graph export`)."""
    max_rows: int = 30
    """Rows a query may return (its LIMIT is added or clamped), all shown to the model."""


def query_of(reply: str) -> str | None:
    """Return the Cypher query in the model's ``reply`` (None: it wrote NOT_IN_GRAPH)."""
    fenced = _FENCE.search(reply)
    text = (fenced.group(1) if fenced else reply).strip()
    start = _CLAUSE.search(text)
    if start is None:
        return None if NOT_IN_GRAPH in reply.upper() else text
    return text[start.start() :].split("\n\n")[0].strip()


def _value(value: Any) -> str:
    text = str(value)
    return text if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 3] + "..."


def rows_text(rows: list[dict[str, Any]]) -> str:
    """Return the rows one per line, ``column: value`` pairs (long values cut)."""
    return "\n".join(", ".join(f"{k}: {_value(v)}" for k, v in row.items()) for row in rows)


def row_values(rows: list[dict[str, Any]]) -> list[str]:
    """Return every string in the rows (inside lists too), in order, once."""
    found: list[str] = []
    for row in rows:
        for value in row.values():
            items = value if isinstance(value, list | tuple) else [value]
            found += [v for v in items if isinstance(v, str)]
    return list(dict.fromkeys(found))


def schema_prompt(schema: dict[str, Any]) -> str:
    """Return the schema as the few lines a small model reads at each question: labels and types
    with the properties a question asks about, a categorical's values, two short examples."""

    def props(about: dict[str, Any]) -> tuple[str, str]:
        shown = {p: a for p, a in about["properties"].items() if p not in HIDDEN_PROPERTIES}
        names = "{" + ", ".join(shown) + "}" if shown else ""
        notes = []
        for name, a in shown.items():
            values = a.get("values") or []
            if values and sum(len(str(v)) for v in values) <= VALUES_CHARS:
                notes.append(f"{name} one of {', '.join(map(repr, values))}")
            else:
                examples = (a.get("examples") or values)[:2]
                if examples and all(
                    isinstance(v, str) and len(v) <= EXAMPLE_CHARS for v in examples
                ):
                    notes.append(f"{name} e.g. {', '.join(map(repr, examples))}")
        return names, "; ".join(notes)

    lines = []
    for label, about in schema["nodes"].items():
        names, notes = props(about)
        lines.append(f"(:{label} {names}) {about['count']} nodes" + (f": {notes}" if notes else ""))
    for kind, about in schema["relationships"].items():
        names, notes = props(about)
        rel = f"[:{kind}{' ' + names if names else ''}]"
        line = f"(:{about['from']})-{rel}->(:{about['to']}) {about['count']} edges"
        lines.append(line + (f": {notes}" if notes else ""))
    return "\n".join(lines)


def not_in_graph(question: str) -> str:
    return prompts.NOT_IN_GRAPH_ANSWERS[lang.detect(question)]


@register("cypher", settings=CypherSettings, opt_in=True, order=95)
class TextToCypher(Method):
    @cached_property
    def db(self) -> GraphDatabase:
        """The graph database, opened read-only (the index loaded into it first, when it is
        the index's own database: a no-op once it holds the index)."""
        target = self.options.database or str(default_graph_db_path(self.index.path))
        if not self.options.database:
            with open_graph_db(target) as writable:
                writable.load(self.index)
        return open_graph_db(target, read_only=True)

    @cached_property
    def schema_text(self) -> str:
        return schema_prompt(self.db.schema())

    def _limits(self) -> GuardLimits:
        return GuardLimits(max_rows=self.options.max_rows)

    async def _ask(self, messages: prompts.Messages) -> str:
        reply = await self.llm.achat(messages, max_tokens=QUERY_MAX_TOKENS)
        return reply.text

    def _run(self, query: str) -> tuple[str, list[dict[str, Any]]]:
        """Return the query as run and its rows; an empty result is an error to repair."""
        bounded, rows = run_guarded(self.db, query, self._limits(), TIMEOUT_S)
        if not rows:
            raise GraphQueryError("the query returned no rows")
        return bounded, rows

    async def aquery(self, question: str) -> tuple[str, list[dict[str, Any]]]:
        """Return the query that answered and its rows (none: the graph cannot answer)."""
        messages = prompts.cypher_query(question, self.schema_text)
        reply = await self._ask(messages)
        query = query_of(reply)
        if query is None:
            return "", []
        try:
            return self._run(query)
        except (CypherRefused, GraphQueryError) as err:
            error = str(err)
        repaired = query_of(await self._ask(prompts.cypher_repair(messages, reply, query, error)))
        if repaired is None:
            return "", []
        try:
            return self._run(repaired)
        except (CypherRefused, GraphQueryError) as err:
            note_failure(f"cypher query after repair: {err}")
            return repaired, []

    def sources(self, rows: list[dict[str, Any]]) -> list[str]:
        """Return the text units the rows' entities were extracted from (and any text unit the
        rows name), the most mentioned first."""
        values = row_values(rows)
        found = self.db.run(PROVENANCE, {"values": values}, timeout_s=TIMEOUT_S)
        units = set(self.stores.unit_text.index)
        named = [v for v in values if v in units]
        return self.text_unit_ids(list(dict.fromkeys([*named, *(r["id"] for r in found)])))

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        query, rows = await self.aquery(question)
        if not rows:
            return Retrieval([], [])
        text = f"Query: {query}\nRows:\n{rows_text(rows)}"
        return Retrieval([ContextItem(ROWS_SOURCE, text)], self.sources(rows))

    async def awrite(self, question: str, retrieval: Retrieval, short_answer: bool) -> str:
        if not retrieval.items:
            return not_in_graph(question)
        query, _, rows = retrieval.items[0].text.removeprefix("Query: ").partition("\nRows:\n")
        messages = prompts.cypher_answer(question, query, rows)
        return await self.final_answer(messages, short_answer)

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        """The answer, its sources the text units its rows came from (not the rows)."""
        answer = await super().aanswer(question, short_answer)
        answer.sources = list(answer.ranking)
        return answer
