"""An answer's markers traced to what a person can open: per number the prompt showed
(``Answer.numbered``), the document, the chunk's character span and its sentence nearest the
claim (graph sources through their text units). A cited number never shown is kept and named."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.query.base import CITATION, Answer
from graphrag.text import lang, tokens

PLACES = 3  # places listed for one number: the text units nearest the claim


@dataclass
class Place:
    """One text unit as a person finds it: document, file, character span, a sentence."""

    text_unit: str
    via: str  # the source it was reached through ("text_unit:…" itself, "entity:…", …)
    document: str
    file: str
    start: int
    end: int
    snippet: str


@dataclass
class Citation:
    """Number ``number`` of an answer's prompt, the sources it stood for and where they are."""

    number: int
    sources: list[str]
    places: list[Place] = field(default_factory=list)
    cited: bool = False  # the answer cites it as [n]
    note: str = ""  # "cited but not in the prompt" for a number the method never showed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _words(text: str) -> set[str]:
    return {w.lower() for w in lang.words(text)}


def citing_sentences(text: str) -> dict[int, str]:
    """Return, per cited number, the first answer sentence that cites it."""
    found: dict[int, str] = {}
    for sentence in lang.sentences(text):
        for group in CITATION.findall(sentence):
            for n in re.findall(r"\d+", group):
                found.setdefault(int(n), CITATION.sub("", sentence).strip())
    return found


def _span(document: str, chunk: str, start_token: int) -> tuple[int, int]:
    """The chunk's character span in its document: found as text, else from its token offset
    (a chunk cut inside a multi-byte character decodes with a replacement character)."""
    at = document.find(chunk)
    if at < 0:
        prefix = tokens.encoding().decode_bytes(tokens.encode(document)[:start_token])
        at = len(prefix.decode("utf-8", errors="ignore"))
    return at, min(len(document), at + len(chunk))


class Tracer:
    """Resolves sources of one index to places; built once, used for every answer."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.units = index.text_units.set_index(S.ID)
        self.documents = index.documents.set_index(S.ID)
        entities, relationships = index.entities, index.relationships
        self.via = {
            "entity": entities.set_index(S.ID)[S.TEXT_UNIT_IDS],
            "relationship": relationships.set_index(S.ID)[S.TEXT_UNIT_IDS],
        }
        communities = getattr(index, "communities", None)
        if communities is not None and len(communities):
            by_number = communities.set_index(communities[S.COMMUNITY].astype(str))
            self.via["report"] = by_number[S.TEXT_UNIT_IDS]

    def text_units(self, source: str) -> list[str]:
        """The text units ``source`` ("text_unit:…", "entity:…", "report:3", …) came from."""
        kind, _, key = source.partition(":")
        if kind == "text_unit":
            return [key] if key in self.units.index else []
        table = self.via.get(kind)
        if table is None or key not in table.index:
            return []
        return [u for u in table.loc[key] if u in self.units.index]

    def places(self, sources: list[str], near: str) -> list[Place]:
        """The places of ``sources``' text units, the :data:`PLACES` whose sentence shares the
        most words with ``near`` (a graph source may stand on dozens of text units)."""
        via = {}
        for source in sources:
            for unit in self.text_units(source):
                via.setdefault(unit, source)
        found = [(nearest_sentence(self.units.at[u, S.TEXT], near), u) for u in via]
        found.sort(key=lambda f: -f[0][0])  # stable: ties keep the source's order
        return [self.place(u, via[u], sentence) for (_, sentence), u in found[:PLACES]]

    def place(self, unit: str, via: str, snippet: str) -> Place:
        row = self.units.loc[unit]
        doc_id = list(row[S.DOCUMENT_IDS])[0]
        doc = self.documents.loc[doc_id]
        start, end = _span(doc[S.TEXT], row[S.TEXT], int(row.get(S.START_TOKEN, 0) or 0))
        file = str(doc.get(S.SOURCE) or doc_id)
        if Path(file).is_absolute() and Path(file).is_relative_to(Path.cwd()):
            file = str(Path(file).relative_to(Path.cwd()))  # what the user typed, not /home/…
        return Place(unit, via, str(doc_id), file, start, end, snippet)

    def trace(self, answer: Answer) -> list[Citation]:
        """Every number the prompt showed, cited first (sentence nearest the citing one, else
        nearest the answer), then numbers cited but never shown."""
        cited_by = citing_sentences(answer.text)
        order = [n for n in cited_by if n in answer.numbered]
        order += [n for n in answer.numbered if n not in cited_by]
        citations = []
        for number in order:
            sources = answer.numbered[number]
            places = self.places(sources, cited_by.get(number, answer.text))
            citations.append(Citation(number, list(sources), places, number in cited_by))
        invented = [n for n in cited_by if n not in answer.numbered]
        note = "cited but not in the prompt"
        return citations + [Citation(n, [], cited=True, note=note) for n in invented]


def nearest_sentence(chunk: str, near: str) -> tuple[int, str]:
    """The chunk sentence sharing the most words with ``near`` (the first on ties or when
    nothing is shared) and that count, so a reader checks a claim against one sentence."""
    sentences = [s.strip() for s in lang.sentences(chunk) if s.strip()] or [chunk.strip()]
    wanted = _words(near)
    shared = [len(wanted & _words(s)) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (shared[i], -i))
    return shared[best], sentences[best]


def source_list(citations: list[Citation], limit: int | None = None) -> str:
    """The numbered source list printed under an answer, cited numbers marked with "*":
    ``[n]* file chars a-b: "sentence"`` (``limit``: the first that many numbers)."""
    lines = []
    for c in citations[:limit]:
        head = f"[{c.number}]{'*' if c.cited else ''}"
        if c.note or not c.places:
            lines.append(f"{head} {c.note or ', '.join(c.sources) + ' (no text unit recorded)'}")
        for i, p in enumerate(c.places):
            label = head if i == 0 else " " * len(head)
            via = "" if p.via == f"text_unit:{p.text_unit}" else f" via {p.via}"
            lines.append(f'{label} {p.file} chars {p.start}-{p.end}{via}: "{p.snippet}"')
    if limit is not None and len(citations) > limit:
        lines.append(f"… {len(citations) - limit} more (--json lists all)")
    return "\n".join(lines)


def citations_frame(citations: list[Citation]) -> pd.DataFrame:
    """One row per (marker, place), for notebooks."""
    rows = [
        {"number": c.number, "cited": c.cited, "source": ", ".join(c.sources), **asdict(p)}
        for c in citations
        for p in (c.places or [None])
        if p is not None
    ]
    return pd.DataFrame(rows)
