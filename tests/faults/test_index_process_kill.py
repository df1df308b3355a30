"""The indexing process SIGKILLed at seeded random points: during extraction, or in the middle
of writing the parquet tables. The previous index must stay intact (the new one is written
aside and swapped in whole) and a re-run must finish with the complete new index."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import DEMO_DOCS, FakeLLM, indexing_model, plain_frame
from faults.ledger import record

from graphrag import schemas as S
from graphrag.index.pipeline import build_index
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM

WORKERS = Path(__file__).with_name("workers.py")


def tables_of(out: Path) -> dict[str, list]:
    index = load_index(out)
    return {name: plain_frame(getattr(index, name)) for name in S.TABLES}


def wait_for(condition, proc: subprocess.Popen, what: str) -> None:  # noqa: ANN001
    while not condition():
        assert proc.poll() is None, f"the indexing process ended before {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("seed", [0, 1])
def test_killed_indexing_leaves_the_previous_index_and_a_rerun_finishes(
    fake_llm: FakeLLM, make_settings, make_embedder, demo_subset: Path, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    point = ("extraction", "parquet write")[seed % 2]
    bigger = tmp_path / "bigger"
    shutil.copytree(demo_subset, bigger)
    shutil.copy(DEMO_DOCS / "05_kelp_wave_study.md", bigger)

    def build(docs: Path, out: Path, cache: str) -> None:
        settings = make_settings(fake_llm.base_url, cache={"path": str(tmp_path / cache)})
        build_index(docs, out, settings, ChatLLM(settings), make_embedder(settings), False)

    fake_llm.respond_with(indexing_model)
    out = tmp_path / "index"
    build(demo_subset, out, "llm-old")  # the previous index
    build(bigger, tmp_path / "reference", "llm-reference")  # what the new one must be
    previous, new = tables_of(out), tables_of(tmp_path / "reference")
    assert previous != new

    # The run to kill, in its own process, with its own LLM cache (the embeddings are cached).
    arrived, release, extractions = threading.Event(), threading.Event(), [0]
    kill_at = rng.randint(1, 4)  # the new corpus has 4 chunks
    marker = tmp_path / "stalled"

    def held_model(body: dict) -> str:
        if body["messages"][0]["content"].startswith("You build a knowledge graph"):
            extractions[0] += 1
            if point == "extraction" and extractions[0] == kill_at:
                arrived.set()
                release.wait(60)
        return indexing_model(body)

    fake_llm.respond_with(held_model)
    cache, vectors = str(tmp_path / "cache"), str(tmp_path / "embeddings.sqlite")
    args = [sys.executable, str(WORKERS), "index", str(bigger), str(out), fake_llm.base_url]
    args += [cache, vectors]
    if point == "parquet write":
        args += [str(rng.randint(1, len(S.TABLES))), str(marker)]
    worker = subprocess.Popen(args)
    try:
        wait_for(arrived.is_set if point == "extraction" else marker.exists, worker, point)
        os.kill(worker.pid, signal.SIGKILL)
        assert worker.wait(timeout=30) == -signal.SIGKILL
    finally:
        worker.kill()
        release.set()

    intact = tables_of(out) == previous
    assert intact, f"killed during the {point}: the previous index must load unchanged"

    build(bigger, out, "cache")  # the re-run resumes from what the killed run recorded
    finished = tables_of(out) == new
    assert finished
    assert not list(tmp_path.glob(".index.*")), "no temporary folder is left behind"
    record(f"indexing process SIGKILLed during the {point}", 1, int(intact and finished))
