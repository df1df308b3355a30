"""English (and any Latin-script text): sentences end at . ! ? before a capital or a digit;
search words are bm25s's own rule (lower case, two or more word characters, its stop words),
so BM25 over English text is what it was before languages existed."""

from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

CODE = "en"
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]*\s+(?=[\"'“‘(]?[A-Z0-9])|\n+")
_WORD = re.compile(r"(?u)\b\w\w+\b")  # bm25s.tokenize's default pattern
_STOP_WORDS = frozenset(STOPWORDS_EN)


def sentences(text: str) -> list[str]:
    """Return the sentences of ``text``; Markdown heading marks are dropped, lines split."""
    parts = (p.strip().lstrip("#").strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if p]


def words(text: str) -> list[str]:
    """Return the search words of ``text`` exactly as ``bm25s.tokenize(stopwords="en")``."""
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP_WORDS]
