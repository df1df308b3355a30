"""Load a corpus (a folder of .txt/.md files or a .jsonl) and cut it into token chunks."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graphrag import schemas as S
from graphrag.text import tokens

TEXT_SUFFIXES = (".txt", ".md")


class DocumentError(ValueError):
    """A document cannot be used; the message names the file (and line) and why."""


@dataclass
class LoadReport:
    """What was loaded, and what was skipped and why (only when skipping was asked for)."""

    documents: pd.DataFrame
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _title(text: str, fallback: str) -> str:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.lstrip("#").strip() if first.startswith("#") else fallback


def _check_text(text: str, where: str, max_tokens: int) -> None:
    if not text.strip():
        raise DocumentError(f"{where}: the document is empty")
    n = tokens.count_tokens(text)
    if n > max_tokens:
        raise DocumentError(
            f"{where}: the document has {n} tokens, more than "
            f"chunking.max_document_tokens={max_tokens}; split it or raise the limit"
        )


def _read_file(path: Path, max_tokens: int) -> str:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise DocumentError(f"{path}: looks binary (NUL bytes); only UTF-8 text is indexed")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise DocumentError(
            f"{path}: not valid UTF-8 (byte {err.start}); re-save it as UTF-8"
        ) from err
    _check_text(text, str(path), max_tokens)
    return text


def _from_jsonl(path: Path, max_tokens: int, skip_bad: bool) -> LoadReport:
    rows, skipped, seen = [], [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DocumentError(f"{where}: not valid JSON ({err.msg})") from err
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise DocumentError(f"{where}: expected an object with a string 'text'")
            doc_id = str(record.get("id") or f"{path.stem}-{number}")
            if doc_id in seen:
                raise DocumentError(f"{where}: duplicate document id {doc_id!r}")
            _check_text(record["text"], where, max_tokens)
        except DocumentError as err:
            if not skip_bad:
                raise
            skipped.append((where, str(err)))
            continue
        seen.add(doc_id)
        title = str(record.get("title") or doc_id)
        rows.append({S.ID: doc_id, S.TITLE: title, S.TEXT: record["text"], S.SOURCE: where})
    return LoadReport(_documents_frame(rows, path), skipped)


def _documents_frame(rows: list[dict], source: Path) -> pd.DataFrame:
    if not rows:
        raise DocumentError(f"{source}: no usable documents found (.txt, .md or .jsonl)")
    frame = pd.DataFrame(rows).sort_values(S.ID, kind="stable").reset_index(drop=True)
    frame.insert(1, S.HUMAN_ID, range(len(frame)))
    return frame


def load_documents(
    path: str | Path, max_tokens: int = 200_000, skip_bad: bool = False
) -> LoadReport:
    """Return the documents of a folder (.txt/.md, each id its path), a text file or a .jsonl of
    {id, title, text}; a bad document is an error naming it, or with ``skip_bad`` a skip."""
    path = Path(path)
    if not path.exists():
        raise DocumentError(f"{path}: no such file or folder")
    if path.is_file() and path.suffix == ".jsonl":
        return _from_jsonl(path, max_tokens, skip_bad)
    found = (p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES)
    files = [path] if path.is_file() else sorted(found)
    base = path.parent if path.is_file() else path
    rows, skipped, sources = [], [], {}
    for file in files:
        try:
            text = _read_file(file, max_tokens)
        except DocumentError as err:
            if not skip_bad:
                raise
            skipped.append((str(file), str(err)))
            continue
        doc_id = file.relative_to(base).with_suffix("").as_posix()
        if doc_id in sources:  # "a.md" and "a.txt" would share the id "a" and its chunk ids
            raise DocumentError(
                f"{sources[doc_id]} and {file} would both be document {doc_id!r}; "
                "rename one of them"
            )
        sources[doc_id] = file
        title = _title(text, file.stem)
        rows.append({S.ID: doc_id, S.TITLE: title, S.TEXT: text, S.SOURCE: str(file)})
    return LoadReport(_documents_frame(rows, path), skipped)


def text_unit_id(document_id: str, start: int, text: str) -> str:
    """Return a chunk id stable across runs: a hash of its document, offset and text (so an
    edited document gets new ids only where it changed)."""
    return hashlib.sha256(f"{document_id}\0{start}\0{text}".encode()).hexdigest()[:16]


def chunk_documents(documents: pd.DataFrame, size: int = 600, overlap: int = 100) -> pd.DataFrame:
    """Return the text_units table: token windows of ``size`` with ``overlap`` per document."""
    if overlap >= size:
        raise ValueError("chunking.overlap must be smaller than chunking.size")
    rows = []
    for doc in documents.itertuples(index=False):
        ids = tokens.encode(getattr(doc, S.TEXT))
        for start in tokens.window_starts(len(ids), size, overlap):
            window = ids[start : start + size]
            text, doc_id = tokens.decode(window), getattr(doc, S.ID)
            rows.append((text_unit_id(doc_id, start, text), text, len(window), [doc_id], start))
    frame = pd.DataFrame(rows, columns=[S.ID, S.TEXT, S.N_TOKENS, S.DOCUMENT_IDS, S.START_TOKEN])
    frame.insert(1, S.HUMAN_ID, range(len(frame)))
    return frame
