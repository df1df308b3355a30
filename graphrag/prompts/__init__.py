"""Every prompt the workbench sends: builders that fill the template files
(``templates/<name>.txt``, overridable by a user's ``prompts.dir``; see docs/prompts.md) and
assemble the messages, for indexing, querying, question generation and evaluation. The JSON
schemas of the replies (json_schemas.py), the guards that keep document text from reading as
instructions (guards.py) and the template loader (loader.py) are re-exported here: callers
write ``prompts.<name>``. Written for a small model: short instructions, compact JSON.
"""

# ruff: noqa: F401 - the schemas, guards, loader and question prompts are re-exported.
from __future__ import annotations

import json
import re

from graphrag.prompts.guards import FENCE_NOTE, fence_document, neutralize_citations, table_cell
from graphrag.prompts.json_schemas import (
    REPORT_CAPS,
    drift_step_schema,
    fact_filter_schema,
    generated_question_schema,
    map_points_schema,
    map_sentences_schema,
    query_keywords_schema,
    relevance_schema,
    rephrasings_schema,
    report_schema,
    sub_questions_schema,
    verdict_schema,
)
from graphrag.prompts.loader import (
    Messages,
    PromptTemplateError,
    export_templates,
    load_template,
    packaged_template,
    prompt_dir,
    system_and_user,
    template_names,
    use_prompt_dir,
)
from graphrag.prompts.loader import chat as _chat
from graphrag.prompts.question_generation import (
    question_answerable,
    question_bridge,
    question_closed_book,
    question_global,
    question_local,
)


def in_language(name: str, language: str) -> str:
    """Return the template for a text in ``language``: ``<name>_<language>`` when the package
    has one (answer_zh, extract_graph_records_zh, ...), else ``name``. English has none, so an
    English text's prompt is the unsuffixed one, byte for byte."""
    localized = f"{name}_{language}"
    return localized if localized in template_names() else name


# --------------------------------------------------------------------------- indexing
# Extraction shows one worked example as a previous turn: it teaches the record form and
# descriptions that say only what the text says.


def _example_turns(system: str, example: str, text: str, language: str) -> Messages:
    """The record extraction messages: the worked example of the template ``example`` as a
    previous turn, then the text."""
    user = load_template(in_language("extract_graph_records", language))
    shown = load_template(in_language(example, language))
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.render("user", text=shown.text("example_text"))},
        {"role": "assistant", "content": shown.text("example_reply")},
        {"role": "user", "content": user.render("user", text=text)},
    ]


def _records_system(entity_types: list[str], language: str) -> str:
    prompt = load_template(in_language("extract_graph_records", language))
    return prompt.render("system", entity_types=", ".join(entity_types))


# Extraction is asked in the text's language (the caller's lang.detect): a Chinese text gets
# Chinese instructions and a Chinese worked example, so its names and descriptions are not
# translated and the example's (English) names cannot leak into a Chinese graph.


def extract_graph_records(text: str, entity_types: list[str], language: str = "en") -> Messages:
    """Extraction with one tuple-delimited record per line (parsed by
    graphrag/index/extract/records.py; ``index.record_style``). Must return record lines, then
    <|COMPLETE|>."""
    system = _records_system(entity_types, language)
    return _example_turns(system, "extract_graph_records", fence_document(text), language)


def extract_graph_records_again(
    text: str, entity_types: list[str], language: str = "en"
) -> Messages:
    """The record extraction of one text asked again with another worked example
    (``index.reextract_empty``), for a text whose first reply named nothing it mentions."""
    system = _records_system(entity_types, language)
    return _example_turns(system, "extract_graph_records_again", fence_document(text), language)


def extract_graph_records_packed(
    texts: list[str], entity_types: list[str], language: str = "en"
) -> Messages:
    """Extraction of several short documents in one call (``index.pack_documents_tokens``):
    each labelled [1], [2], ...; must return record lines each starting with the label of
    the document it comes from, then <|COMPLETE|>."""
    note = load_template(in_language("extract_graph_records_packed", language)).text("packed_note")
    system = f"{_records_system(entity_types, language)}\n{note}"
    return _example_turns(system, "extract_graph_records_packed", packed_text(texts), language)


def packed_text(texts: list[str]) -> str:
    """Return documents as one labelled text: "[1] first...", blank line, "[2] second..."."""
    return "\n\n".join(f"[{n}] {fence_document(t)}" for n, t in enumerate(texts, start=1))


# The packaged worked examples (tests parse them as a model's reply would be).
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


def _after_reply(previous: Messages, reply: str, template: str, language: str) -> Messages:
    """The conversation so far, the model's ``reply`` and the user turn of ``template``."""
    ask = load_template(in_language(template, language)).text("user")
    return [*previous, {"role": "assistant", "content": reply}, {"role": "user", "content": ask}]


