"""Question sets: a .jsonl of {id, question, reference, type, split, support, answer_keywords}
(benchmark sets add aliases, hops, decomposition, gold_entities, answer_format). ``split`` is
``dev`` or ``test``; a question without one is ``test``, since no default was chosen on a
user's own questions, and a report's headline reads only ``test`` (``report.headline``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

# graph: counting and paths (the cypher method); unanswerable: planted (eval/unanswerable.py)
QUESTION_TYPES = ("local", "multi_hop", "global", "graph", "unanswerable")
COLUMNS = ["id", "question", "reference", "type", "split", "support", "answer_keywords"]
BENCHMARK_COLUMNS = ["aliases", "hops", "decomposition", "gold_entities", "answer_format"]
ANSWER_FORMATS = ("", "short")
LIST_FIELDS = ("support", "answer_keywords", "aliases", "gold_entities")
SPLITS = ("dev", "test")
DEFAULT_SPLIT = "test"  # a question no default was chosen on


# A run's meta field naming the settings chosen on its test questions too (eval.tuned_on_test)
TUNED_FIELD = "tuned on these test questions"


class QuestionSetError(ValueError):
    """A question set is malformed; the message names the file and line."""


def _check(record: object, where: str, seen: set[str]) -> dict:
    if not isinstance(record, dict):
        raise QuestionSetError(f"{where}: expected a JSON object")
    missing = [c for c in ("id", "question", "reference") if not record.get(c)]
    if missing:
        raise QuestionSetError(f"{where}: missing or empty field(s) {', '.join(missing)}")
    if not all(isinstance(record[c], str) for c in ("id", "question", "reference")):
        raise QuestionSetError(f"{where}: id, question and reference must be strings")
    if record["id"] in seen:
        raise QuestionSetError(f"{where}: duplicate question id {record['id']!r}")
    kind = record.get("type", "local")
    if kind not in QUESTION_TYPES:
        raise QuestionSetError(f"{where}: type {kind!r} is not one of {', '.join(QUESTION_TYPES)}")
    split = record.get("split", DEFAULT_SPLIT)
    if split not in SPLITS:
        raise QuestionSetError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
    for field in LIST_FIELDS:
        value = record.get(field, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise QuestionSetError(f"{where}: {field} must be a list of non-empty strings")
    hops = record.get("hops")
    if hops is not None and (not isinstance(hops, int) or isinstance(hops, bool) or hops < 1):
        raise QuestionSetError(f"{where}: hops must be a positive integer")
    decomposition = record.get("decomposition", [])
    if not isinstance(decomposition, list) or not all(
        isinstance(step, dict) and isinstance(step.get("question"), str) for step in decomposition
    ):
        raise QuestionSetError(
            f"{where}: decomposition must be a list of {{question, ...}} objects"
        )
    answer_format = record.get("answer_format", "")
    if answer_format not in ANSWER_FORMATS:
        raise QuestionSetError(
            f"{where}: answer_format {answer_format!r} is not one of {ANSWER_FORMATS}"
        )
    row = {c: record[c] for c in ("id", "question", "reference")} | {"type": kind, "split": split}
    row |= {field: list(record.get(field, [])) for field in LIST_FIELDS}
    row |= {"hops": hops, "decomposition": list(decomposition)}
    return row | {"answer_format": answer_format}


def load_questions(path: str | Path, documents: set[str] | None = None) -> pd.DataFrame:
    """Return the questions table; a malformed line is an error naming ``path:line``.

    With ``documents`` (the index's document and text unit ids), support ids must name real
    ones; a set whose support names text units records their chunking (``support_chunking``,
    e.g. GraphRAG-Bench's), and a mismatch says so.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise QuestionSetError(f"question set {path}: {err}") from err
    rows: list[dict] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise QuestionSetError(f"{where}: not valid JSON ({err.msg})") from err
        row = _check(record, where, seen)
        unknown = [d for d in row["support"] if documents is not None and d not in documents]
        if unknown and record.get("support_chunking"):
            raise QuestionSetError(
                f"{where}: support names text units unknown to the index {unknown[:3]}: they "
                f"were labelled on chunks of {record['support_chunking']}; index the corpus "
                "with those [chunking] settings"
            )
        if unknown:
            raise QuestionSetError(f"{where}: support names unknown document(s) {unknown}")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise QuestionSetError(f"question set {path} has no questions")
    frame = pd.DataFrame(rows, columns=COLUMNS + BENCHMARK_COLUMNS)
    benchmark = [c for c in BENCHMARK_COLUMNS if frame[c].map(bool).any()]
    return frame[COLUMNS + benchmark]


# Which questions of a set each method answers (``eval --method-limits``): the first N, or one
# split's, so a costly method can be recorded on part of a set; its report n is its own and its
# paired tests use the questions both methods answered.
MethodLimit = int | str  # the first N questions, or one split's questions ("test")


def parse_method_limits(text: str | None) -> dict[str, MethodLimit]:
    """Return ``{"drift": 10, "hipporag": "test"}`` for "drift=10,hipporag=test" (empty or
    "none": no limit)."""
    limits: dict[str, MethodLimit] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item or item == "none":
            continue
        name, sep, value = item.partition("=")
        value = value.strip()
        if sep and value.isdigit() and int(value) >= 1:
            limits[name.strip()] = int(value)
        elif sep and value.isidentifier():
            limits[name.strip()] = value
        else:
            raise ValueError(
                f"method limit {item!r}: write METHOD=N with N a positive whole number, "
                "e.g. drift=10, or METHOD=SPLIT, e.g. hipporag=test"
            )
    return limits


def describe_limit(limit: MethodLimit) -> str:
    """How a report names a method limit: "first 10" or "test split"."""
    return f"first {limit}" if isinstance(limit, int) else f"{limit} split"


def limited_to(limit: MethodLimit | None, position: int, question: pd.Series) -> bool:
    """Whether a method with this limit answers the question at ``position``."""
    if limit is None:
        return True
    if isinstance(limit, int):
        return position < limit
    return question.get("split") == limit
