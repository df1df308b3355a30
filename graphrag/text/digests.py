"""Content hashes of model files, computed once per file version: a cache is keyed by what a
model is (its files' sha256), not by its name, and hashing a gigabyte takes seconds."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from filelock import FileLock


def file_sha256(path: Path, book: Path) -> str:
    """Return the sha256 of ``path``, hashed once per (path, size, mtime) and remembered in the
    JSON file ``book``."""
    path = Path(path).resolve()
    stat = path.stat()
    stamp = f"{path} {stat.st_size} {stat.st_mtime_ns}"
    book = Path(book)
    book.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(book.with_suffix(".lock")):
        known = json.loads(book.read_text(encoding="utf-8")) if book.is_file() else {}
        if stamp not in known:
            with path.open("rb") as handle:
                known[stamp] = hashlib.file_digest(handle, "sha256").hexdigest()
            book.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
    return known[stamp]


def folder_sha256(folder: Path, book: Path, skip: tuple[str, ...] = ("README.md",)) -> str:
    """Return one sha256 over every file in ``folder`` (relative path and content hash; files
    named in ``skip`` and hidden files left out: they change no computation)."""
    folder = Path(folder)
    entries = [
        f"{p.relative_to(folder).as_posix()} {file_sha256(p, book)}"
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in skip and not p.name.startswith(".")
    ]
    return hashlib.sha256("\n".join(entries).encode("utf-8")).hexdigest()
