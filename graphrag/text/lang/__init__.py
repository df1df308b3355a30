"""Language at the edge: sentence splitting, search words and names go through one small
module per language family (``english``, ``chinese``), picked by the text's script or set.

A third language is one module with ``CODE``, ``sentences(text)`` and ``words(text)`` (and
``names(sentence)`` for the LLM-free graph; without it, names are capitalized runs), added to
``LANGUAGES``. A text is Chinese when it has at least as many Han characters as Latin-script
words, so an English passage quoting a Chinese name stays English, and Latin-script names in
Chinese text are read by the English rule inside the Chinese module.
"""

from __future__ import annotations

import re
from types import ModuleType

from graphrag.text.lang import chinese, english

LANGUAGES: dict[str, ModuleType] = {english.CODE: english, chinese.CODE: chinese}
CHINESE = chinese.CODE
CORPUS_SAMPLE = 200  # documents read to tell a corpus's language
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


class UnknownLanguageError(ValueError):
    """A language code no module handles; the message lists the ones that exist."""


def detect(text: str) -> str:
    """Return the language code of ``text`` by script share: "zh" when its Han characters are
    at least as many as its Latin-script words (and there is one), "en" otherwise."""
    han = len(chinese.HAN.findall(text))
    return chinese.CODE if han and han >= len(_LATIN_WORD.findall(text)) else english.CODE


def detect_corpus(texts: list[str]) -> str:
    """Return the language most of ``texts`` (the first CORPUS_SAMPLE) are in; ties: English."""
    codes = [detect(text) for text in texts[:CORPUS_SAMPLE]]
    return chinese.CODE if codes.count(chinese.CODE) > len(codes) / 2 else english.CODE


def module(text: str, language: str | None = None) -> ModuleType:
    """Return the module of ``language`` (detected from ``text`` when None)."""
    code = language or detect(text)
    if code not in LANGUAGES:
        raise UnknownLanguageError(
            f"language {code!r} has no module; known: {', '.join(sorted(LANGUAGES))}"
        )
    return LANGUAGES[code]


def sentences(text: str, language: str | None = None) -> list[str]:
    """Return the sentences of ``text`` by its language's rules."""
    return module(text, language).sentences(text)


def words(text: str, language: str | None = None) -> list[str]:
    """Return the search words (BM25's tokens) of ``text`` by its language's rules."""
    return module(text, language).words(text)
