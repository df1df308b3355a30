"""The fault-injection figures: per fault class, faults injected, survived and items lost.

Each fault test adds what it injected and what it checked; ``tests/conftest.py`` prints the
table at the end of a pytest run (these are the lines of docs/reliability.md).
"""

from __future__ import annotations

from collections import defaultdict

FIGURES: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])


def record(fault_class: str, injected: int, survived: int, lost: int = 0) -> None:
    """Add ``injected`` faults of ``fault_class``, of which ``survived`` left nothing lost
    and were named, and ``lost`` items that were lost (the tests assert it is 0)."""
    row = FIGURES[fault_class]
    row[0] += injected
    row[1] += survived
    row[2] += lost


def table() -> str:
    """Return the figures as a Markdown table (empty when no fault test ran)."""
    if not FIGURES:
        return ""
    lines = ["| fault class | injected | survived | items lost |", "|---|---|---|---|"]
    lines += [f"| {name} | {i} | {s} | {lost} |" for name, (i, s, lost) in FIGURES.items()]
    return "\n".join(lines)
