"""Streamed chat requests ended early by the caller's stop rule (a small model's repetition
loop): the transport asks the rule after each piece and closes the stream there; what was kept
is recorded with ``stopped_early`` and replayed as a short event stream. The rule is set for
one request by :func:`stopping` and read back below the ``openai`` client by :func:`stop_rule`;
it is not in the body, so the transport adds its spec (:func:`stop_spec`) to the request's
cache key: a reply recorded under one rule is never served to a request under another.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from graphrag.llm import progress
from graphrag.text import tokens

STOPPED_HEADER = "x-graphrag-stopped-early"
STREAM_FIELDS = ("stream", "stream_options")  # not part of what the model is asked


class StopRule(Protocol):
    """Asked after every streamed piece. A rule may also have ``close(kept) -> str``, which
    turns the kept text into the recorded reply (the report rule closes its JSON)."""

    def check(self, partial: str) -> tuple[int, str] | None:
        """Return (offset to keep up to, why) once ``partial`` should end, else None."""


@dataclass(frozen=True)
class StopRuleFactory:
    """Makes a fresh rule for one live streamed request (a rule keeps state). ``spec`` names
    the rule, its ``version`` (raise it whenever the rule would stop a reply elsewhere) and its
    parameters; it is part of the request's cache key."""

    name: str
    make: Callable[..., StopRule]
    version: int = 1
    params: tuple[tuple[str, Any], ...] = ()

    def __call__(self, body: dict[str, Any]) -> StopRule:
        return self.make(**dict(self.params))

    @property
    def spec(self) -> dict[str, Any]:
        return {"rule": self.name, "version": self.version, **dict(self.params)}


_requested: ContextVar[StopRuleFactory | None] = ContextVar("graphrag_stop_rule", default=None)


@contextmanager
def stopping(factory: StopRuleFactory | None) -> Iterator[None]:
    """Within the block, a streamed request that reaches the live endpoint is ended by the
    rule ``factory`` makes (the block is one request of the current task)."""
    token = _requested.set(factory)
    try:
        yield
    finally:
        _requested.reset(token)


def keyed_body(body: dict[str, Any]) -> dict[str, Any]:
    """Return the request body a reply is recorded under: the streaming fields left out, so a
    streamed request and the same request unstreamed share one recorded reply."""
    if not body.get("stream"):
        return body
    return {k: v for k, v in body.items() if k not in STREAM_FIELDS}


def stop_spec(body: dict[str, Any]) -> dict[str, Any] | None:
    """Return the spec of the stop rule a streamed request ``body`` is sent under, or None."""
    factory = _requested.get()
    return factory.spec if factory is not None and body.get("stream") else None


def stop_rule(body: dict[str, Any]) -> StopRule | None:
    """Return a new stop rule for the request ``body`` being sent, None if the caller set none."""
    factory = _requested.get()
    return factory(body) if factory is not None else None


async def read_stream(
    response: httpx.Response, body: dict[str, Any], rule: StopRule | None
) -> tuple[dict[str, Any], str | None]:
    """Return (the completion the stream amounts to, why it was stopped or None); a stopped
    reply's completion tokens are the chunks received (what the model generated)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        await response.aread()  # a server that ignored stream=True: its reply is whole
        return response.json(), None
    text, finish, usage, first, stopped, chunks = "", None, None, {}, None, 0
    try:
        async for line in response.aiter_lines():
            data = line.removeprefix("data:").strip()
            if not line.startswith("data:") or not data:
                continue
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            first = first or chunk
            usage = chunk.get("usage") or usage
            new = ""
            for choice in chunk.get("choices") or []:
                new += (choice.get("delta") or {}).get("content") or ""
                finish = choice.get("finish_reason") or finish
            if not new:
                continue
            text += new
            chunks += 1
            progress.stream(1)  # a live reply's tokens show on the progress line as they come
            if rule is not None and (cut := rule.check(text)) is not None:
                offset, stopped = cut
                close = getattr(rule, "close", None)
                text = close(text[:offset]) if close else text[:offset]
                break
    finally:
        progress.stream(-chunks)
        await response.aclose()
    if stopped or not usage:
        prompt = tokens.message_tokens(body.get("messages", []))
        usage = dict(prompt_tokens=prompt, completion_tokens=chunks, total_tokens=prompt + chunks)
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop" if stopped else finish}
    completion = {
        "id": first.get("id", "chatcmpl-stream"),
        "object": "chat.completion",
        "created": first.get("created", 0),
        "model": first.get("model", body.get("model")),
        "choices": [choice],
        "usage": usage,
    }
    return completion, stopped


def event_stream(completion: dict[str, Any]) -> bytes:
    """Return a recorded completion as the server-sent events of a streamed reply: the whole
    content in one chunk, then the finish reason, then the usage."""
    choice = completion["choices"][0]
    head = {k: completion.get(k) for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def chunk(**fields: Any) -> str:
        return f"data: {json.dumps({**head, **fields}, ensure_ascii=False)}\n\n"

    return (
        chunk(choices=[{"index": 0, "delta": choice["message"], "finish_reason": None}])
        + chunk(choices=[{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}])
        + chunk(choices=[], usage=completion.get("usage"))
        + "data: [DONE]\n\n"
    ).encode("utf-8")
