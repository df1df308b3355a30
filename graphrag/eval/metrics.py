"""Judge-free metrics: they need no LLM, so they are exact and free to recompute."""

from __future__ import annotations

import math
import re
import unicodedata

import pandas as pd

from graphrag.index import schemas as S
from graphrag.index.store import Index


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text)


def keyword_hit_rate(answer: str, keywords: list[str]) -> float:
    """Return the share of gold keywords found in the answer (case-insensitive substrings).

    Digit groups are compared without thousands separators, so "30000" matches "30,000".
    """
    if not keywords:
        return math.nan
    folded = _fold(answer)
    plain = re.sub(r"(?<=\d),(?=\d{3})", "", folded)
    hits = sum(
        1
        for k in keywords
        if _fold(k) in folded or re.sub(r"(?<=\d),(?=\d{3})", "", _fold(k)) in plain
    )
    return hits / len(keywords)


class SourceResolver:
    """Map an answer's typed source ids to the documents they came from."""

    def __init__(self, index: Index) -> None:
        units = index.text_units
        self.unit_docs = dict(zip(units[S.ID], units[S.DOCUMENT_IDS], strict=True))
        entities, relationships = index.entities, index.relationships
        self.units_of = {
            "entity": dict(zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True)),
            "relationship": dict(
                zip(relationships[S.ID], relationships[S.TEXT_UNIT_IDS], strict=True)
            ),
            "report": dict(
                zip(
                    index.communities[S.COMMUNITY].astype(str),
                    index.communities[S.TEXT_UNIT_IDS],
                    strict=True,
                )
            ),
        }

    def documents(self, sources: list[str]) -> set[str]:
        docs: set[str] = set()
        for source in sources:
            kind, _, ident = source.partition(":")
            units = [ident] if kind == "text_unit" else self.units_of.get(kind, {}).get(ident, [])
            for unit in units:
                docs.update(self.unit_docs.get(unit, []))
        return docs


def retrieval_recall(sources: list[str], support: list[str], resolver: SourceResolver) -> float:
    """Return the share of a question's supporting documents that its sources reach."""
    if not support:
        return math.nan
    reached = resolver.documents(sources)
    return sum(1 for d in support if d in reached) / len(support)


def judge_free_columns(
    records: pd.DataFrame, questions: pd.DataFrame, index: Index
) -> pd.DataFrame:
    """Return ``records`` with keyword_hit_rate and retrieval_recall filled in."""
    resolver = SourceResolver(index)
    by_id = questions.set_index("id")
    records = records.copy()
    records["keyword_hit_rate"] = [
        keyword_hit_rate(a, by_id.loc[q, "answer_keywords"])
        for a, q in zip(records["answer"], records["question_id"], strict=True)
    ]
    records["retrieval_recall"] = [
        retrieval_recall(list(s), by_id.loc[q, "support"], resolver)
        for s, q in zip(records["sources"], records["question_id"], strict=True)
    ]
    return records
