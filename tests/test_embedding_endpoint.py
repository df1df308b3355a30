"""Embeddings from an OpenAI-compatible endpoint: the fake endpoint of conftest serving
``/v1/embeddings`` over real HTTP; an index built and queried with it, its vectors keyed by
who embeds, replayed without asking it, and its failures named by setting."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import EMBEDDING_SIZE, NO_ENDPOINT, FakeLLM, fake_vector, serving_fake

from graphrag.llm.embedding_endpoint import BATCH_SIZE, EndpointEmbedder, make_embedder
from graphrag.schemas import TEXT_EMBEDDING
from graphrag.settings import SettingsError
from graphrag.stores.numpy_vectors import NumpyVectorStore
from graphrag.text.embeddings import (
    ENDPOINT_IDENTITIES_FILE,
    EmbeddingError,
    LocalEmbedder,
    write_pack,
)
from workbench import Workbench

MODEL = "fake-embed"


def unit(vector: list[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    return array / np.linalg.norm(array)


@pytest.fixture
def endpoint_settings(fake_llm: FakeLLM, make_settings):
    """Return a builder of settings whose embeddings come from ``base_url`` (the fake)."""
    fake_llm.models = [{"id": MODEL, "root": "/weights/fake-embed-v1"}]

    def build(base_url: str | None = None, **sections):
        embeddings = {"base_url": base_url or fake_llm.base_url, "model": MODEL}
        embeddings |= sections.pop("embeddings", {})
        return make_settings(fake_llm.base_url, embeddings=embeddings, **sections)

    return build


def test_the_settings_pick_the_embedder(endpoint_settings, make_settings) -> None:
    assert isinstance(make_embedder(endpoint_settings()), EndpointEmbedder)
    assert isinstance(make_embedder(make_settings()), LocalEmbedder)  # the default
    with pytest.raises(SettingsError, match="embeddings.dimensions = 64 .* embeddings.base_url"):
        make_settings(embeddings={"dimensions": 64})


def test_vectors_are_batched_unit_length_and_cached(fake_llm: FakeLLM, endpoint_settings) -> None:
    texts = [f"buoy {i} off Gull Point" for i in range(BATCH_SIZE + 6)]
    embedder = make_embedder(endpoint_settings())

    vectors = embedder.embed(texts)

    assert vectors.shape == (len(texts), EMBEDDING_SIZE) == (len(texts), embedder.dimension)
    np.testing.assert_allclose(vectors[3], unit(fake_vector(texts[3])), rtol=1e-6)
    sent = fake_llm.embedding_requests
    assert [len(r["input"]) for r in sent] == [BATCH_SIZE, 6]
    assert {r["model"] for r in sent} == {MODEL} and "dimensions" not in sent[0]
    # cached: again, and by a new embedder on the same cache file, nothing is sent
    embedder.embed(texts[:3])
    np.testing.assert_array_equal(make_embedder(endpoint_settings()).embed(texts), vectors)
    assert len(fake_llm.embedding_requests) == 2
    assert embedder.model_id == f"{fake_llm.base_url.split('/')[2]} {MODEL}"


def test_another_endpoint_or_reported_model_misses_the_cache(
    fake_llm: FakeLLM, endpoint_settings
) -> None:
    text = "Storm Corvin flooded the harbour"
    first = make_embedder(endpoint_settings())
    first.embed([text])
    assert first.recipe["identity"]["reported"]["root"] == "/weights/fake-embed-v1"

    # the same name, other weights behind it: a new process asks again and misses
    fake_llm.models = [{"id": MODEL, "root": "/weights/fake-embed-v2"}]
    second = make_embedder(endpoint_settings())
    second.embed([text])
    assert len(fake_llm.embedding_requests) == 2
    assert second._key(text) != first._key(text)

    # another host serving the same name keys its own vectors too
    with serving_fake() as other:
        third = make_embedder(endpoint_settings(other.base_url))
        third.embed([text])
        assert len(other.embedding_requests) == 1
        assert third._key(text) not in {first._key(text), second._key(text)}


def test_a_replay_never_asks_the_endpoint(
    fake_llm: FakeLLM, endpoint_settings, tmp_path: Path
) -> None:
    recorded = endpoint_settings()
    make_embedder(recorded).embed(["kelp beds", "harbour wall"])
    packs = tmp_path / "packs"
    write_pack(packs, Path(recorded.embeddings.cache_path))
    assert (packs / ENDPOINT_IDENTITIES_FILE).is_file()  # the identity travels with the vectors
    fake_llm.models = [{"id": MODEL, "root": "/weights/changed"}]  # would miss if asked
    asked, sent = len(fake_llm.gets), len(fake_llm.embedding_requests)

    # a clean checkout: an empty cache and the recorded packs
    fresh = {"cache_path": str(tmp_path / "fresh.sqlite"), "recorded_path": str(packs)}
    replay = make_embedder(endpoint_settings(embeddings=fresh, cache={"mode": "replay"}))
    vectors = replay.embed(["harbour wall", "kelp beds"])

    np.testing.assert_allclose(vectors[0], unit(fake_vector("harbour wall")), rtol=1e-6)
    assert (len(fake_llm.gets), len(fake_llm.embedding_requests)) == (asked, sent)
    with pytest.raises(EmbeddingError, match=r"not recorded.*cache.mode = 'replay'"):
        replay.embed(["a text never embedded"])


def test_an_index_is_built_and_queried_with_the_endpoint(
    fake_llm: FakeLLM, endpoint_settings, demo_subset: Path, tmp_path: Path
) -> None:
    fake_llm.respond_with(lambda body: "The answer [1].")
    settings = endpoint_settings(index={"method": "nlp"})
    question = "What did Storm Corvin damage in the harbour?"
    with Workbench(settings=settings) as bench:
        bench.index(demo_subset, tmp_path / "index", progress=False)
        answer = bench.query(question, method="naive")
        units = bench.index_in_use.text_units

    manifest = json.loads((tmp_path / "index" / "index.json").read_text())
    assert manifest["embedding_model"] == f"{fake_llm.base_url.split('/')[2]} {MODEL}"
    stored = np.stack([np.asarray(v, dtype=np.float32) for v in units[TEXT_EMBEDDING]])
    expected = np.stack([unit(fake_vector(t)) for t in units["text"]])
    np.testing.assert_allclose(stored, expected, rtol=1e-6)
    # the question was embedded by the endpoint and ranked the units by its vectors
    assert any(question in r["input"] for r in fake_llm.embedding_requests)
    best = int(np.argmax(expected @ unit(fake_vector(question))))
    assert answer.sources[0] == f"text_unit:{units['id'].iloc[best]}"


def test_a_busy_endpoint_is_asked_again_as_chat_calls_are(
    fake_llm: FakeLLM, endpoint_settings
) -> None:
    fake_llm.embedding_failures = 2
    vectors = make_embedder(endpoint_settings(llm={"max_retries": 2})).embed(["kelp"])
    np.testing.assert_allclose(vectors[0], unit(fake_vector("kelp")), rtol=1e-6)
    assert len(fake_llm.embedding_requests) == 3

    fake_llm.embedding_failures = 1
    with pytest.raises(EmbeddingError, match="answered 503: .*embeddings.model = 'fake-embed'"):
        make_embedder(endpoint_settings()).embed(["salmon"])  # the tests' max_retries: 0


def test_a_failing_endpoint_is_named_by_its_setting(fake_llm: FakeLLM, endpoint_settings) -> None:
    with pytest.raises(EmbeddingError, match="unreachable.*check embeddings.base_url"):
        make_embedder(endpoint_settings(NO_ENDPOINT)).embed(["x"])

    fake_llm.embedding_raw = b'{"object": "list", "data": [{"index": 0}]}'
    with pytest.raises(EmbeddingError, match="embeddings.base_url.*not an embeddings list"):
        make_embedder(endpoint_settings()).embed(["y"])
    fake_llm.embedding_raw = b"<html>busy</html>"
    with pytest.raises(EmbeddingError, match="not an embeddings list: its body is not JSON"):
        make_embedder(endpoint_settings()).embed(["z"])
    fake_llm.embedding_raw = None

    sized = endpoint_settings(embeddings={"dimensions": 64})
    with pytest.raises(EmbeddingError, match="32-dimensional vectors where embeddings.dimensions"):
        make_embedder(sized).embed(["w"])
    assert fake_llm.embedding_requests[-1]["dimensions"] == 64

    embedder = make_embedder(endpoint_settings())
    embedder.embed(["v"])
    fake_llm.embedding_size = 16  # the server now serves another model under the same name
    with pytest.raises(EmbeddingError, match="16-dimensional vectors where its earlier vectors"):
        embedder.embed(["u"])


def test_a_question_embedded_by_another_model_than_the_index_is_an_error() -> None:
    with pytest.raises(EmbeddingError, match="index's vectors have 4 dimensions.*index.json"):
        store = NumpyVectorStore(["a", "b"], np.ones((2, 4), dtype=np.float32))
        store.top_k(np.ones(3, dtype=np.float32), 1)
