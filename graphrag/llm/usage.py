"""What LLM work cost: calls, cache hits, prompt and completion tokens, seconds.

Counted where the calls happen (the recording transport) and collected by whoever opened a
:func:`track_usage` scope around the work: a stage, a query, a judge call. Scopes nest and
follow asyncio tasks (context variables), so one call counts in every scope around it.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

UNKNOWN_HOST = "unknown"  # the host of a call recorded before cache records named one


@dataclass
class Usage:
    """What a piece of work cost in LLM traffic.

    ``prompt_tokens``/``completion_tokens``/``model_seconds`` are what the endpoint reported
    when each response was produced, so a replayed run still reports what it cost to make;
    ``seconds`` is the time this run actually waited on the endpoint.
    """

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0
    # the machines whose model_seconds these are (the cache records' "host"; "unknown" for
    # calls recorded before hosts were), sorted: seconds from different machines do not mix
    hosts: tuple[str, ...] = ()

    def add(self, other: Usage) -> None:
        for name, value in asdict(other).items():
            if name == "hosts":
                self.hosts = tuple(sorted(set(self.hosts) | set(value)))
            else:
                setattr(self, name, getattr(self, name) + value)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


_usage_scopes: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar(
    "graphrag_usage_scopes", default=()
)


@contextmanager
def track_usage() -> Iterator[Usage]:
    """Yield a Usage that counts every LLM call made inside the block (tasks included)."""
    usage = Usage()
    token = _usage_scopes.set(_usage_scopes.get() + (usage,))
    try:
        yield usage
    finally:
        _usage_scopes.reset(token)


def count_call(record: dict[str, Any], hit: bool, waited: float) -> None:
    """Count one recorded call (a cache hit or a live call) in every open scope."""
    reported = record["response"].get("usage") or {}
    one = Usage(
        calls=1,
        cache_hits=int(hit),
        prompt_tokens=int(reported.get("prompt_tokens") or 0),
        completion_tokens=int(reported.get("completion_tokens") or 0),
        seconds=waited,
        model_seconds=float(record.get("seconds") or 0.0),
        hosts=(record.get("host") or UNKNOWN_HOST,),
    )
    for scope in _usage_scopes.get():
        scope.add(one)
