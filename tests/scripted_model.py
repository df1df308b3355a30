"""A scripted model that answers every prompt the workbench sends, for end-to-end tests where
the pipeline, not the model, is under test.

Indexing prompts get the graph of the chunk's capitalized names (``conftest.indexing_model``);
a request whose reply must fit a JSON schema (``response_format`` json_schema, or a schema
written into the prompt, as ragas does) gets the smallest instance of that schema, its text
drawn from the prompt; any other prompt gets a short answer naming the first name in the
prompt's last message, with a citation and an ``Answer:`` line.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import indexing_model, names_in

INDEXING = ("You build a knowledge graph", "You merge several", "You write a report")


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return defs[ref.rsplit("/", 1)[1]] if ref else schema


def _text(key: str, names: list[str]) -> str:
    """A string for the field ``key``: a question about the last name, a name for an answer or
    a keyword, else a sentence naming the first."""
    if key == "question":
        return f"Who appears together with {names[-1]}?"
    if key in ("answer", "keywords", "name", "title", "source", "target"):
        return names[0]
    return f"{names[0]} is named in the text."


def schema_instance(
    schema: dict[str, Any], names: list[str], defs: dict | None = None, key: str = ""
) -> Any:
    """The smallest value valid against ``schema`` (objects with their required fields,
    arrays at their least length, at least one), strings from ``names`` (see _text)."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    schema = _resolve(schema, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        if combinator in schema:
            options = [o for o in schema[combinator] if _resolve(o, defs).get("type") != "null"]
            return schema_instance(options[0], names, defs, key)
    kind = schema.get("type", "object")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        keys = schema.get("required", list(props))
        return {k: schema_instance(props.get(k, {"type": "string"}), names, defs, k) for k in keys}
    if kind == "array":
        count = max(1, schema.get("minItems", 1))
        if "maxItems" in schema:
            count = min(count, schema["maxItems"])
        item = schema.get("items", {"type": "string"})
        return [schema_instance(item, names[i:] + names[:i], defs, key) for i in range(count)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    text = _text(key, names)
    return text[: schema.get("maxLength", len(text))].ljust(schema.get("minLength", 0), ".")


def _schema_in(text: str) -> dict[str, Any] | None:
    """The JSON schema written into a prompt after "json_schema:" / "JSON Schema:", if any."""
    for marker in ("json_schema:", "JSON Schema:"):
        at = text.find(marker)
        if at >= 0:
            start = text.find("{", at)
            try:
                return json.JSONDecoder().raw_decode(text[start:])[0]
            except ValueError:
                continue
    return None


def scripted_model(body: dict[str, Any]) -> str:
    """Answer any request of the workbench's (see the module docstring)."""
    messages = body["messages"]
    if messages[0]["content"].startswith(INDEXING):
        return indexing_model(body)
    last = str(messages[-1]["content"])
    names = names_in(last) or ["The Text"]
    format_ = body.get("response_format") or {}
    schema = format_.get("json_schema", {}).get("schema") or next(
        (s for s in (_schema_in(str(m["content"])) for m in messages) if s), None
    )
    if schema is not None:
        return json.dumps(schema_instance(schema, names))
    return f"{names[0]} is what the sources say [1].\nAnswer: {names[0]}"
