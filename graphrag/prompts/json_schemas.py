"""The JSON schemas replies must follow, one per prompt that returns JSON.

Every schema has hard caps (``maxItems``, ``maxLength``): a small model pads structured output
until ``max_tokens`` when nothing stops it. The parsers downstream read these fields. Key
order is part of the request body the LLM cache is keyed by: keep it.
"""

from __future__ import annotations

from typing import Any

_SCORE = {"type": "integer", "minimum": 0, "maximum": 100}


def _object(properties: dict[str, Any]) -> dict:
    """An object schema requiring every one of ``properties``, and nothing else."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _array(items: dict, max_items: int, min_items: int | None = None) -> dict:
    bounds = {} if min_items is None else {"minItems": min_items}
    return {"type": "array", **bounds, "maxItems": max_items, "items": items}


def _text(max_length: int | None = None, min_length: int | None = None) -> dict:
    schema: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        schema["minLength"] = min_length
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


# Reports: lengths are asked for in words, so these caps are loop guards, about twice what the
# prompt asks for: a reply caught in a repetition loop inside a string ends there and still fits
# max_tokens (a grammar-enforced maxLength cuts mid-word; index/reports/write.py tidies that).
REPORT_CAPS = {
    "title": 120,
    "summary": 900,
    "rating_explanation": 300,
    "finding_summary": 200,
    "finding_explanation": 600,
}


def report_schema(max_findings: int) -> dict:
    """{title, summary, rating, rating_explanation, findings:[{summary, explanation}]}."""
    finding = {
        "summary": _text(REPORT_CAPS["finding_summary"]),
        "explanation": _text(REPORT_CAPS["finding_explanation"]),
    }
    return _object(
        {
            "title": _text(REPORT_CAPS["title"], 1),
            "summary": _text(REPORT_CAPS["summary"], 1),
            "rating": {"type": "number", "minimum": 0, "maximum": 10},
            "rating_explanation": _text(REPORT_CAPS["rating_explanation"]),
            "findings": _array(_object(finding), max_findings, min_items=1),
        }
    )


def fact_filter_schema(n: int) -> dict:
    """HippoRAG's recognition filter: the numbers (1..n) of the facts kept."""
    number = {"type": "integer", "minimum": 1, "maximum": max(n, 1)}
    return _object({"relevant": _array(number, n)})


def rephrasings_schema(n: int) -> dict:
    return _object({"queries": _array(_text(200, 3), n, min_items=n)})


def sub_questions_schema(n: int) -> dict:
    return _object({"sub_questions": _array(_text(200, 3), n, min_items=1)})


def map_points_schema(max_points: int) -> dict:
    point = {"description": _text(300, 1), "score": _SCORE}
    return _object({"points": _array(_object(point), max_points)})


def map_sentences_schema(max_sentences: int) -> dict:
    sentence = {"n": {"type": "integer", "minimum": 1}, "score": _SCORE}
    return _object({"sentences": _array(_object(sentence), max_sentences)})


def relevance_schema(max_sentences: int) -> dict:
    """Budgeted global search's relevance test: the numbers of the sentences that help."""
    return _object({"relevant": _array({"type": "integer", "minimum": 1}, max_sentences)})


def drift_step_schema(max_follow_ups: int) -> dict:
    """The answer has no cap (a grammar-enforced cap cuts mid-word): max_tokens bounds it."""
    return _object(
        {
            "answer": _text(min_length=1),
            "score": _SCORE,
            "follow_ups": _array(_text(200, 3), max_follow_ups),
        }
    )


def generated_question_schema(max_keywords: int = 3) -> dict:
    """A generated question: {question, answer, keywords: [1..max_keywords]}."""
    return _object(
        {
            "question": _text(300, 10),
            "answer": _text(600, 1),
            "keywords": _array(_text(60, 1), max_keywords, min_items=1),
        }
    )


def verdict_schema() -> dict:
    """The question-generation judge's {verdict: "yes" | "no"}."""
    return _object({"verdict": {"type": "string", "enum": ["yes", "no"]}})


def query_keywords_schema(types: list[str], max_entities: int = 5) -> dict:
    """MiniRAG's {answer_type_keywords: [<= 3 of ``types``], entities_from_query:
    [1..max_entities]} (its prompt asks for at most 3 types; it uses 5 query entities)."""
    kind = {"type": "string", "enum": types} if types else _text(60, 1)
    return _object(
        {
            "answer_type_keywords": _array(kind, 3),
            "entities_from_query": _array(_text(100, 1), max_entities, min_items=1),
        }
    )
