"""The recorded cache serves a reply only to the request it was recorded for: the same model
(weights file, or endpoint host and reported model), body and stop rule. A folder keyed by an
older scheme is refused with what to do; every committed one is in today's format."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import RECORDED_CACHE, FakeLLM, Reply

from graphrag.index.extract.records import RECORD_STOP
from graphrag.llm.cache import (
    CACHE_FORMAT,
    CacheFormatError,
    CacheMissError,
    ResponseCache,
    folder_format,
)
from graphrag.llm.client import SEED, TEMPERATURE, ChatLLM, run_sync
from graphrag.llm.embedded.weights import DEFAULT_WEIGHTS
from graphrag.llm.identity import IDENTITIES_FILE
from graphrag.llm.stream import StopRuleFactory
from graphrag.settings import REPO_ROOT
from graphrag.settings.models import judge_settings
from graphrag.text import embeddings as vectors

QUESTION = [{"role": "user", "content": "Name the bay."}]
REPLY = "Kestrel Bay."


def unstreamed_body(llm: ChatLLM, messages: list[dict[str, str]]) -> dict:
    """The body ``llm.achat(messages)`` sends (what a record stores)."""
    return {
        "model": llm.model,
        "messages": messages,
        "temperature": TEMPERATURE,
        "max_tokens": llm.settings.llm.max_tokens,
        "seed": SEED,
    }


def weights_file(folder: Path, content: bytes) -> str:
    path = folder / f"model-{len(content)}.gguf"
    path.write_bytes(content)
    return str(path)


def test_a_reply_recorded_for_one_weights_file_misses_for_another(
    make_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHRAG_HOME", str(tmp_path / "home"))
    first = weights_file(tmp_path, b"GGUF one")
    second = weights_file(tmp_path, b"GGUF other model")

    def embedded(model_file: str, mode: str) -> ChatLLM:
        return ChatLLM(make_settings("", embedded={"model_file": model_file}, cache={"mode": mode}))

    recorder = embedded(first, "on")
    body = unstreamed_body(recorder, QUESTION)
    completion = {"choices": [{"message": {"role": "assistant", "content": REPLY}}]}
    completion["usage"] = {"prompt_tokens": 5, "completion_tokens": 2}
    recorder.cache.put(recorder.cache_key(body), {"request": body, "response": completion})

    assert run_sync(embedded(first, "replay").achat(QUESTION)).text == REPLY
    with pytest.raises(CacheMissError):
        run_sync(embedded(second, "replay").achat(QUESTION))
    assert embedded(first, "replay").identity() != embedded(second, "replay").identity()


def test_the_default_weights_are_known_by_their_pinned_hash(make_settings) -> None:
    llm = ChatLLM(make_settings("", cache={"mode": "replay"}))
    assert llm.identity() == {"weights_sha256": DEFAULT_WEIGHTS.sha256}


def test_another_endpoint_or_reported_model_misses(fake_llm: FakeLLM, make_settings) -> None:
    fake_llm.models = [{"id": "m", "root": "/models/one.gguf"}, {"id": "other"}]
    fake_llm.respond_with(lambda body: REPLY)

    def at(base_url: str, mode: str) -> ChatLLM:
        return ChatLLM(make_settings(base_url, llm={"model": "m"}, cache={"mode": mode}))

    assert run_sync(at(fake_llm.base_url, "on").achat(QUESTION)).text == REPLY
    book = json.loads((at(fake_llm.base_url, "on").cache.root / IDENTITIES_FILE).read_text())
    (identity,) = book.values()
    assert identity["reported"] == {"id": "m", "root": "/models/one.gguf"}
    # a replay never asks the endpoint: it keys by what the recording was told
    assert run_sync(at(fake_llm.base_url, "replay").achat(QUESTION)).text == REPLY
    assert fake_llm.calls == 1
    other_host = fake_llm.base_url.replace("127.0.0.1", "localhost")
    with pytest.raises(CacheMissError):
        run_sync(at(other_host, "replay").achat(QUESTION))
    # the server now serves other weights under the same name: asked again, not replayed
    fake_llm.models = [{"id": "m", "root": "/models/two.gguf"}]
    run_sync(at(fake_llm.base_url, "on").achat(QUESTION))
    assert fake_llm.calls == 2


def test_a_changed_stop_rule_misses(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(lambda body: Reply(content=REPLY, pieces=[REPLY]))
    assert run_sync(make_llm().achat(QUESTION, stop_rule=RECORD_STOP)).text == REPLY
    assert run_sync(make_llm().achat(QUESTION, stop_rule=RECORD_STOP)).text == REPLY
    assert fake_llm.calls == 1
    stricter = StopRuleFactory(RECORD_STOP.name, RECORD_STOP.make, params=(("run", 1),))
    newer = StopRuleFactory(RECORD_STOP.name, RECORD_STOP.make, RECORD_STOP.version + 1)
    for rule in (None, stricter, newer):
        run_sync(make_llm().achat(QUESTION, stop_rule=rule))
    assert fake_llm.calls == 4


def test_a_folder_of_an_older_key_scheme_is_refused_with_what_to_do(
    make_settings, tmp_path: Path
) -> None:
    settings = make_settings("", cache={"mode": "replay"})
    root = settings.resolve_path(settings.cache.path)
    record = root / "ab" / f"ab{'0' * 62}.json"  # format 1: records and no cache_format.json
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"request": {}, "response": {}}))
    assert folder_format(root) == 1
    with pytest.raises(CacheFormatError, match="format 1, which this workbench no longer reads"):
        ChatLLM(settings)
    packs = tmp_path / "packs"  # format-1 packs: no vector_format.json beside them
    packs.mkdir()
    np.savez_compressed(
        packs / "vectors-old.npz", keys=np.array(["k"]), vectors=np.ones((1, 4), np.float32)
    )
    with pytest.raises(vectors.EmbeddingError, match="format 1, which this workbench no longer"):
        vectors.recorded_vectors(packs)


def test_a_changed_vector_recipe_changes_every_key(
    make_embedder, make_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = make_embedder(make_settings(""))._key("Kestrel Bay")
    monkeypatch.setattr(vectors, "WINDOW_OVERLAP", vectors.WINDOW_OVERLAP + 1)
    assert make_embedder(make_settings(""))._key("Kestrel Bay") != before


def test_every_committed_cache_is_in_todays_format() -> None:
    markers = [
        *REPO_ROOT.glob("data/**/cache_format.json"),
        *REPO_ROOT.glob("studies/**/cache_format.json"),
    ]
    llm_folders = {p.parent for p in markers} | {RECORDED_CACHE}
    assert len(llm_folders) >= 8  # data/llm_cache, data/musique_mini, the cold runs
    for folder in llm_folders:
        assert folder_format(folder) == CACHE_FORMAT, folder
        assert ResponseCache(folder, "replay").mode == "replay"
    pack_folders = {p.parent for p in REPO_ROOT.glob("data/**/vectors-*.npz")}
    assert len(pack_folders) >= 2  # data/vector_cache, data/musique_mini
    for folder in pack_folders:
        assert vectors.pack_format(folder) == vectors.VECTOR_KEY_FORMAT, folder


def test_a_judge_of_its_own_misses_what_the_answering_model_recorded(
    make_settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge served from another GGUF (``judge.model_file``) keys its calls by its weights:
    the same request body recorded for the answering model is not served to it."""
    monkeypatch.setenv("GRAPHRAG_HOME", str(tmp_path / "home"))
    judge_file = weights_file(tmp_path, b"GGUF a judge")
    settings = make_settings(
        "", cache={"mode": "replay"}, judge={"model_file": judge_file, "model": "answerer"}
    )
    answerer = ChatLLM(
        dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, model="answerer"))
    )
    judge = ChatLLM(judge_settings(settings))
    body = unstreamed_body(answerer, QUESTION)
    completion = {"choices": [{"message": {"role": "assistant", "content": REPLY}}]}
    completion["usage"] = {"prompt_tokens": 5, "completion_tokens": 2}
    recorder = ResponseCache(answerer.cache.root, "on")
    recorder.put(answerer.cache_key(body), {"request": body, "response": completion})
    assert unstreamed_body(judge, QUESTION) == body  # the same request, another model
    assert run_sync(answerer.achat(QUESTION)).text == REPLY
    with pytest.raises(CacheMissError):
        run_sync(judge.achat(QUESTION))