def relationships_after_loop(previous: Messages, kept_reply: str, language: str = "en") -> Messages:
    """After a record reply stopped in a repetition loop before any relationship record
    (``index.stop_repeats``): ask for the relationship records only. Must return record lines,
    then <|COMPLETE|>."""
    return _after_reply(previous, kept_reply, "relationships_after_loop", language)


# Summaries keep every date, number and name (asked for "two sentences", the model dropped
# them), within a length asked for in words.


def summarize_descriptions(
    name: str, descriptions: list[str], max_words: int, language: str = "en"
) -> Messages:
    """Plain text: one description merging several of one entity, every fact kept, in the
    descriptions' ``language``."""
    listed = "\n".join(f"- {d}" for d in descriptions)
    template = in_language("summarize_descriptions", language)
    return _chat(template, {"max_words": max_words}, name=name, descriptions=listed)


def summarize_relationship(
    source: str, target: str, descriptions: list[str], max_words: int, language: str = "en"
) -> Messages:
    """Plain text: one description of how two entities relate, merged from several, in the
    descriptions' ``language``."""
    listed = "\n".join(f"- {d}" for d in descriptions)
    system = {"max_words": max_words}
    template = in_language("summarize_relationship", language)
    return _chat(template, system, source=source, target=target, descriptions=listed)


def community_report(
    context: str, max_findings: int, explanation_sentences: int = 3, language: str = "en"
) -> Messages:
    """A community report (``report_schema``) that keeps its sources' facts and builds on any
    sub-community reports, written in its data's ``language``; ``explanation_sentences`` caps a
    finding's explanation."""
    system = {"max_findings": max_findings, "explanation_sentences": explanation_sentences}
    return _chat(in_language("community_report", language), system, context=context)


# --------------------------------------------------------------------------- querying


def answer(question: str, context: str, style: str = "sentences", language: str = "en") -> Messages:
    """The answer from numbered context, in the question's ``language``: ``answer_<language>``
    when the package has one (answer_zh), else ``answer``."""
    name = in_language("answer", language)
    length = load_template(name).text(f"length_{style}")
    return _chat(name, {"length": length}, context=context, question=question)


def hypothetical_passage(question: str) -> Messages:
    """HyDE: a passage that would answer the question; returns plain text."""
    return _chat("hypothetical_passage", question=question)


def recognize_facts(question: str, facts: str) -> Messages:
    """HippoRAG 2's recognition filter: must return {relevant: [fact numbers]}."""
    return _chat("recognize_facts", facts=facts, question=question)


def rephrase(question: str, n: int) -> Messages:
    """Multi-query: must return {queries: [n strings]}."""
    return _chat("rephrase", {"n": n}, question=question)


def step_back(question: str) -> Messages:
    """Step-back prompting: a more general question, searched beside it; returns plain text."""
    return _chat("step_back", question=question)


def decompose(question: str, n: int) -> Messages:
    """Decomposition: must return {sub_questions: [1 to n strings]}, "#1" naming answer 1."""
    return _chat("decompose", {"n": n}, question=question)


def sub_answer(question: str, earlier: str, context: str) -> Messages:
    """Decomposition's answer of one sub-question: a short answer on one line, or "unknown"."""
    return _chat("sub_answer", context=context, earlier=earlier or "none", question=question)


def rerank(question: str, passages: str, n: int) -> Messages:
    """The listwise rerank stage: the ``n`` numbered passages' numbers, most useful first."""
    return _chat("rerank", {"n": n}, passages=passages, question=question)


def global_map(question: str, reports: str, language: str = "en") -> Messages:
    """Global search map step: must return {points: [{description, score 0-100}]}, written in
    the question's ``language`` (global_map_zh)."""
    return _chat(in_language("global_map", language), reports=reports, question=question)


def global_map_sentences(question: str, sentences: str) -> Messages:
    """Global search's extractive map step: must return {sentences: [{n, score 0-100}]}, the
    numbers of the report sentences that help answer (the reduce reads the reports' words)."""
    return _chat("global_map_sentences", sentences=sentences, question=question)


def relevance_test(question: str, sentences: str) -> Messages:
    """Budgeted global search's relevance test of one text chunk: must return
    {relevant: [n, ...]}, the numbers of its sentences that help answer ([]: not relevant)."""
    return _chat("relevance_test", sentences=sentences, question=question)


def _reduce_length(style: str, language: str) -> dict[str, object]:
    reduce = load_template(in_language("global_reduce", language))
    return {"length": reduce.text(f"length_{style}")}


def global_reduce(
    question: str, points: str, style: str = "sentences", language: str = "en"
) -> Messages:
    """Global search's answer from the map's points, in the question's ``language``."""
    length = _reduce_length(style, language)
    return _chat(in_language("global_reduce", language), length, points=points, question=question)


