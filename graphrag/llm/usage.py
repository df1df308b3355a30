"""What LLM work cost: counted by the transport in every :func:`track_usage` scope open
around a call (scopes nest and follow asyncio tasks)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

UNKNOWN_HOST = "unknown"  # the host of a call recorded before cache records named one


@dataclass
class Usage:
    """What a piece of work cost in LLM traffic: tokens and ``model_seconds`` as recorded when
    each reply was made (a replay reports them too), ``seconds`` as waited in this run."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    model_seconds: float = 0.0
    hosts: tuple[str, ...] = ()  # the machines of model_seconds, sorted (theirs do not mix)

    def add(self, other: Usage) -> None:
        for name, value in asdict(other).items():
            if name == "hosts":
                self.hosts = tuple(sorted(set(self.hosts) | set(value)))
            else:
                setattr(self, name, getattr(self, name) + value)

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass
class Live:
    """The live calls of this process (llm/cost.py keeps them as the machine's speed):
    tokens, and the wall time from the first's start to the last's end (calls in parallel
    share it, so it is the server's aggregate speed)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    started: float | None = None
    ended: float = 0.0
    embedded: bool = False  # an embedded server answered here (not a fake, not an endpoint)

    @property
    def seconds(self) -> float:
        return 0.0 if self.started is None else self.ended - self.started

    def add(self, prompt_tokens: int, completion_tokens: int, waited: float) -> None:
        now = time.monotonic()
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        start = now - waited
        self.started = start if self.started is None else min(self.started, start)
        self.ended = max(self.ended, now)


LIVE = Live()

_usage_scopes: ContextVar[tuple[Usage, ...]] = ContextVar("graphrag_usage_scopes", default=())


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
    if not hit:
        LIVE.add(one.prompt_tokens, one.completion_tokens, waited)
