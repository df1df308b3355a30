"""The recorded cache shared by processes: whole files only, and one model call per request."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import FakeLLM
from faults.ledger import record

from graphrag.llm.client import ResponseCache

WORKERS = Path(__file__).with_name("workers.py")


def start_together(commands: list[list[str]], folder: Path, **popen) -> list[subprocess.Popen]:
    """Start the processes, wait until each has signalled READY, then let them all GO at once
    (each command's last two arguments are filled with its READY and the GO path)."""
    go = folder / "go"
    ready = [folder / f"ready{i}" for i in range(len(commands))]
    procs = [
        subprocess.Popen([*c, str(r), str(go)], **popen)
        for c, r in zip(commands, ready, strict=True)
    ]
    while not all(r.exists() for r in ready):
        assert all(p.poll() is None for p in procs), "a worker died before starting"
        time.sleep(0.02)
    go.touch()
    return procs


def test_processes_writing_one_cache_entry_never_tear_it(tmp_path: Path) -> None:
    key, root, n = "ab" + "0" * 62, tmp_path / "cache", 300
    command = [sys.executable, str(WORKERS), "put", str(root), key, str(n)]
    procs = start_together([[*command, tag] for tag in "abc"], tmp_path)
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0, 0], "a writer failed (temporary files collided)"
    stored = json.loads(ResponseCache(root).path_for(key).read_text())
    assert stored["response"]["tag"] in "abc" and stored["response"]["i"] == n - 1
    assert not list(root.rglob("*.tmp")), "no temporary file is left behind"
    record("cache entry written by 3 processes at once", 3 * n, 3 * n)


def test_identical_requests_from_processes_reach_the_model_once(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.delay = 1.0  # long enough for the other process to ask while the first waits
    fake_llm.respond_with(lambda body: "one answer")
    cache = tmp_path / "cache"
    command = [sys.executable, str(WORKERS), "ask", fake_llm.base_url, str(cache)]
    procs = start_together([command] * 3, tmp_path, stdout=subprocess.PIPE, text=True)
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outputs == ["one answer"] * 3
    assert fake_llm.calls == 1
    record("identical requests from 3 processes", 3, 3)
