"""The embedded default LLM: graphrag/llm/embedded/serve.py in a child process on 127.0.0.1.

Started only on a cache miss, reused when a server with the same signature runs already,
restarted when it dies mid-run (at most ``MAX_RESTARTS`` times), stopped at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
from filelock import FileLock
from tqdm import tqdm

from graphrag.llm import progress, usage
from graphrag.llm.cost import local_speed, usable_cores
from graphrag.llm.embedded.weights import INSTALL_EMBEDDED, assemble_weights, graphrag_home
from graphrag.settings import Settings

MAX_RESTARTS = 2  # a server that dies mid-run is restarted this many times at most
KEEP_LOGS = 20  # server-*.log files kept in $GRAPHRAG_HOME (the newest)
CACHE_REUSE = 0  # llama.cpp's --cache-reuse (KV chunks re-used by shifting): off
BATCH_SIZE = 512  # llama.cpp's -b and its default: moves speed, not what the model is asked
STARTUP_TIMEOUT = 300.0  # seconds to load the model: generous for a slow disk

__all__ = ["EmbeddedServer", "EmbeddedServerError"]


class EmbeddedServerError(RuntimeError):
    """The embedded model could not be served; the message says what to do."""


def announce(message: str) -> None:
    """Say on stderr what the server is doing (between progress lines, not through them)."""
    tqdm.write(f"graphrag: {message}", file=sys.stderr)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _exit_text(code: int | None) -> str:
    if code is None:
        return "is unresponsive"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _log_tail(path: Path, chars: int = 1500) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except FileNotFoundError:
        return "(no log)"


def prune_logs(home: Path, keep: int) -> list[Path]:
    """Delete all but the ``keep`` newest ``server-*.log`` in ``home``; return those deleted
    (every start writes its own log, so a restart keeps the log of why the server died)."""

    def modified(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except FileNotFoundError:  # pruned meanwhile by another process starting a server
            return 0.0

    logs = sorted(home.glob("server-*.log"), key=modified, reverse=True)
    stale = logs[max(keep, 0) :]
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


class EmbeddedServer:
    """Start, reuse, health-check, restart and stop the embedded server (a reused one is left
    running)."""

    def __init__(self, settings: Settings, reuse: bool = True) -> None:
        self.settings = settings
        self.reuse = reuse  # False: always start a server of one's own (benchmarks)
        self.home = graphrag_home()
        self.state_file = self.home / "server.json"
        self.log_file = self.home / "server.log"  # renamed per start once started
        self.process: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self.restarts = 0
        self._pid: int | None = None  # the server process in use, started here or reused
        self._parent_fd: int | None = None  # write end of the pipe the server watches
        self._lock = threading.Lock()
        self._atexit = False

    def signature(self, model_file: Path) -> list[str]:
        """Return the server's arguments that make two servers interchangeable."""
        emb = self.settings.embedded
        return [
            "--model", str(model_file),
            "--alias", self.settings.llm.model,
            "--ctx-size", str(emb.ctx_size),
            "--parallel", str(emb.parallel),
            "--threads", str(usable_cores()),
            "--batch-size", str(BATCH_SIZE),
            "--cache-reuse", str(CACHE_REUSE),
        ]  # fmt: skip

    def _model_file(self) -> Path:
        configured = self.settings.embedded.model_file
        if configured:
            path = self.settings.resolve_path(configured)
            if not path.is_file():
                raise EmbeddedServerError(
                    f"setting embedded.model_file (judge.model_file for a judge's own server): "
                    f"{path} does not exist"
                )
            return path
        return assemble_weights(home=self.home)

    def _reusable(self, signature: list[str]) -> tuple[str, int] | None:
        try:
            state = json.loads(self.state_file.read_text())
        except (FileNotFoundError, ValueError):
            return None
        if state.get("signature") == signature and _alive(state["pid"]) and _healthy(state["url"]):
            self.log_file = Path(state.get("log") or self.log_file)
            return state["url"], int(state["pid"])
        return None

    def ensure_running(self) -> str:
        """Return the server's base URL (``…/v1``), starting the server if none is running."""
        with self._lock:
            if self.url is not None and _healthy(self.url):
                return self.base_url
            return self._ensure_locked()

    def _ensure_locked(self) -> str:
        model_file = self._model_file()
        signature = self.signature(model_file)
        with FileLock(self.home / "server.lock"):
            reused = self._reusable(signature) if self.reuse else None
            if reused is not None:
                announce(f"using the embedded model already running at {reused[0]}")
            found = reused or self._start(signature)
        self.url, self._pid = found
        usage.LIVE.embedded = True  # live calls from now on are this machine's model speed
        if not self.settings.embedded.model_file:  # the speed measured is the default model's
            progress.calibrate(local_speed(self.settings), str(self.log_file))
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def port(self) -> int | None:
        return httpx.URL(self.url).port if self.url else None

    def _start(self, signature: list[str]) -> tuple[str, int]:
        if importlib.util.find_spec("xllamacpp") is None:
            raise EmbeddedServerError(
                "the embedded model's engine xllamacpp is not installed: it comes with the "
                f"[embedded] extra; {INSTALL_EMBEDDED}, or set llm.base_url to an endpoint "
                "of your own"
            )
        prune_logs(self.home, KEEP_LOGS - 1)  # room for this one
        stamp = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.log_file = self.home / f"server-{stamp}.log"
        ready_file = self.home / f"server-{stamp}.ready"
        read_fd, write_fd = os.pipe()
        command = [
            sys.executable, "-m", "graphrag.llm.embedded.serve", *signature,
            "--ready-file", str(ready_file),
            "--parent-fd", str(read_fd),
            "--parent-pid", str(os.getpid()),
        ]  # fmt: skip
        with self.log_file.open("wb") as log:  # the child keeps its own handle
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                pass_fds=(read_fd,),
            )
        os.close(read_fd)
        if self._parent_fd is not None:
            os.close(self._parent_fd)
        self._parent_fd = write_fd
        if not self._atexit:
            atexit.register(self.stop)
            self._atexit = True
        url = None
        started = time.monotonic()
        emb = self.settings.embedded
        announce(
            f"starting the embedded model {self.settings.llm.model} ({emb.parallel} slots, "
            f"{usable_cores()} threads, one per usable core; log: "
            f"{self.log_file}) …"
        )
        deadline = started + STARTUP_TIMEOUT
        try:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise EmbeddedServerError(
                        f"the embedded server {_exit_text(self.process.returncode)} while "
                        f"starting; the end of {self.log_file}:\n{_log_tail(self.log_file)}"
                    )
                if url is None and ready_file.exists():
                    url = json.loads(ready_file.read_text())["url"]
                if url is not None and _healthy(url):
                    self._write_state(url, signature)
                    announce(f"embedded model ready in {time.monotonic() - started:.0f} s at {url}")
                    return url, self.process.pid
                time.sleep(0.25)
            self._kill()
            raise EmbeddedServerError(
                f"the embedded server did not become healthy within {STARTUP_TIMEOUT:.0f}s; "
                f"see {self.log_file}"
            )
        finally:
            ready_file.unlink(missing_ok=True)

    def _write_state(self, url: str, signature: list[str]) -> None:
        assert self.process is not None
        pid, log = self.process.pid, str(self.log_file)
        state = {"pid": pid, "url": url, "signature": signature, "log": log}
        tmp = self.state_file.with_name(f"server.json.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(self.state_file)

    def recover(self) -> str:
        """Return the base URL (``…/v1``) after a request could not reach the server, which is
        restarted if it died. Concurrent callers are serialized: the first restarts, the rest
        find it healthy. A live but unreachable server, or too many restarts, is an error."""
        with self._lock:
            if self.url is None:
                return self._ensure_locked()  # never started here: start (or reuse) one
            if _healthy(self.url):
                return self.base_url  # another request restarted it, or the failure was transient
            code = self.process.poll() if self.process is not None else None
            dead = code is not None or (self._pid is not None and not _alive(self._pid))
            if not dead and self._pid is not None:
                raise EmbeddedServerError(
                    f"the embedded server (pid {self._pid}) is running but does not answer at "
                    f"{self.url}; see {self.log_file}"
                )
            how = _exit_text(code) if code is not None else "died"
            died = f"the embedded server (pid {self._pid}) {how}"
            if self.restarts >= MAX_RESTARTS:
                raise EmbeddedServerError(
                    f"{died} and was already restarted {self.restarts} times (the most a run "
                    f"restarts it); the end of {self.log_file}:\n"
                    f"{_log_tail(self.log_file)}"
                )
            self.restarts += 1
            print(
                f"graphrag: {died}; see {self.log_file}. Restarting it ({self.restarts} of "
                f"{MAX_RESTARTS}); finished work is kept in the cache.",
                file=sys.stderr,
            )
            self.process = self.url = self._pid = None
            return self._ensure_locked()

    def _kill(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """Stop the server if this object started it; a reused server is left running."""
        if self.process is not None:
            pid = self.process.pid
            self._kill()
            with contextlib.suppress(FileNotFoundError, ValueError):
                if json.loads(self.state_file.read_text()).get("pid") == pid:
                    self.state_file.unlink()
        if self._parent_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._parent_fd)
            self._parent_fd = None
        self.process = self.url = self._pid = None
