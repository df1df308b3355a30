"""What LLM work costs: a cost estimate's shape and rendering (the estimates themselves are
workbench/eval/dry_run.py's), and the configured model's speed, measured: an endpoint's from one
small streamed request; the embedded model's from the committed figures (``embedded/speed.json``,
``python -m studies.cost_model --write``) scaled by this machine's last live run. The committed
figures were measured elsewhere and another CPU or a busy core reads several times slower (#60:
3.2x under contention), so a live run that made enough calls keeps their tokens and wall time
beside the project's cache (:func:`save`); a file from another CPU or server shape is not used.
"""

from __future__ import annotations

import importlib.resources
import json
import math
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from graphrag.llm.cache import LLMError
from graphrag.llm.progress import duration
from graphrag.llm.transport import cpu_name
from graphrag.llm.usage import LIVE
from graphrag.settings import Settings

# The probe: a short prompt and a short reply, timed to the first token and to the last.
PROBE_PROMPT = "Count from one to forty in words, separated by commas."
PROBE_TOKENS = 48
PROBE_TIMEOUT = 60.0
SPEED_FILE = "measured_speed.json"  # beside the project's cache folder
MIN_CALLS, MIN_SECONDS = 3, 20.0  # fewer or shorter: startup and noise, not the model's speed


@dataclass(frozen=True)
class ModelSpeed:
    """Tokens per second of the model: ``aggregate`` rates are the server's with its
    ``parallel`` slots busy (the embedded server's, measured on whole stages), else the rates
    are one request's and ``parallel`` requests are assumed to run side by side."""

    prompt_tokens_per_second: float
    completion_tokens_per_second: float
    source: str
    aggregate: bool = True
    parallel: int = 1

    def seconds(self, prompt_tokens: float, completion_tokens: float, calls: float) -> float:
        """Return the wall seconds of ``calls`` requests holding these tokens."""
        work = (
            prompt_tokens / self.prompt_tokens_per_second
            + completion_tokens / self.completion_tokens_per_second
        )
        busy = max(1, min(self.parallel, math.ceil(calls)))  # fewer calls leave slots idle
        return work * self.parallel / busy if self.aggregate else work / busy


@dataclass
class StageEstimate:
    """One stage's expected LLM work: calls (``cached_calls`` of them found recorded, which
    cost no model time), tokens, wall seconds and how the figures were had."""

    stage: str
    calls: float = 0.0
    cached_calls: int = 0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    seconds: float | None = 0.0
    basis: str = ""


@dataclass
class CostEstimate:
    """The estimate of a run, stage by stage, with the speed used and notes for the reader."""

    what: str
    stages: list[StageEstimate]
    speed: ModelSpeed | None = None
    notes: list[str] = field(default_factory=list)

    def total(self) -> StageEstimate:
        """Return the sum of the stages (seconds None when a stage's are unknown)."""
        seconds = [s.seconds for s in self.stages]
        return StageEstimate(
            "total",
            sum(s.calls for s in self.stages),
            sum(s.cached_calls for s in self.stages),
            sum(s.prompt_tokens for s in self.stages),
            sum(s.completion_tokens for s in self.stages),
            None if any(x is None for x in seconds) else sum(x or 0.0 for x in seconds),
        )

    def render(self) -> str:
        """Return the estimate as the dry run prints it: a table, the speed, the notes."""
        header = (
            f"{'stage':<24}{'calls':>8}{'cached':>8}{'prompt tok':>12}{'compl. tok':>12}"
            f"{'time':>10}  basis"
        )
        lines = [f"dry run: {self.what} (no model is called)", header]
        for s in [*self.stages, self.total()]:
            lines.append(
                f"{s.stage:<24}{s.calls:>8.0f}{s.cached_calls:>8d}{s.prompt_tokens:>12,.0f}"
                f"{s.completion_tokens:>12,.0f}{duration(s.seconds):>10}  {s.basis}"
            )
        if self.speed is not None:
            lines.append(
                f"model speed: {self.speed.prompt_tokens_per_second:.1f} prompt tok/s, "
                f"{self.speed.completion_tokens_per_second:.1f} completion tok/s "
                f"({self.speed.source})"
            )
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


