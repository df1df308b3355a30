"""Streamed chat requests through the recorded cache, ended early by the caller's stop rule.

A small model can fall into a repetition loop, emitting the same records until the token cap
(28% of the demo's recorded extraction tokens). A request made with a stop rule is streamed
from the live endpoint; the transport reads it as it arrives, asks the rule after each new
piece whether to stop, and closes the stream there, so the model stops generating. What was
kept is recorded as an ordinary completion under the request's usual key (``stream`` left
out of the key), with ``stopped_early`` saying why; a replay, or a streamed request whose
reply is already recorded, gets the recorded completion back as a short event stream. So
record and replay stay one path (the transport), and streaming is an option of the request.

The rule is code of the caller (the indexing stages hand over theirs), not of this layer:
:meth:`ChatLLM.achat <graphrag.llm.client.ChatLLM.achat>` sets it for the one request it
sends (:func:`stopping`), and the transport, below the ``openai`` client that carries no
such argument, reads it back (:func:`stop_rule`). The rule is not part of the request body,
so it never changes a cache key.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

import httpx

from graphrag.text import tokens

STOPPED_HEADER = "x-graphrag-stopped-early"
STREAM_FIELDS = ("stream", "stream_options")  # not part of what the model is asked


class StopRule(Protocol):
    """Asked after every streamed piece. A rule may also have ``close(kept) -> str``, which
    turns the kept text into the recorded reply (the report rule closes its JSON)."""

    def check(self, partial: str) -> tuple[int, str] | None:
        """Return (offset to keep up to, why) once ``partial`` should end, else None."""


# Makes a fresh rule for one live streamed request, from its body (a rule keeps state).
StopRuleFactory = Callable[[dict[str, Any]], StopRule]

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
    streamed request and the same request unstreamed share one recorded reply (an unstreamed
    body is kept as sent, so every key recorded before streaming existed still matches)."""
    if not body.get("stream"):
        return body
    return {k: v for k, v in body.items() if k not in STREAM_FIELDS}


def stop_rule(body: dict[str, Any]) -> StopRule | None:
    """Return a new stop rule for the request ``body`` being sent (None when the caller
    gave none, e.g. a library handed our client)."""
    factory = _requested.get()
    return factory(body) if factory is not None else None


async def read_stream(
    response: httpx.Response, body: dict[str, Any], rule: StopRule | None
) -> tuple[dict[str, Any], str | None]:
    """Return (the completion the stream amounts to, why it was stopped or None).

    The stream is closed as soon as ``rule`` says so. The completion tokens of a stopped
    reply are the content chunks received (an OpenAI-compatible server sends one token per
    chunk), i.e. what the model generated, not what was kept; its prompt tokens, which the
    server reports only at the end of a stream, are counted with the tokenizer.
    """
    if response.headers.get("content-type", "").startswith("application/json"):
        await response.aread()  # a server that ignored stream=True: its reply is whole
        return response.json(), None
    text = ""
    finish, usage, first, stopped, chunks = None, None, {}, None, 0
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
            if rule is not None and (cut := rule.check(text)) is not None:
                offset, stopped = cut
                close = getattr(rule, "close", None)
                text = close(text[:offset]) if close else text[:offset]
                break
    finally:
        await response.aclose()
    if stopped or not usage:
        prompt = tokens.message_tokens(body.get("messages", []))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": chunks,
            "total_tokens": prompt + chunks,
        }
    completion = {
        "id": first.get("id", "chatcmpl-stream"),
        "object": "chat.completion",
        "created": first.get("created", 0),
        "model": first.get("model", body.get("model")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop" if stopped else finish,
            }
        ],
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
