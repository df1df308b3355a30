"""The LanceDB vector store (graphrag/stores/lancedb_vectors.py), on the real engine: the
protocol on small cases, where it keeps its tables, a clear error for a place it cannot
write, and the demo's and MuSiQue's vector queries ranked as numpy ranks them.

Search is exact (LanceDB scans the table, no vector index), so the ids come back as numpy
gives them; the scores differ from numpy's float32 dot product in the last bits (LanceDB
returns 1 - dot). The bound asked of it is a top-10 overlap of at least 0.9 per query; what
it reaches is asserted too (the same ten ids, in the same order, on every question).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index, load_index, write_index
from graphrag.query.index_stores import IndexStores
from graphrag.settings import REPO_ROOT
from graphrag.stores import UnknownBackendError
from graphrag.stores.lancedb_vectors import LanceVectorStore, VectorStoreError
from workbench.eval.questions import load_questions

STORES = ("text_units", "entities", "reports")


def test_lancedb_store_ranks_ids_ties_in_stored_order(tmp_path: Path) -> None:
    store = LanceVectorStore(
        ["a", "b", "c"], np.array([[1, 0], [0, 1], [1, 0]], np.float32), tmp_path
    )
    query = np.array([1, 0], np.float32)
    assert store.ids() == ["a", "b", "c"]
    assert store.top_k(query, 2) == [("a", 1.0), ("c", 1.0)]
    assert store.top_k(query, 1) == [("a", 1.0)], "the tie past k is fetched and put behind"
    assert store.top_k(query, 3, among=["c", "b", "a"]) == [("c", 1.0), ("a", 1.0), ("b", 0.0)]
    assert store.top_k(query, 3, among=["it's"]) == [] and store.top_k(query, 3, among=[]) == []
    assert store.scores(query).to_dict() == {"a": 1.0, "b": 0.0, "c": 1.0}
    assert LanceVectorStore([], np.zeros((0, 2)), tmp_path).top_k(query, 3) == []
    with pytest.raises(Exception, match="another model"):
        store.top_k(np.ones(3, np.float32), 1)


def tables_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.lance"))


def test_tables_live_in_the_index_folder_found_again_and_go_with_a_new_index(
    demo_index: Index, replay_embedder, tmp_path: Path
) -> None:
    tables = {name: getattr(demo_index, name) for name in S.TABLES}
    write_index(tables, tmp_path / "ix", demo_index.manifest)
    stores = IndexStores(load_index(tmp_path / "ix"), vectors="lancedb")
    query = replay_embedder.embed_one("Who founded the Kestrel Bay Marine Institute?")
    first = stores.text_units.top_k(query, 5)
    folder = tmp_path / "ix" / "vectors" / "lancedb"
    written = tables_in(folder)
    assert len(written) == 1 and written[0].startswith("text_units_")
    mtime = (folder / written[0]).stat().st_mtime_ns
    again = IndexStores(load_index(tmp_path / "ix"), vectors="lancedb").text_units
    assert again.top_k(query, 5) == first and tables_in(folder) == written
    assert (folder / written[0]).stat().st_mtime_ns == mtime, "found, not written again"
    write_index(tables, tmp_path / "ix", demo_index.manifest)
    assert not folder.exists(), "a new index starts without the old tables"


def test_a_place_it_cannot_write_or_a_location_for_numpy_is_named(
    demo_index: Index, tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("not a folder")
    bad = tmp_path / "file" / "vectors"
    with pytest.raises(VectorStoreError, match=f"LanceDB vector store at '{bad}'"):
        LanceVectorStore(["a"], np.ones((1, 2), np.float32), bad)
    with pytest.raises(VectorStoreError, match="'nowhere://bucket/x'"):
        IndexStores(demo_index, vectors="lancedb:nowhere://bucket/x").entities.ids()
    with pytest.raises(ValueError, match="'numpy:/tmp/x'.*takes no location"):
        IndexStores(demo_index, vectors="numpy:/tmp/x")
    with pytest.raises(UnknownBackendError, match="no vector store named 'milvus'; known:"):
        IndexStores(demo_index, vectors="milvus")


def compare(index: Index, questions: list[str], embedder, location: Path) -> dict[str, list]:
    """Return, per store, each question's (top-10 overlap, same ranking, max score gap) of
    LanceDB against numpy, for the full ranking and for one among of half the ids."""
    numpy, lance = IndexStores(index), IndexStores(index, vectors=f"lancedb:{location}")
    found: dict[str, list] = {}
    for vector in embedder.embed(questions):
        for kind in STORES:
            a, b = getattr(numpy, kind), getattr(lance, kind)
            among = a.ids()[::2]
            for name, ranked in (
                (kind, (a.top_k(vector, 10), b.top_k(vector, 10))),
                (f"{kind} among", (a.top_k(vector, 10, among), b.top_k(vector, 10, among))),
            ):
                expected, got = ([i for i, _ in r] for r in ranked)
                gap = max((abs(x - y) for (_, x), (_, y) in zip(*ranked, strict=True)), default=0)
                row = (len(set(expected) & set(got)) / max(len(expected), 1), expected == got, gap)
                found.setdefault(name, []).append(row)
        a, b = numpy.facts(embedder).scores(vector), lance.facts(embedder).scores(vector)
        expected, got = list(a.nlargest(10).index), list(b.nlargest(10).index)
        row = (len(set(expected) & set(got)) / 10, expected == got, float((a - b).abs().max()))
        found.setdefault("facts", []).append(row)
    return found


@pytest.mark.parametrize("corpus", ["demo", "musique"])
def test_methods_vector_queries_rank_as_on_numpy(
    corpus: str, request: pytest.FixtureRequest, replay_embedder, tmp_path: Path
) -> None:
    index = request.getfixturevalue(f"{corpus}_index")
    folder = "kestrel_bay" if corpus == "demo" else "musique"
    questions = load_questions(REPO_ROOT / "data" / folder / "questions.jsonl")
    found = compare(index, list(questions["question"]), replay_embedder, tmp_path)
    for name, rows in found.items():
        assert min(o for o, _, _ in rows) >= 0.9, name
        assert all(same for _, same, _ in rows), f"{name}: exact search ranks as numpy"
        assert max(g for _, _, g in rows) < 1e-6, name
