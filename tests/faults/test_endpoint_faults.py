"""Faults of the LLM endpoint during indexing: killed mid-run, and answering garbage.

The model is not under test here, so the endpoint is the scripted model of ``conftest``
served over real HTTP (in a thread, or in a process of its own when it must be SIGKILLed);
the cache, retries, JSON repair, error rows and resume are the real code.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import UNPACKED, FakeLLM, Reply, indexing_model, names_in, plain_frame
from faults.ledger import record

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.pipeline import build_index
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM

CHUNKING = {"size": 200, "overlap": 40}
ENDPOINT = Path(__file__).with_name("fake_endpoint.py")


@pytest.fixture
def settings_for(make_settings, tmp_path: Path):
    """Return a builder of settings for an endpoint URL and a cache folder, with small
    retry and timeout settings so faults cost milliseconds."""

    def build(base_url: str, cache: str, **llm):
        return make_settings(
            base_url,
            chunking=CHUNKING,
            cache={"path": str(tmp_path / cache)},
            llm={"max_retries": 2, "timeout": 2.0, **llm},
            index={**UNPACKED, "max_cluster_size": 5},  # what the scripted model writes
        )

    return build


def run(docs: Path, out: Path, settings, make_embedder):
    return build_index(
        docs, out, settings, llm=ChatLLM(settings), embedder=make_embedder(settings), progress=False
    )


def tables_of(out: Path) -> dict[str, list]:
    index = load_index(out)
    return {name: plain_frame(getattr(index, name)) for name in S.TABLES}


def start_endpoint(folder: Path, *args: str) -> tuple[subprocess.Popen, str]:
    port_file = folder / f"port-{time.monotonic_ns()}"
    proc = subprocess.Popen([sys.executable, str(ENDPOINT), str(port_file), *args])
    while not port_file.exists():
        assert proc.poll() is None, "the fake endpoint did not start"
        time.sleep(0.02)
    return proc, f"http://127.0.0.1:{port_file.read_text()}/v1"


def test_endpoint_killed_mid_index_then_resumed_equals_an_uninterrupted_run(
    fake_llm: FakeLLM, settings_for, make_embedder, demo_subset: Path, tmp_path: Path
) -> None:
    fake_llm.respond_with(indexing_model)
    run(demo_subset, tmp_path / "reference", settings_for(fake_llm.base_url, "ref"), make_embedder)
    calls = fake_llm.calls

    endpoint, url = start_endpoint(tmp_path, "--die-after", "5")
    try:
        summary = run(demo_subset, tmp_path / "index", settings_for(url, "cache"), make_embedder)
        assert endpoint.wait(timeout=30) == -9, "the endpoint was SIGKILLed mid-index"
    finally:
        endpoint.kill()
    failed = load_index(tmp_path / "index").errors
    assert len(failed) > 0 and len(failed) == len(summary.failed)
    assert all("unreachable" in e or "answered" in e for e in failed[S.ERROR]), "named"

    endpoint, url = start_endpoint(tmp_path)  # restarted, on another port
    try:
        run(demo_subset, tmp_path / "index", settings_for(url, "cache"), make_embedder)
    finally:
        endpoint.kill()
    resumed, reference = tables_of(tmp_path / "index"), tables_of(tmp_path / "reference")
    lost = sum(len(reference[n]) - len(resumed[n]) for n in S.TABLES if n != "errors")
    assert resumed == reference
    assert resumed["errors"] == []
    record("LLM endpoint SIGKILLed mid-index, then restarted", 1, int(resumed == reference), lost)
    assert calls > 5


# --------------------------------------------------------------------------- garbage replies


def _truncated(text: str) -> Reply:
    return Reply(text[: len(text) // 2], finish_reason="length")


# Replies a plain-text stage cannot tell from an answer (a description summary may be any
# text), so they are injected into JSON requests only.
JSON_ONLY = {"malformed JSON", "trailing commas"}
# A record reply is read to its last finished line, whatever it holds (a cut-off or empty
# reply is a partial extraction, listed in ``dropped``, by design): extraction requests get
# the faults of the transport only.
CONTENT = JSON_ONLY | {"truncated JSON", "empty message"}
EXTRACTION = "You build a knowledge graph"
FAULTS = {
    "malformed JSON": lambda good: Reply("{entities: [name: 'x'"),
    "truncated JSON": _truncated,
    "trailing commas": lambda good: Reply(good[:-1] + ",}" if good.startswith("{") else good + ","),
    "empty message": lambda good: Reply(""),
    "empty HTTP body": lambda good: Reply(raw=b""),
    "garbled HTTP body": lambda good: Reply(raw=b'{"choices": [{"mess'),
    "429": lambda good: Reply("slow down", status=429),
    "500": lambda good: Reply("internal error", status=500),
    "timeout": lambda good: Reply(good, delay=1.0),
}


def chaotic(seed: int, rate: float, injected: dict[str, int]):
    """Return an endpoint function answering like the scripted model, except that a seeded
    random share ``rate`` of the requests get one of FAULTS instead."""
    rng = random.Random(seed)

    def answer(body: dict) -> Reply | str:
        good = indexing_model(body)
        if rng.random() >= rate:
            return good
        if "response_format" in body:
            kinds = sorted(FAULTS)
        elif body["messages"][0]["content"].startswith(EXTRACTION):
            kinds = sorted(set(FAULTS) - CONTENT)
        else:
            kinds = sorted(set(FAULTS) - JSON_ONLY)
        name = rng.choice(kinds)
        injected[name] = injected.get(name, 0) + 1
        return FAULTS[name](good)

    return answer


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_garbage_replies_leave_every_chunk_extracted_or_named(
    fake_llm: FakeLLM,
    settings_for,
    make_embedder,
    demo_subset: Path,
    tmp_path: Path,
    seed: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_llm.respond_with(indexing_model)
    run(demo_subset, tmp_path / "reference", settings_for(fake_llm.base_url, "ref"), make_embedder)
    reference = tables_of(tmp_path / "reference")

    injected: dict[str, int] = {}
    fake_llm.reset()
    fake_llm.respond_with(chaotic(seed, 0.5, injected))
    monkeypatch.setattr("graphrag.llm.replies.JSON_REPAIR_ROUNDS", 1)
    settings = settings_for(fake_llm.base_url, "cache", timeout=0.3)
    run(demo_subset, tmp_path / "index", settings, make_embedder)
    index = load_index(tmp_path / "index")

    # Every chunk is either fully extracted or an extract error row, never both, never neither.
    chunks = dict(zip(index.text_units[S.ID], index.text_units[S.TEXT], strict=True))
    failed = set(index.errors.loc[index.errors[S.STAGE] == "extract", S.ITEM_ID])
    units_of = {
        k: set(u)
        for k, u in zip(index.entities[S.NAME_KEY], index.entities[S.TEXT_UNIT_IDS], strict=True)
    }
    extracted = {
        unit
        for unit, text in chunks.items()
        if all(unit in units_of.get(name_key(n), ()) for n in names_in(text))
    }
    assert not failed & extracted
    assert len(failed) + len(extracted) == len(chunks)
    assert all(error.strip() for error in index.errors[S.ERROR])
    assert sum(injected.values()) > 0

    # The next run with a healthy endpoint finishes the job: nothing was lost.
    fake_llm.reset()
    fake_llm.respond_with(indexing_model)
    run(demo_subset, tmp_path / "index", settings, make_embedder)
    resumed = tables_of(tmp_path / "index")
    lost = sum(len(reference[n]) - len(resumed[n]) for n in S.TABLES if n != "errors")
    assert resumed == reference
    for name, count in injected.items():
        record(f"endpoint reply: {name}", count, count, 0)
    assert lost == 0


def test_fault_kinds_are_all_exercised() -> None:
    # The three seeds above draw every kind of fault at least once.
    seen: dict[str, int] = {}
    for seed in (1, 2, 3):
        answer = chaotic(seed, 0.5, seen)
        for i in range(60):
            body = {
                "messages": [
                    {"content": "You merge several descriptions"},
                    {"content": f"Entity: E{i}\nDescriptions:\n- a\n- b"},
                ],
                "response_format": {},
            }
            answer(body)
    assert set(seen) == set(FAULTS)
    json.dumps(seen)
