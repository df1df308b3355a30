"""The prompts of indexing: graph extraction (JSON or records, with its worked examples and
follow-up turns), description summaries and community reports."""

from __future__ import annotations

import re

from graphrag.prompts.guards import fence_document
from graphrag.prompts.loader import load_template, packaged_template
from graphrag.prompts.messages import Messages, system_and_user

# Extraction shows one worked example as a previous turn: it teaches the compact one-line form
# (the model pretty-prints JSON otherwise) and descriptions that say only what the text says.


def _example_turns(system: str, example: str, text: str) -> Messages:
    """The record extraction messages: the worked example of the template ``example`` as a
    previous turn, then the text."""
    user, shown = load_template("extract_graph_records"), load_template(example)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.render("user", text=shown.text("example_text"))},
        {"role": "assistant", "content": shown.text("example_reply")},
        {"role": "user", "content": user.render("user", text=text)},
    ]


def extract_graph(text: str, entity_types: list[str]) -> Messages:
    """Extraction as JSON (``extraction_schema``)."""
    prompt = load_template("extract_graph")
    return [
        {
            "role": "system",
            "content": prompt.render("system", entity_types=", ".join(entity_types)),
        },
        {"role": "user", "content": prompt.render("user", text=prompt.text("example_text"))},
        {"role": "assistant", "content": prompt.text("example_reply")},
        {"role": "user", "content": prompt.render("user", text=fence_document(text))},
    ]


def _records_system(entity_types: list[str]) -> str:
    return load_template("extract_graph_records").render(
        "system", entity_types=", ".join(entity_types)
    )


def extract_graph_records(text: str, entity_types: list[str]) -> Messages:
    """Extraction with one tuple-delimited record per line (``index.extraction_format =
    "records"``; parsed by graphrag/index/extract/records.py). Must return record lines, then
    <|COMPLETE|>."""
    system = _records_system(entity_types)
    return _example_turns(system, "extract_graph_records", fence_document(text))


def extract_graph_records_again(text: str, entity_types: list[str]) -> Messages:
    """The record extraction of one text asked again with another worked example
    (``index.reextract_empty``), for a text whose first reply named nothing it mentions."""
    system = _records_system(entity_types)
    return _example_turns(system, "extract_graph_records_again", fence_document(text))


def extract_graph_records_packed(texts: list[str], entity_types: list[str]) -> Messages:
    """Extraction of several short documents in one call (``index.pack_documents_tokens``):
    each document is labelled [1], [2], ...; must return record lines each starting with the
    label of the document it comes from, then <|COMPLETE|>."""
    note = load_template("extract_graph_records_packed").text("packed_note")
    system = f"{_records_system(entity_types)}\n{note}"
    return _example_turns(system, "extract_graph_records_packed", packed_text(texts))


def packed_text(texts: list[str]) -> str:
    """Return documents as one labelled text: "[1] first...", blank line, "[2] second..."."""
    return "\n\n".join(f"[{n}] {fence_document(t)}" for n, t in enumerate(texts, start=1))


# The packaged worked examples (a test checks the records say what the JSON example says).
EXAMPLE_RECORDS = packaged_template("extract_graph_records").text("example_reply")
SECOND_EXAMPLE_RECORDS = packaged_template("extract_graph_records_again").text("example_reply")
EXAMPLE_PACKED_RECORDS = packaged_template("extract_graph_records_packed").text("example_reply")
PACKED_NOTE = "\n" + packaged_template("extract_graph_records_packed").text("packed_note")

_TUPLE_RECORD = re.compile(r'\("(entity|relationship)"<\|>(.*?)\)(?=[:\n]|$)', re.MULTILINE)


def pipe_style(text: str) -> str:
    """Return ``text`` with each tuple-style record, ``("entity"<|>name<|>type<|>...)``, in the
    pipe style, ``entity|name|type|...`` (``index.record_style = "pipe"``)."""
    return _TUPLE_RECORD.sub(lambda m: f"{m[1]}|{m[2].replace('<|>', '|')}", text)


def in_pipe_style(messages: Messages) -> Messages:
    """Return record-extraction ``messages`` with their format description and worked
    examples in the pipe style; the user turns (the texts) are left as they are."""
    return [
        m if m["role"] == "user" else {**m, "content": pipe_style(m["content"])} for m in messages
    ]


def _after_reply(previous: Messages, reply: str, ask: str) -> Messages:
    """The conversation so far, the model's ``reply`` and one more user turn ``ask``."""
    return [*previous, {"role": "assistant", "content": reply}, {"role": "user", "content": ask}]


def glean_more(previous: Messages, previous_reply: str) -> Messages:
    """A gleaning round: show the first reply and ask only for what was missed."""
    return _after_reply(previous, previous_reply, load_template("glean_more").text("user"))


def relationships_after_loop(previous: Messages, kept_reply: str) -> Messages:
    """After a record reply stopped in a repetition loop before any relationship record
    (``index.stop_repeats``): ask for the relationship records only. Must return record lines,
    then <|COMPLETE|>."""
    ask = load_template("relationships_after_loop").text("user")
    return _after_reply(previous, kept_reply, ask)


# Summaries keep every date, number and name (asked for "two sentences", the model dropped
# them), within a length asked for in words.


def _descriptions(descriptions: list[str]) -> str:
    return "\n".join(f"- {d}" for d in descriptions)


def summarize_descriptions(name: str, descriptions: list[str], max_words: int) -> Messages:
    """Plain text: one description merging several of one entity, every fact kept."""
    prompt = load_template("summarize_descriptions")
    return system_and_user(
        prompt.render("system", max_words=max_words),
        prompt.render("user", name=name, descriptions=_descriptions(descriptions)),
    )


def summarize_relationship(
    source: str, target: str, descriptions: list[str], max_words: int
) -> Messages:
    """Plain text: one description of how two entities relate, merged from several."""
    prompt = load_template("summarize_relationship")
    return system_and_user(
        prompt.render("system", max_words=max_words),
        prompt.render(
            "user", source=source, target=target, descriptions=_descriptions(descriptions)
        ),
    )


def community_report(context: str, max_findings: int, explanation_sentences: int = 3) -> Messages:
    """A community report (``report_schema``) that keeps its sources' facts and builds on any
    sub-community reports; ``explanation_sentences`` caps a finding's explanation."""
    prompt = load_template("community_report")
    system = prompt.render(
        "system", max_findings=max_findings, explanation_sentences=explanation_sentences
    )
    return system_and_user(system, prompt.render("user", context=context))
