"""The default index store: a folder of one parquet file per table, ``index.json`` (settings,
summary, each table's rows and sha256) and ``artifacts/``, written whole into a temporary
sibling and swapped in, so an interrupted run never leaves a mix."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow

from graphrag import schemas as S
from graphrag.stores.protocols import backend

MANIFEST = "index.json"
ARTIFACTS = "artifacts"
FORMAT_VERSION = 2  # 2: written whole and swapped in; manifest lists tables with checksums
EMPTY_COLUMNS = {S.ERRORS: S.ERROR_COLUMNS, S.DROPPED: S.DROPPED_COLUMNS}


class IndexLoadError(RuntimeError):
    """The index folder is missing, incomplete or corrupt; the message names the file."""


def _sha256(path: Path) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _backup(out: Path) -> Path:
    return out.parent / f".{out.name}.previous"


def _clean_leftovers(out: Path) -> None:
    """Restore the previous index if a swap was cut between its two renames, and remove the
    temporary folders of writers that were killed."""
    backup = _backup(out)
    if backup.is_dir() and not out.exists():
        os.replace(backup, out)
    elif backup.is_dir():
        shutil.rmtree(backup)
    for stale in out.parent.glob(f".{out.name}.writing-*"):
        pid = int(stale.name.rsplit("-", 2)[-2])
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(stale, ignore_errors=True)
        except PermissionError:
            pass  # alive, another user's


def write_folder(
    tables: dict[str, pd.DataFrame],
    out: Path,
    manifest: dict[str, Any],
    files: dict[str, Callable[[Path], None]],
) -> None:
    """Write every table as parquet, ``files`` (name -> writer of that path) and the manifest
    (last, all fsynced) to a temporary folder that then replaces ``out`` (an index or empty)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    _clean_leftovers(out)
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise IndexLoadError(
            f"{out} exists and is not an index (no {MANIFEST}); writing the index replaces "
            "the whole folder, so choose an empty or new folder"
        )
    tmp = out.parent / f".{out.name}.writing-{os.getpid()}-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        listed = {}
        for name in S.TABLES:
            frame = tables.get(name)
            if frame is None:
                frame = pd.DataFrame(columns=EMPTY_COLUMNS.get(name, []))
            file = tmp / f"{name}.parquet"
            frame.to_parquet(file, index=False)
            _fsync(file)
            listed[name] = {"file": file.name, "rows": len(frame), "sha256": _sha256(file)}
        for name, write in files.items():
            write(tmp / name)
        full = {**manifest, "format_version": FORMAT_VERSION, "tables": listed}
        (tmp / MANIFEST).write_text(json.dumps(full, indent=2, default=str) + "\n")
        _fsync(tmp / MANIFEST)
        _fsync(tmp)
        if out.exists():
            os.replace(out, _backup(out))
        os.replace(tmp, out)
        _fsync(out.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(_backup(out), ignore_errors=True)


def _read_manifest(path: Path) -> dict[str, Any]:
    manifest_file = path / MANIFEST
    try:
        manifest = json.loads(manifest_file.read_text())
    except FileNotFoundError:
        raise IndexLoadError(
            f"index {path} is incomplete: {manifest_file} is missing (an index is complete "
            "only once its manifest is written: was indexing interrupted? re-run it, the "
            "cache resumes)"
        ) from None
    except ValueError as err:
        raise IndexLoadError(f"{manifest_file} is corrupt ({err}); re-run indexing") from err
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != FORMAT_VERSION or not isinstance(manifest.get("tables"), dict):
        raise IndexLoadError(
            f"{manifest_file} is from another version of the workbench (index format "
            f"{version!r}, this one reads {FORMAT_VERSION}); re-run indexing (the LLM cache "
            "makes it free)"
        )
    return manifest


def read_folder(path: Path) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Return the tables and the manifest in ``path``; a clear error names what is missing or
    corrupt."""
    if not path.is_dir():
        backup = _backup(path)
        hint = (
            f"; an interrupted write left the previous index in {backup}: re-run indexing "
            "(it restores or replaces it)"
            if backup.is_dir()
            else ""
        )
        raise IndexLoadError(
            f"index folder {path} does not exist; build one with "
            f"`python -m graphrag index --input <corpus> --out {path}`{hint}"
        )
    manifest = _read_manifest(path)
    tables: dict[str, pd.DataFrame] = {}
    for name in S.TABLES:
        file = path / f"{name}.parquet"
        listed = manifest["tables"].get(name)
        if listed is None:
            raise IndexLoadError(
                f"{path / MANIFEST} does not list {file.name}; the index is incomplete: "
                "re-run indexing"
            )
        if not file.is_file():
            raise IndexLoadError(
                f"index {path} is incomplete: {file.name} is missing "
                "(was indexing interrupted? re-run it, the cache resumes)"
            )
        if _sha256(file) != listed["sha256"]:
            raise IndexLoadError(
                f"index table {file} is corrupt (its sha256 differs from the one in "
                f"{MANIFEST}: it was cut or changed after writing); re-run indexing"
            )
        try:
            tables[name] = pd.read_parquet(file)
        except (pyarrow.ArrowException, OSError, ValueError) as err:
            raise IndexLoadError(f"index table {file} is corrupt ({err}); re-run indexing") from err
    for name, needed in (
        (S.ENTITIES, [S.ID, S.TITLE, S.DESCRIPTION]),
        (S.TEXT_UNITS, [S.ID, S.TEXT]),
        (S.COMMUNITY_REPORTS, [S.COMMUNITY, S.LEVEL, S.FULL_CONTENT]),
    ):
        missing = [c for c in needed if c not in tables[name].columns]
        if missing:
            raise IndexLoadError(
                f"index table {path / (name + '.parquet')} lacks columns "
                f"{missing}; it was not written by this workbench"
            )
    return tables, manifest


@backend("index", "parquet")
class ParquetIndexStore:
    """The index folder ``path``: tables as parquet, artifacts under ``artifacts/``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.files: dict[str, Callable[[Path], None]] = {}  # written beside the tables

    def read_tables(self) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
        return read_folder(self.path)

    def write_tables(self, tables: dict[str, pd.DataFrame], manifest: dict[str, Any]) -> None:
        write_folder(tables, self.path, manifest, self.files)

    def get_artifact(self, name: str) -> pd.DataFrame | None:
        file = self.path / ARTIFACTS / f"{name}.parquet"
        try:
            return pd.read_parquet(file)
        except (FileNotFoundError, pyarrow.ArrowException, OSError, ValueError):
            return None  # none kept, or a cut write: built again

    def put_artifact(self, name: str, frame: pd.DataFrame) -> None:
        folder = self.path / ARTIFACTS
        folder.mkdir(exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.parquet"
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, folder / f"{name}.parquet")
