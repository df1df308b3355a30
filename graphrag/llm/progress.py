"""A run's progress on stderr, one line per stage:

    [2/6] extract: 7/16 calls, 31 tok/s, 3 from cache, ETA 6m40s

The ETA is the whole run's: what is left of this stage at its pace so far (before its first
call ends: the estimate's), plus the estimate's seconds for the stages to come (the dry run's
figures, graphrag/llm/cost.py). The stage's work is counted by whatever runs inside it:
:func:`graphrag.llm.coroutines.gather_with_progress` and the callers of :func:`expect` and
:func:`advance`, so a stage with several rounds of calls still shows as one line.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tqdm import tqdm

from graphrag.llm.usage import Usage, track_usage

BAR_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit}{postfix}"


def duration(seconds: float | None) -> str:
    """Return ``seconds`` as ``1h02m``, ``4m10s`` or ``12s`` (``?`` when unknown)."""
    if seconds is None or math.isnan(seconds):
        return "?"
    whole = int(round(seconds))
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class StageProgress:
    """The line of one stage: items done of those expected, tokens per second, the ETA."""

    def __init__(
        self,
        label: str,
        usage: Usage,
        enabled: bool,
        expected_seconds: float | None,
        later_seconds: float | None,
        unit: str,
        counts_gathers: bool = True,
    ) -> None:
        self.usage = usage
        self.counts_gathers = counts_gathers
        self.expected_seconds = expected_seconds
        self.later_seconds = later_seconds
        self.started = time.monotonic()
        self.bar = tqdm(
            total=0,
            desc=label,
            unit=unit,
            disable=not enabled,
            leave=True,
            file=sys.stderr,
            bar_format=BAR_FORMAT,
            mininterval=0.5,
        )

    def expect(self, items: int) -> None:
        """Add ``items`` to the work this stage expects."""
        self.bar.total += items
        self.bar.set_postfix_str(self.status(), refresh=True)

    def advance(self, items: int = 1) -> None:
        """Count ``items`` done."""
        self.bar.set_postfix_str(self.status(extra=items), refresh=False)
        self.bar.update(items)

    def stage_left(self, done: int) -> float | None:
        """Return the seconds left in this stage: at its pace so far, else as estimated."""
        elapsed = time.monotonic() - self.started
        if done:
            return elapsed / done * (self.bar.total - done)
        if self.expected_seconds is not None:
            return max(self.expected_seconds - elapsed, 0.0)
        return None

    def eta(self, done: int) -> float | None:
        """Return the seconds left in the run: this stage's rest plus the later stages'."""
        here = self.stage_left(done)
        return None if here is None or self.later_seconds is None else here + self.later_seconds

    def status(self, extra: int = 0) -> str:
        """Return the line's tail: tokens per second, calls served by the cache, the ETA."""
        elapsed = max(time.monotonic() - self.started, 1e-6)
        usage = self.usage
        parts = [speed(usage, elapsed)] if usage.calls else []
        done = self.bar.n + extra
        left = self.eta(done)
        if left is None:  # the later stages' time is unknown (an endpoint not yet measured)
            return ", ".join([*parts, f"stage ETA {duration(self.stage_left(done))}"])
        return ", ".join([*parts, f"ETA {duration(left)}"])

    def close(self) -> None:
        elapsed = time.monotonic() - self.started
        done = self.bar.n
        parts = [speed(self.usage, elapsed)] if self.usage.calls else []
        tail = ", ".join([*parts, f"done in {duration(elapsed)}"])
        if not self.bar.total:
            self.bar.unit = "(no LLM call)"
        self.bar.set_postfix_str(tail, refresh=False)
        self.bar.n = done
        self.bar.close()


def speed(usage: Usage, elapsed: float) -> str:
    """Return the reply tokens per second of the live calls, and how many the cache served
    (a replayed reply's tokens cost no time: they are left out when every call was one)."""
    if usage.cache_hits == usage.calls:
        return f"{usage.calls} from cache"
    rate = f"{usage.completion_tokens / max(elapsed, 1e-6):.1f} tok/s"
    return rate + (f", {usage.cache_hits} from cache" if usage.cache_hits else "")


_current: ContextVar[StageProgress | None] = ContextVar("graphrag_stage_progress", default=None)


class RunProgress:
    """The stages of one run (``names`` in order), each shown as one line while it runs;
    ``expected``: the estimate's seconds per stage, for the run's ETA."""

    def __init__(
        self,
        names: list[str],
        expected: dict[str, float | None] | None = None,
        enabled: bool = True,
        unit: str = "items",
    ) -> None:
        self.names = list(names)
        self.expected = expected or {}
        self.enabled = enabled
        self.unit = unit

    def _later(self, position: int) -> float | None:
        later = [self.expected.get(n) for n in self.names[position + 1 :]]
        if not self.expected or any(s is None for s in later):
            return None
        return sum(s or 0.0 for s in later)

    @contextmanager
    def stage(
        self, name: str, unit: str | None = None, counts_gathers: bool = True
    ) -> Iterator[StageProgress]:
        """Run the block as stage ``name``: its work is counted on its line, by the block's
        :func:`expect` and :func:`advance` and (``counts_gathers``) its gathered items."""
        position = self.names.index(name)
        label = f"[{position + 1}/{len(self.names)}] {name}"
        with track_usage() as usage:
            line = StageProgress(
                label,
                usage,
                self.enabled,
                self.expected.get(name),
                self._later(position),
                unit or self.unit,
                counts_gathers,
            )
            token = _current.set(line)
            try:
                yield line
            finally:
                _current.reset(token)
                line.close()


def gathering_stage() -> StageProgress | None:
    """Return the line of the stage running in this context, if it counts gathered items."""
    line = _current.get()
    return line if line is not None and line.counts_gathers else None


def expect(items: int) -> None:
    """Add ``items`` to the current stage's expected work (nothing outside a stage)."""
    line = _current.get()
    if line is not None:
        line.expect(items)


def advance(items: int = 1) -> None:
    """Count ``items`` of the current stage's work done (nothing outside a stage)."""
    line = _current.get()
    if line is not None:
        line.advance(items)