def usable_cores() -> int:
    """Return the CPU cores this process may run on (its affinity: a container's or
    ``taskset``'s limit), the embedded server's threads: one more makes llama.cpp crawl."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def measured(package: str, name: str) -> dict[str, Any]:
    """Return a committed measurement file of ``package`` (written by studies/cost_model.py)."""
    return json.loads((importlib.resources.files(package) / name).read_text(encoding="utf-8"))


def embedded_speed(settings: Settings) -> ModelSpeed:
    """Return the embedded model's measured speed (``graphrag/llm/embedded/speed.json``),
    saying so when the configured server differs from the one measured."""
    figures = measured("graphrag.llm.embedded", "speed.json")
    source = f"embedded model, {figures['measured_on']} ({figures['source']})"
    emb = settings.embedded
    server = figures["server"]
    if emb.model_file or (emb.parallel, usable_cores()) != (server["parallel"], server["threads"]):
        source += "; measured on the default model and server, yours differs"
    return ModelSpeed(
        figures["prompt_tokens_per_second"],
        figures["completion_tokens_per_second"],
        source,
        parallel=server["parallel"],
    )


def probe_speed(settings: Settings) -> ModelSpeed:
    """Return the endpoint's speed from one small streamed request (never cached): prompt
    tokens over the time to the first reply token, reply tokens over the rest."""
    llm = settings.llm
    key = os.environ.get(llm.api_key_env) or "sk-no-key-required"
    body = {
        "model": llm.model,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "max_tokens": PROBE_TOKENS,
        "temperature": 0.0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    url = llm.base_url.rstrip("/") + "/chat/completions"
    started = time.monotonic()
    try:
        first, usage = _streamed(url, body, {"Authorization": f"Bearer {key}"})
    except (httpx.HTTPError, ValueError) as err:
        raise LLMError(
            f"could not time the endpoint {llm.base_url} (setting llm.base_url) with one small "
            f"request: {type(err).__name__}: {err}"
        ) from err
    ended = time.monotonic()
    first = first or ended
    prompt = int((usage or {}).get("prompt_tokens") or len(PROBE_PROMPT.split()) * 2)
    completion = int((usage or {}).get("completion_tokens") or PROBE_TOKENS)
    return ModelSpeed(
        prompt / max(first - started, 1e-3),
        max(completion - 1, 1) / max(ended - first, 1e-3),
        f"probed {llm.base_url}: one request, {prompt} prompt + {completion} reply tokens in "
        f"{ended - started:.1f}s",
        aggregate=False,
        parallel=llm.concurrency,
    )


def _streamed(url: str, body: dict, headers: dict) -> tuple[float | None, dict | None]:
    """Return when the first reply token of a streamed request came, and its usage."""
    first = usage = None
    with httpx.stream("POST", url, json=body, headers=headers, timeout=PROBE_TIMEOUT) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            data = line.removeprefix("data:").strip()
            if not data or data == "[DONE]":
                continue
            chunk = json.loads(data)
            choices = chunk.get("choices") or []
            if first is None and any((c.get("delta") or {}).get("content") for c in choices):
                first = time.monotonic()
            usage = chunk.get("usage") or usage
    return first, usage


def stage(
    name: str,
    calls: float,
    prompt: float,
    completion: float,
    speed: ModelSpeed | None,
    basis: str,
    cached: int = 0,
    cached_tokens: tuple[float, float] = (0.0, 0.0),
) -> StageEstimate:
    """Return a stage of ``calls``, ``cached`` of them recorded (with ``cached_tokens``): the
    live rest's ``prompt`` and ``completion`` tokens timed at ``speed`` (0 s: none is live)."""
    live = calls - cached
    seconds = 0.0 if live <= 0 or speed is None else speed.seconds(prompt, completion, live)
    total_prompt, total_completion = prompt + cached_tokens[0], completion + cached_tokens[1]
    return StageEstimate(name, calls, cached, total_prompt, total_completion, seconds, basis)


def machine() -> str:
    """This machine as speed depends on it: the CPU model and the cores this process may use."""
    return f"{cpu_name()}, {usable_cores()} cores"


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
