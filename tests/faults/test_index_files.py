"""A damaged index folder: every missing, cut, garbled or swapped table, a missing, corrupt or
foreign manifest, and a swap cut between its two renames, each a clear error naming the file.
The folder damaged is the real demo index (replayed from the recorded cache)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from faults.ledger import record

from graphrag import schemas as S
from graphrag.index.store import MANIFEST, Index, IndexLoadError, load_index, write_index


def _cut(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garble(path: Path) -> None:
    path.write_bytes(b"PAR1 this is not a parquet file PAR1")


def _swap_with_another_table(path: Path) -> None:
    other = "documents" if path.stem != "documents" else "entities"
    shutil.copy(path.with_name(f"{other}.parquet"), path)


TABLE_DAMAGE: dict[str, Callable[[Path], None]] = {
    "missing": Path.unlink,
    "cut in half": _cut,
    "garbled": _garble,
    "replaced by another table": _swap_with_another_table,
}


@pytest.fixture
def copy_of_demo(demo_index: Index, tmp_path: Path) -> Path:
    out = tmp_path / "index"
    shutil.copytree(demo_index.path, out)
    return out


@pytest.mark.parametrize("damage", list(TABLE_DAMAGE))
def test_every_damaged_table_is_named(copy_of_demo: Path, damage: str) -> None:
    named = 0
    for name in S.TABLES:
        out = copy_of_demo.with_name(f"index-{name}")
        shutil.copytree(copy_of_demo, out)
        TABLE_DAMAGE[damage](out / f"{name}.parquet")
        with pytest.raises(IndexLoadError, match=rf"{name}\.parquet") as info:
            load_index(out)
        assert "re-run" in str(info.value)
        named += 1
    record(f"index table {damage}", len(S.TABLES), named)


def _manifest(out: Path) -> dict:
    return json.loads((out / MANIFEST).read_text())


MANIFEST_DAMAGE: dict[str, Callable[[Path], None]] = {
    "missing (write interrupted before it)": lambda out: (out / MANIFEST).unlink(),
    "corrupt": lambda out: (out / MANIFEST).write_text('{"created": "2026'),
    "from format 1 (no version)": lambda out: (out / MANIFEST).write_text(
        json.dumps({k: v for k, v in _manifest(out).items() if k != "format_version"})
    ),
    "from a later version": lambda out: (out / MANIFEST).write_text(
        json.dumps({**_manifest(out), "format_version": 99})
    ),
    "not listing a table": lambda out: (out / MANIFEST).write_text(
        json.dumps({**_manifest(out), "tables": {}})
    ),
}


@pytest.mark.parametrize("damage", list(MANIFEST_DAMAGE))
def test_a_bad_manifest_is_named(copy_of_demo: Path, damage: str) -> None:
    MANIFEST_DAMAGE[damage](copy_of_demo)
    with pytest.raises(IndexLoadError, match=rf"{copy_of_demo / MANIFEST}"):
        load_index(copy_of_demo)
    record(f"manifest {damage.split(' (')[0]}", 1, 1)


def test_a_swap_cut_between_its_renames_is_named_then_restored(
    copy_of_demo: Path, demo_index: Index
) -> None:
    backup = copy_of_demo.with_name(f".{copy_of_demo.name}.previous")
    copy_of_demo.rename(backup)  # the state between "index -> backup" and "new -> index"
    with pytest.raises(IndexLoadError, match=rf"previous index in {backup}"):
        load_index(copy_of_demo)
    index = load_index(backup)
    tables = {name: getattr(index, name) for name in S.TABLES}
    write_index(tables, copy_of_demo, {"note": "rewritten"})
    assert not backup.exists()
    assert load_index(copy_of_demo).entities.equals(demo_index.entities)
    record("index swap cut between its renames", 1, 1)


def test_writing_over_a_folder_that_is_not_an_index_is_refused(
    demo_index: Index, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "thesis.md").write_text("mine")
    tables = {name: getattr(demo_index, name) for name in S.TABLES}
    with pytest.raises(IndexLoadError, match=rf"{folder} exists and is not an index"):
        write_index(tables, folder, {})
    assert (folder / "thesis.md").read_text() == "mine"
