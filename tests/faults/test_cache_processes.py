"""The recorded cache shared by processes: whole files only, and one model call per request."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import FakeLLM
from faults.ledger import record

from graphrag.llm import ResponseCache

WORKERS = Path(__file__).with_name("workers.py")


def test_processes_writing_one_cache_entry_never_tear_it(tmp_path: Path) -> None:
    key = "ab" + "0" * 62
    procs = [
        subprocess.Popen([sys.executable, str(WORKERS), "put", str(tmp_path), key, "60", tag])
        for tag in ("a", "b", "c")
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0, 0], "a writer failed (temporary files collided)"
    stored = json.loads(ResponseCache(tmp_path).path_for(key).read_text())
    assert stored["response"]["tag"] in "abc" and stored["response"]["i"] == 59
    assert not list(tmp_path.rglob("*.tmp")), "no temporary file is left behind"
    record("cache entry written by 3 processes at once", 180, 180)


def test_identical_requests_from_processes_reach_the_model_once(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.delay = 1.0  # long enough for the other process to ask while the first waits
    fake_llm.respond_with(lambda body: "one answer")
    cache, go = tmp_path / "cache", tmp_path / "go"
    ready = [tmp_path / f"ready{i}" for i in range(3)]
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS), "ask", fake_llm.base_url, str(cache), str(r), str(go)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in ready
    ]
    while not all(r.exists() for r in ready):
        assert all(p.poll() is None for p in procs), "a worker died before asking"
        time.sleep(0.02)
    go.touch()
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outputs == ["one answer"] * 3
    assert fake_llm.calls == 1
    record("identical requests from 3 processes", 3, 3)
