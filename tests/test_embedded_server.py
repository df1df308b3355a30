"""The embedded server's lifecycle: portable start, restart after a crash, no orphans, safe
weight assembly.

The lifecycle tests start the real server (marked live_llm: CI runs them); the weight tests
use small files made here.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from graphrag.llm.client import ChatLLM
from graphrag.llm.embedded import server as server_module
from graphrag.llm.embedded.server import (
    EmbeddedServerError,
    prune_logs,
)
from graphrag.llm.embedded.weights import WeightsError, WeightSpec, assemble_weights
from graphrag.settings import load_settings

QUESTION = [{"role": "user", "content": "What is 17 + 25? Reply with the number only."}]


def _settings(root: Path, **embedded):
    return load_settings(
        env={},
        overrides={
            "cache": {"mode": "off", "path": str(root / "cache")},
            "embedded": {"parallel": 1, "ctx_size": 2048, **embedded},
        },
    )


def _running(pid: int) -> bool:
    """True while ``pid`` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _wait_gone(pid: int, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _running(pid):
            return True
        time.sleep(0.2)
    return False


@pytest.mark.live_llm
def test_a_killed_server_is_restarted_and_the_run_carries_on(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(server_module, "MAX_RESTARTS", 1)
    llm = ChatLLM(_settings(tmp_path))
    # A server of its own: reusing one another test's model object started (same settings),
    # the kill below would hit a server whose owner may stop it any moment (seen in CI:
    # both the reused server and the next one were stopped under the test).
    llm.server.reuse = False
    try:
        assert "42" in llm.chat(QUESTION, max_tokens=8).text
        first = llm.server.process.pid
        os.kill(first, signal.SIGKILL)
        assert _wait_gone(first)
        again = llm.chat(
            [{"role": "user", "content": "What is 2 + 3? Reply with the number only."}],
            max_tokens=8,
        )
        assert "5" in again.text
        assert llm.server.restarts == 1 and llm.server.process.pid != first
        said = capfd.readouterr().err
        assert f"pid {first}) was killed by SIGKILL" in said and ".log" in said
        assert said.count("graphrag: starting the embedded model") == 2  # the start announced
        assert said.count("graphrag: embedded model ready in") == 2
        # A second death is past MAX_RESTARTS: a clear error naming the log.
        os.kill(llm.server.process.pid, signal.SIGKILL)
        assert _wait_gone(llm.server.process.pid)
        with pytest.raises(EmbeddedServerError, match=r"already restarted 1 times.*\.log"):
            llm.chat([{"role": "user", "content": "Say hi."}], max_tokens=4)
    finally:
        llm.close()


@pytest.mark.live_llm
def test_no_server_outlives_a_sigkilled_parent(tmp_path):
    script = textwrap.dedent(
        f"""
        import time
        from graphrag.settings import load_settings
        from graphrag.llm.embedded.server import EmbeddedServer
        settings = load_settings(env={{}}, overrides={{
            "embedded": {{"parallel": 1, "ctx_size": 2048}},
            "cache": {{"path": {str(tmp_path / "cache")!r}}}}})
        server = EmbeddedServer(settings)
        server.ensure_running()
        print(server.process.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path.cwd()
    )
    try:
        server_pid = int(parent.stdout.readline())
        assert _running(server_pid)
        parent.kill()  # SIGKILL: no atexit hook, no signal handler runs in the parent
        parent.wait()
        assert _wait_gone(server_pid), "the server outlived its SIGKILLed parent"
    finally:
        parent.kill()


def _fake_weight_packages(root: Path, chunks: list[bytes]) -> WeightSpec:
    for number, chunk in enumerate(chunks, 1):
        data = root / f"fakeweightpart{number}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        (data / f"part{number}.bin").write_bytes(chunk)
    whole = b"".join(chunks)
    return WeightSpec("fake.gguf", "fakeweightpart", len(chunks), len(whole),
                      hashlib.sha256(whole).hexdigest())  # fmt: skip


def test_two_processes_assembling_at_once_get_one_verified_file(tmp_path):
    chunks = [os.urandom(3 << 20) for _ in range(3)]
    spec = _fake_weight_packages(tmp_path / "pkgs", chunks)
    home = tmp_path / "home"
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path / "pkgs")!r})
        from pathlib import Path
        from graphrag.llm.embedded.weights import WeightSpec, assemble_weights
        spec = WeightSpec(*{[spec.name, spec.package_prefix, spec.parts, spec.size, spec.sha256]!r})
        print(assemble_weights(spec, Path({str(home)!r})))
        """
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    paths = {run.communicate()[0].strip() for run in runs}
    assert all(run.returncode == 0 for run in runs)
    assert len(paths) == 1
    assembled = Path(paths.pop())
    assert assembled.read_bytes() == b"".join(chunks)
    assert not list(assembled.parent.glob("*.partial"))
    # A part that does not match its pin is refused and leaves nothing half-written behind.
    bad = WeightSpec("bad.gguf", spec.package_prefix, spec.parts, spec.size, "0" * 64)
    sys.path.insert(0, str(tmp_path / "pkgs"))
    try:
        with pytest.raises(WeightsError, match="does not match its pin"):
            assemble_weights(bad, home)
    finally:
        sys.path.remove(str(tmp_path / "pkgs"))
    assert not (home / "models" / "bad.gguf").exists()
    assert not list((home / "models").glob("*.partial"))


def test_server_logs_are_pruned_to_the_newest(tmp_path):
    """Each start writes its own log; only the ``keep`` newest survive, other files stay."""
    for i in range(5):
        log = tmp_path / f"server-{i}.log"
        log.write_text(str(i))
        os.utime(log, (1_000 + i, 1_000 + i))
    (tmp_path / "server.json").write_text("{}")
    deleted = prune_logs(tmp_path, keep=2)
    assert sorted(p.name for p in deleted) == ["server-0.log", "server-1.log", "server-2.log"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "server-3.log",
        "server-4.log",
        "server.json",
    ]
    assert prune_logs(tmp_path, keep=2) == []
