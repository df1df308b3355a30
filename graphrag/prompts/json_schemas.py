"""The JSON schemas replies must follow, one per prompt that returns JSON.

Written for a 1.5B instruct model: hard caps (``maxItems``, ``maxLength``) in every schema,
because a small model pads structured output until ``max_tokens`` when nothing stops it. The
schemas are code, not templates: the parsers downstream read these fields.
"""

from __future__ import annotations

# Extraction: relationships name entities by the same strings used in entities.


def extraction_schema(entity_types: list[str], max_entities: int, max_relationships: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "maxItems": max_entities,
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 60},
                        "type": {"type": "string", "enum": entity_types},
                        "description": {"type": "string", "maxLength": 200},
                    },
                    "required": ["name", "type", "description"],
                    "additionalProperties": False,
                },
            },
            "relationships": {
                "type": "array",
                "maxItems": max_relationships,
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string", "minLength": 1, "maxLength": 60},
                        "target": {"type": "string", "minLength": 1, "maxLength": 60},
                        "description": {"type": "string", "maxLength": 120},
                        "strength": {"type": "integer", "minimum": 1, "maximum": 10},
                    },
                    "required": ["source", "target", "description", "strength"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["entities", "relationships"],
        "additionalProperties": False,
    }


# Reports: lengths are asked for in words, so the string caps below are loop guards, not
# lengths (a grammar-enforced maxLength cuts a string mid-word). They are about twice what the
# prompt asks for, so a normal reply never meets them, while a reply that falls into a
# repetition loop inside a string (the 1.5B model did, 1,200 tokens of one sentence in a report
# summary) ends there and the report still fits its max_tokens. ``index.reports.write.tidy_report``
# then drops repeated sentences and cuts a string that met its cap back to its last whole
# sentence.
REPORT_CAPS = {
    "title": 120,
    "summary": 900,
    "rating_explanation": 300,
    "finding_summary": 200,
    "finding_explanation": 600,
}


def report_schema(max_findings: int) -> dict:
    """{title, summary, rating, rating_explanation, findings:[{summary, explanation}]}, with
    ``REPORT_CAPS`` as the strings' caps."""
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1, "maxLength": REPORT_CAPS["title"]},
            "summary": {"type": "string", "minLength": 1, "maxLength": REPORT_CAPS["summary"]},
            "rating": {"type": "number", "minimum": 0, "maximum": 10},
            "rating_explanation": {
                "type": "string",
                "maxLength": REPORT_CAPS["rating_explanation"],
            },
            "findings": {
                "type": "array",
                "minItems": 1,
                "maxItems": max_findings,
                "items": {
                    "type": "object",
                    "properties": {
                        "summary": {
                            "type": "string",
                            "maxLength": REPORT_CAPS["finding_summary"],
                        },
                        "explanation": {
                            "type": "string",
                            "maxLength": REPORT_CAPS["finding_explanation"],
                        },
                    },
                    "required": ["summary", "explanation"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["title", "summary", "rating", "rating_explanation", "findings"],
        "additionalProperties": False,
    }


def rephrasings_schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "queries": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {"type": "string", "minLength": 3, "maxLength": 200},
            }
        },
        "required": ["queries"],
        "additionalProperties": False,
    }


def map_points_schema(max_points: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "points": {
                "type": "array",
                "maxItems": max_points,
                "items": {
                    "type": "object",
                    "properties": {
                        "description": {"type": "string", "minLength": 1, "maxLength": 300},
                        "score": {"type": "integer", "minimum": 0, "maximum": 100},
                    },
                    "required": ["description", "score"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["points"],
        "additionalProperties": False,
    }


def map_sentences_schema(max_sentences: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "sentences": {
                "type": "array",
                "maxItems": max_sentences,
                "items": {
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer", "minimum": 1},
                        "score": {"type": "integer", "minimum": 0, "maximum": 100},
                    },
                    "required": ["n", "score"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["sentences"],
        "additionalProperties": False,
    }


# DRIFT: the answer is bounded by the call's max_tokens and the prompt, not by a schema cap (a
# grammar-enforced cap cuts the string mid-word).
def drift_step_schema(max_follow_ups: int) -> dict:
    return {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "minLength": 1},
            "score": {"type": "integer", "minimum": 0, "maximum": 100},
            "follow_ups": {
                "type": "array",
                "maxItems": max_follow_ups,
                "items": {"type": "string", "minLength": 3, "maxLength": 200},
            },
        },
        "required": ["answer", "score", "follow_ups"],
        "additionalProperties": False,
    }
