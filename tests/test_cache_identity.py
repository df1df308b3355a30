"""The recorded cache serves a reply only to the request it was recorded for: the same model
(weights file, or endpoint host and reported model), body and stop rule. An older folder is
re-keyed by ``graphrag cache migrate`` and then replays; it is never re-recorded."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import RECORDED_CACHE, FakeLLM, Reply

from graphrag.cli import main
from graphrag.index.extract.records import RECORD_STOP
from graphrag.index.streamed import streamed_families
from graphrag.llm.cache import (
    CACHE_FORMAT,
    FORMAT_FILE,
    CacheFormatError,
    CacheMissError,
    ResponseCache,
    folder_format,
    legacy_request_key,
)
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.llm.embedded.weights import DEFAULT_WEIGHTS
from graphrag.llm.identity import IDENTITIES_FILE
from graphrag.llm.migrate import migrate_folder
from graphrag.llm.stream import StopRuleFactory
from graphrag.settings.judge import judge_settings
from graphrag.text import embeddings as vectors

QUESTION = [{"role": "user", "content": "Name the bay."}]
REPLY = "Kestrel Bay."


def unstreamed_body(llm: ChatLLM, messages: list[dict[str, str]]) -> dict:
    """The body ``llm.achat(messages)`` sends (what a record stores)."""
    return {
        "model": llm.model,
        "messages": messages,
        "temperature": llm.settings.llm.temperature,
        "max_tokens": llm.settings.llm.max_tokens,
        "seed": llm.settings.llm.seed,
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


def write_legacy(root: Path, body: dict, content: str, **extra) -> Path:
    completion = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    completion["usage"] = {"prompt_tokens": 5, "completion_tokens": 2}
    key = legacy_request_key(body)
    path = root / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"request": body, "response": completion, **extra}))
    return path


def test_an_old_folder_is_refused_until_migrated_then_replays(make_settings, tmp_path) -> None:
    settings = make_settings("", cache={"mode": "replay"})
    root = settings.resolve_path(settings.cache.path)
    body = unstreamed_body(ChatLLM(make_settings("", cache={"mode": "off"})), QUESTION)
    write_legacy(root, body, REPLY)
    assert folder_format(root) == 1
    with pytest.raises(CacheFormatError, match="graphrag cache migrate"):
        ChatLLM(settings)
    done = migrate_folder(root, streamed_families())
    assert (done.records, done.written) == (1, 1)
    assert json.loads((root / FORMAT_FILE).read_text()) == {"format": CACHE_FORMAT}
    assert run_sync(ChatLLM(settings).achat(QUESTION)).text == REPLY
    assert migrate_folder(root, streamed_families()).records == 0  # nothing left to re-key


def test_migration_keys_a_streamed_family_under_the_rule_it_could_have_had(
    make_settings,
) -> None:
    settings = make_settings("", cache={"mode": "replay"})
    root = settings.resolve_path(settings.cache.path)
    llm_off = ChatLLM(make_settings("", cache={"mode": "off"}))
    opening = "You build a knowledge graph from a text. Reply with one record per line"
    system = {"role": "system", "content": opening + ", nothing else."}

    def extraction(text: str) -> list[dict[str, str]]:
        return [system, {"role": "user", "content": text}]

    clean = "entity|Kestrel Bay|place|A bay\n<|COMPLETE|>"
    looping = "entity|A|x|y\n" + "relationship|A|B|r\n" * 4
    write_legacy(root, unstreamed_body(llm_off, extraction("one")), clean)
    write_legacy(root, unstreamed_body(llm_off, extraction("two")), looping)
    write_legacy(
        root, unstreamed_body(llm_off, extraction("three")), "entity|A|x|y\n", stopped_early="r"
    )
    done = migrate_folder(root, streamed_families())
    assert done.written == 5  # "one" and "two" under both keys, "three" under the rule's
    llm = ChatLLM(settings)

    def served(text: str, rule: StopRuleFactory | None) -> bool:
        return (
            llm.cache.get(llm.cache_key(unstreamed_body(llm, extraction(text)), rule)) is not None
        )

    assert served("one", RECORD_STOP) and served("one", None)
    assert served("two", None) and served("two", RECORD_STOP)
    cut = llm.cache.get(llm.cache_key(unstreamed_body(llm, extraction("two")), RECORD_STOP))
    # under the rule: the same reply ended where the rule ends it (its first repeat)
    assert cut["response"]["choices"][0]["message"]["content"] == looping.split("\n")[0] + "\n" + (
        "relationship|A|B|r\n"
    )
    assert cut["derived_by_migration"] and cut["stopped_early"]
    assert served("three", RECORD_STOP) and not served("three", None)


def test_cache_migrate_command_rekeys_llm_records_and_vector_packs(
    tmp_path: Path, make_settings, make_embedder, capsys
) -> None:
    settings = make_settings("")
    llm_root = tmp_path / "old_cache"
    body = unstreamed_body(ChatLLM(make_settings("", cache={"mode": "off"})), QUESTION)
    write_legacy(llm_root, body, REPLY)
    packs = tmp_path / "packs"
    packs.mkdir()
    embedder = make_embedder(settings)
    old_key = vectors.legacy_vector_key(embedder.model_id, "Kestrel Bay")
    np.savez_compressed(
        packs / "vectors-old.npz", keys=np.array([old_key]), vectors=np.ones((1, 4), np.float32)
    )
    with pytest.raises(vectors.EmbeddingError, match="cache migrate"):
        vectors.recorded_vectors(packs)
    config = tmp_path / "settings.toml"
    config.write_text(
        f'[embeddings]\ncache_path = "{tmp_path / "e.sqlite"}"\n'
        f'model = "{settings.embeddings.model}"\n'
    )
    code = main(
        [
            "--config",
            str(config),
            "cache",
            "migrate",
            "--path",
            str(llm_root),
            "--vectors",
            str(packs),
        ]
    )
    assert code == 0
    assert "records re-keyed: 1" in capsys.readouterr().out
    (key,) = vectors.recorded_vectors(packs)
    assert key == vectors.recipe_key(embedder.recipe_digest, old_key)
    assert folder_format(llm_root) == CACHE_FORMAT


def test_a_changed_vector_recipe_changes_every_key(
    make_embedder, make_settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = make_embedder(make_settings(""))._key("Kestrel Bay")
    monkeypatch.setattr(vectors, "WINDOW_OVERLAP", vectors.WINDOW_OVERLAP + 1)
    assert make_embedder(make_settings(""))._key("Kestrel Bay") != before


def test_the_committed_cache_is_in_todays_format() -> None:
    assert folder_format(RECORDED_CACHE) == CACHE_FORMAT
    assert ResponseCache(RECORDED_CACHE, "replay").mode == "replay"


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