def global_merge(
    question: str, drafts: list[str], style: str = "sentences", language: str = "en"
) -> Messages:
    """Global search's last call with ``query.global.reduce_seeds``: one answer from the
    reduce's drafts, each written from the same points read in another order."""
    name = in_language("global_merge", language)
    prompt = load_template(name)
    labelled = "\n\n".join(
        prompt.render("draft", letter=chr(ord("A") + i), draft=draft.strip())
        for i, draft in enumerate(drafts)
    )
    return _chat(name, _reduce_length(style, language), drafts=labelled, question=question)


# Answers given without asking the model, by the question's language.
NO_RELEVANT_REPORTS = {
    "en": "I do not know: none of the community reports contains information relevant to this "
    "question.",
    "zh": "我不知道：没有一份社区报告包含与这个问题相关的信息。",
}
NO_DRIFT_ANSWERS = {
    "en": "I do not know: the search found nothing relevant to this question.",
    "zh": "我不知道：搜索没有找到与这个问题相关的内容。",
}
# Text-to-Cypher's answer when the graph cannot answer, by the question's language
NOT_IN_GRAPH_ANSWERS = {
    "en": "Not in the graph: no query over the knowledge graph found an answer to this question.",
    "zh": "图谱中没有答案：对知识图谱的查询没有找到这个问题的答案。",
}


def cypher_query(question: str, schema: str) -> Messages:
    """Text-to-Cypher: must return one Cypher query, or NOT_IN_GRAPH."""
    return _chat("cypher_query", {"schema": schema}, question=question)


def cypher_repair(previous: Messages, reply: str, query: str, error: str) -> Messages:
    """The query conversation so far, then the error its query met: must return a corrected
    query, or NOT_IN_GRAPH."""
    ask = load_template("cypher_query").render("repair", query=query, error=error)
    return [*previous, {"role": "assistant", "content": reply}, {"role": "user", "content": ask}]


def cypher_answer(question: str, query: str, rows: str) -> Messages:
    """Text-to-Cypher's answer from the rows its query returned; returns plain text."""
    return _chat("cypher_answer", query=query, rows=fence_document(rows), question=question)


# DRIFT: the primer and every follow-up step must return ``drift_step_schema``.


def drift_primer(
    question: str, reports: str, max_follow_ups: int, language: str = "en"
) -> Messages:
    """DRIFT primer over the community reports closest to a hypothetical answer; its answer
    and follow-ups in the question's ``language`` (as every DRIFT prompt below)."""
    system = {"max_follow_ups": max_follow_ups}
    name = in_language("drift_primer", language)
    return _chat(name, system, reports=reports, question=question)


def drift_follow_up(
    question: str, follow_up: str, context: str, max_follow_ups: int, language: str = "en"
) -> Messages:
    """DRIFT step: a follow-up question answered from a local-search context."""
    system = {"max_follow_ups": max_follow_ups}
    user = {"context": context, "question": question, "follow_up": follow_up}
    return _chat(in_language("drift_follow_up", language), system, **user)


def drift_reduce(question: str, answers: str, language: str = "en") -> Messages:
    """DRIFT final answer from the ranked intermediate answers; returns plain text."""
    return _chat(in_language("drift_reduce", language), answers=answers, question=question)


def minirag_keywords(question: str, type_pool: dict[str, list[str]]) -> Messages:
    """MiniRAG's query mapping over ``type_pool`` ({type: two example entity names}): must
    return ``query_keywords_schema``."""
    pool = json.dumps(type_pool, ensure_ascii=False)
    return _chat("minirag_keywords", question=question, type_pool=pool)


# --------------------------------------------------------------------------- evaluation
# The final-answer line of benchmark sets and the pairwise judge (RAGAS's prompts are its own).

FINAL_ANSWER_INSTRUCTION = packaged_template("with_final_answer_line").text("instruction")


def with_final_answer_line(messages: Messages) -> Messages:
    """Benchmark sets: the same answer prompt, also asking for a final 'Answer: …' line, the
    one exact match and token F1 score. It closes the last user turn, after the question: at
    the end of the system prompt the 1.5B model ignored it in every recorded MuSiQue answer."""
    *before, last = messages
    instruction = load_template("with_final_answer_line").text("instruction")
    return [*before, {**last, "content": f"{last['content']}\n\n{instruction}"}]


# criterion name -> what it asks (the criterion_<name> sections of answer_rating)
PAIRWISE_CRITERIA = {
    key.removeprefix("criterion_"): packaged_template("answer_rating").text(key)
    for key in packaged_template("answer_rating").sections
    if key.startswith("criterion_")
}

RATING_SCALE = (1, 2, 3, 4, 5)


def answer_rating(question: str, answer: str, criterion: str) -> Messages:
    """The pairwise judge: one answer rated alone (no order to bias it) on one criterion, a
    digit of RATING_SCALE. The criterion comes last, so the criteria share a cached prefix."""
    meaning = load_template("answer_rating").text(f"criterion_{criterion}")
    user = {"question": question, "answer": answer, "criterion": criterion, "meaning": meaning}
    return _chat("answer_rating", **user)
