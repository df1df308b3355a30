"""A run's progress on stderr, one tqdm line per stage:

    [2/6] extract: 7/16 calls, 31 tok/s, 3 from cache, ETA 6m40s

The ETA is the whole run's: this stage's rest at its pace so far (before its first item ends:
the dry run's estimate, graphrag/llm/cost.py) plus the estimate for the stages to come. A
stage counts what runs inside it (:func:`graphrag.llm.coroutines.gather_with_progress`, or
``expect``/``advance`` on its line), so several rounds of calls still show as one line. The
line is redrawn every ``TICK_SECONDS`` so a reply that takes minutes still moves it. A model far
below its calibrated speed (:func:`calibrate`) is named once, with contention as the likely
cause; a stage left by Ctrl-C or SIGTERM ends "interrupted after k of n", also noted on the
exception for the command's last line.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tqdm import tqdm

from graphrag.llm.usage import Usage, track_usage

BAR_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit}{postfix}"
CALLS_FORMAT = "{desc}: {n_fmt} {unit}{postfix}"  # a stage that counts its LLM calls only
TICK_SECONDS = 2.0  # how often a running stage's line is redrawn
WARN_AFTER_SECONDS = 60.0  # a stage's speed is judged only after this long (before: noise)
FAR_BELOW = 1 / 3  # the share of the calibrated speed below which the run warns


def duration(seconds: float | None) -> str:
    """Return ``seconds`` as ``1h02m``, ``4m10s`` or ``12s`` (``?`` when unknown)."""
    if seconds is None or math.isnan(seconds):
        return "?"
    whole = int(round(seconds))
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class Calibration:
    """The speed the model was measured at (a ``ModelSpeed``), its server's log, since when
    it serves (its start is no work) and whether the run has warned already (once a run)."""

    def __init__(self, speed: Any, log: str) -> None:
        self.speed, self.log, self.warned, self.since = speed, log, False, time.monotonic()


_calibration: Calibration | None = None


def calibrate(speed: Any, log: str) -> None:
    """Judge the stages' speed against ``speed`` (a ``ModelSpeed``); ``log``: the server's."""
    global _calibration
    if _calibration is None or (_calibration.speed, _calibration.log) != (speed, log):
        _calibration = Calibration(speed, log)


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
        self.usage, self.unit, self.counts_gathers = usage, unit, counts_gathers
        self.expected_seconds, self.later_seconds = expected_seconds, later_seconds
        self.started = time.monotonic()
        self.done = self.total = 0
        self.counts_calls = unit == "LLM calls"  # no items: the calls are the work
        self.streamed = self.streamed_total = 0  # reply tokens of live calls in flight; all
        self.first_streamed: float | None = None
        bar_format = CALLS_FORMAT if self.counts_calls else BAR_FORMAT
        self.bar = tqdm(
            total=0, desc=label, unit=unit, disable=not enabled, leave=True, file=sys.stderr,
            bar_format=bar_format, mininterval=0.5,
        )  # fmt: skip
        self._stop = threading.Event()
        threading.Thread(target=self._tick, daemon=True).start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            self.check_speed()
            if self.counts_calls:
                self.bar.n = self.usage.calls
            self.bar.set_postfix_str(self.status(), refresh=True)

    def expect(self, items: int) -> None:
        """Add ``items`` to the work this stage expects."""
        self.total += items
        self.bar.total = self.total
        self.bar.set_postfix_str(self.status(), refresh=True)

    def advance(self, items: int = 1) -> None:
        self.done += items
        self.check_speed()
        self.bar.set_postfix_str(self.status(), refresh=False)
        self.bar.update(items)

    def stream(self, tokens: int) -> None:
        """Count ``tokens`` of a live reply arriving (negative: its call ended and counts in
        the usage now)."""
        self.streamed += tokens
        if tokens > 0:
            self.streamed_total += tokens
            self.first_streamed = self.first_streamed or time.monotonic()

    def stage_left(self, done: int) -> float | None:
        """Return the seconds left in this stage: at its pace so far, else as estimated."""
        elapsed = time.monotonic() - self.started
        if done:
            return elapsed / done * (self.total - done)
        return None if self.expected_seconds is None else max(self.expected_seconds - elapsed, 0)

    def eta(self, done: int) -> float | None:
        """Return the seconds left in the run: this stage's rest plus the later stages'."""
        here = self.stage_left(done)
        return None if here is None or self.later_seconds is None else here + self.later_seconds

    def live_share(self) -> float:
        """Return the share of the counted calls that reached the model (the calls of a stage
        are alike: the cache's share of the tokens is taken as its share of calls)."""
        usage = self.usage
        return (usage.calls - usage.cache_hits) / usage.calls if usage.calls else 0.0

    def speed(self, elapsed: float) -> list[str]:
        """Return the live reply tokens per second and the calls the cache served."""
        usage, live = self.usage, self.usage.calls - self.usage.cache_hits
        plural = "s" * (usage.calls != 1)
        calls = [] if self.counts_calls or not usage.calls else [f"{usage.calls} LLM call{plural}"]
        if not live and not self.streamed:
            return [*calls, f"{usage.calls} from cache"] if usage.calls else []
        tokens = usage.completion_tokens * self.live_share() + self.streamed
        hits = [f"{usage.cache_hits} from cache"] if usage.cache_hits else []
        return [*calls, f"{tokens / max(elapsed, 1e-6):.1f} tok/s", *hits]

    def status(self) -> str:
        """Return the line's tail: calls, tokens per second, cache hits, then the ETA."""
        elapsed = time.monotonic() - self.started
        parts = self.speed(elapsed)
        if self.counts_calls:
            return ", ".join([*parts, duration(elapsed)])
        left = self.eta(self.done)
        if left is None:  # the later stages' time is unknown (an endpoint not yet measured)
            return ", ".join([*parts, f"stage ETA {duration(self.stage_left(self.done))}"])
        return ", ".join([*parts, f"ETA {duration(left)}"])

    def slowness(self) -> float | None:
        """Return the share of its calibrated speed the model ran at in this stage: the
        calibrated seconds of the live calls' tokens over the seconds taken, or (none ended
        yet) the streamed reply rate over one slot's; None before ``WARN_AFTER_SECONDS``."""
        calibration, now, usage = _calibration, time.monotonic(), self.usage
        speed, began = calibration.speed, max(self.started, calibration.since)
        live = usage.calls - usage.cache_hits
        if live and now - began >= WARN_AFTER_SECONDS:
            share = self.live_share()
            work = (usage.prompt_tokens * share, usage.completion_tokens * share, live)
            return speed.seconds(*work) / (now - began)
        if self.first_streamed is not None and now - self.first_streamed >= WARN_AFTER_SECONDS:
            rate = self.streamed_total / (now - self.first_streamed)
            return rate / (speed.completion_tokens_per_second / max(speed.parallel, 1))
        return None

    def check_speed(self) -> None:
        """Warn once a run when the model runs below ``FAR_BELOW`` of its calibrated speed."""
        calibration = _calibration
        if calibration is None or calibration.warned:
            return
        share = self.slowness()
        if share is None or share >= FAR_BELOW:
            return
        calibration.warned = True
        tqdm.write(
            f"graphrag: warning: the model runs at {share:.0%} of the speed it was calibrated "
            f"at ({calibration.speed.completion_tokens_per_second:.1f} reply tok/s); another "
            "process busy on these CPU cores is the likely cause (see `top`); the model "
            f"server's log: {calibration.log}",
            file=sys.stderr,
        )

    def close(self, interrupted: BaseException | None = None) -> str:
        """End the line "done in", or "interrupted after k of n" (Ctrl-C, SIGTERM) or
        "stopped by an error after k of n"; return that ending."""
        self._stop.set()
        elapsed = time.monotonic() - self.started
        if self.counts_calls:
            self.bar.n = self.usage.calls
        if interrupted is None:
            ending = f"done in {duration(elapsed)}"
            if not self.total and not self.counts_calls:
                self.bar.unit = "(no LLM call)"
        else:
            stopped = isinstance(interrupted, KeyboardInterrupt | SystemExit)
            how = "interrupted" if stopped else "stopped by an error"
            count = self.usage.calls if self.counts_calls else self.done
            of = "" if self.counts_calls else f" of {self.total}"
            ending = f"{how} after {count}{of} {self.unit} ({duration(elapsed)})"
        self.bar.set_postfix_str(", ".join([*self.speed(elapsed), ending]), refresh=False)
        self.bar.close()
        return ending


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
        self.names, self.expected = list(names), expected or {}
        self.enabled, self.unit = enabled, unit

    @contextmanager
    def stage(
        self, name: str, unit: str | None = None, counts_gathers: bool = True
    ) -> Iterator[StageProgress]:
        """Run the block as stage ``name``, its work counted on its line (``counts_gathers``:
        also the items the block gathers)."""
        position = self.names.index(name)
        later = [self.expected.get(n) for n in self.names[position + 1 :]]
        unknown = not self.expected or any(s is None for s in later)
        rest = None if unknown else sum(s or 0.0 for s in later)
        label = f"[{position + 1}/{len(self.names)}] {name}"
        with track_usage() as usage:
            line = StageProgress(
                label, usage, self.enabled, self.expected.get(name), rest, unit or self.unit,
                counts_gathers,
            )  # fmt: skip
            token = _current.set(line)
            try:
                yield line
            except BaseException as err:
                _current.reset(token)
                ending = line.close(err)
                if isinstance(err, KeyboardInterrupt | SystemExit):
                    err.add_note(f"{name}: {ending}")
                raise
            _current.reset(token)
            line.close()


def gathering_stage() -> StageProgress | None:
    """Return the line of the stage running in this context, if it counts gathered items."""
    line = _current.get()
    return line if line is not None and line.counts_gathers else None


def expect(items: int) -> None:
    """Add ``items`` to the current stage's expected work (nothing outside a stage)."""
    if (line := _current.get()) is not None:
        line.expect(items)


def advance(items: int = 1) -> None:
    """Count ``items`` of the current stage's work done (nothing outside a stage)."""
    if (line := _current.get()) is not None:
        line.advance(items)


def stream(tokens: int) -> None:
    """Count ``tokens`` of a live streamed reply arriving on the current stage's line
    (negative when the call ends: its tokens are counted in the usage then)."""
    if (line := _current.get()) is not None:
        line.stream(tokens)
