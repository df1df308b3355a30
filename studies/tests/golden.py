"""What the study scripts print, pinned: a study test replays a script from the recorded cache
and compares its lines with those recorded in ``golden/<name>.txt``. After a change that is
meant to move a figure, ``GOLDEN_UPDATE=1`` rewrites the file (and the diff shows what moved);
docs/research-log.md quotes these lines, but no test reads it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from importlib import import_module
from pathlib import Path
from types import ModuleType

GOLDEN = Path(__file__).parent / "golden"


def assert_printed(name: str, lines: Iterable[str]) -> None:
    """Fail unless ``lines`` are, in order, the lines recorded in ``golden/<name>.txt``."""
    lines = list(lines)
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("GOLDEN_UPDATE"):
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return
    assert lines == path.read_text(encoding="utf-8").splitlines(), f"not as in {path}"


def load_benchmark(name: str) -> ModuleType:
    """Return the study script ``studies/benchmarks/<name>.py`` as a module."""
    return import_module(f"studies.benchmarks.{name}")
