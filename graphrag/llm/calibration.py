"""The embedded model's speed on this machine: measured on the last live run, kept in the project.

The committed figures (``embedded/speed.json``) were measured on another machine; here, with
another CPU or another job on the cores, the model may run several times slower, and a dry run
or an ETA timed with them reads low (#60: 3.2× low under contention). So every live call is
observed, and a run that made enough of them writes their token counts and wall time beside the
project's cache. The next dry run and ETA scale the committed figures by what this machine did,
and say so; a file written on another CPU, or by another model or server shape, is not used.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import replace
from pathlib import Path

from graphrag.llm.cost import ModelSpeed, embedded_speed, probe_speed
from graphrag.llm.usage import LIVE
from graphrag.settings import Settings

SPEED_FILE = "measured_speed.json"  # beside the project's cache folder
MIN_CALLS, MIN_SECONDS = 3, 20.0  # fewer or shorter: startup and noise, not the model's speed


def machine() -> str:
    """This machine as speed depends on it: the CPU model and the cores this process may use."""
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return f"{name}, {len(os.sched_getaffinity(0))} cores"


def server_shape(settings: Settings) -> str:
    emb = settings.embedded
    return f"{emb.model_file or 'default model'}; parallel {emb.parallel}; ctx {emb.ctx_size}"


def speed_file(settings: Settings) -> Path:
    return settings.resolve_path(settings.cache.path).parent / SPEED_FILE


def save(settings: Settings) -> Path | None:
    """Keep this process's live calls as the project's measured speed (enough of them only;
    an endpoint's speed is probed instead, so only the embedded model's is kept)."""
    seen = LIVE
    if settings.llm.base_url or not seen.embedded:  # a test's fake LLM is not this machine's
        return None
    if seen.calls < MIN_CALLS or seen.seconds < MIN_SECONDS:
        return None
    path = speed_file(settings)
    record = {
        "calls": seen.calls,
        "prompt_tokens": seen.prompt_tokens,
        "completion_tokens": seen.completion_tokens,
        "seconds": round(seen.seconds, 3),
        "machine": machine(),
        "server": server_shape(settings),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return path


def local_speed(settings: Settings) -> ModelSpeed:
    """The embedded model's speed for a dry run or an ETA: the committed figures scaled by this
    project's last live run on this machine, or the committed figures, saying which."""
    committed = embedded_speed(settings)
    path = speed_file(settings)
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        run = None
    if not run or run.get("machine") != machine() or run.get("server") != server_shape(settings):
        why = "none kept" if not run else "kept for another machine or server"
        return replace(
            committed,
            source=f"{committed.source}; measured on another machine ({why} in {path}: the "
            "first live run here keeps this machine's)",
        )
    expected = committed.seconds(run["prompt_tokens"], run["completion_tokens"], run["calls"])
    factor = run["seconds"] / max(expected, 1e-6)  # >1: this machine is slower
    return replace(
        committed,
        prompt_tokens_per_second=committed.prompt_tokens_per_second / factor,
        completion_tokens_per_second=committed.completion_tokens_per_second / factor,
        source=f"this machine's last live run ({run['calls']} calls, {run['measured_at']}: "
        f"{factor:.2f}× the time of the committed figures; {path})",
    )


def model_speed(settings: Settings) -> ModelSpeed | None:
    """Return the configured model's speed: an endpoint's probed with one small request, the
    embedded model's as :func:`local_speed`; None in replay (no model is called)."""
    if settings.cache.mode == "replay":
        return None
    return probe_speed(settings) if settings.llm.base_url else local_speed(settings)
