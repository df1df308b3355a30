"""Checked replies: JSON valid against a schema (or non-empty text), repaired and re-attempted.

A failed reply is kept (marked ``invalid`` in the cache) but never ends a call for good: the
next run replays it and asks again with another ``seed``. Every request must be exactly the
one a later replay looks up, so this logic lives in one place.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import json_repair
import jsonschema

from graphrag.llm.cache import CacheMissError, LLMError, canonical_json
from graphrag.llm.stream import StopRuleFactory
from graphrag.llm.usage import track_usage
from graphrag.text import tokens

if TYPE_CHECKING:
    from graphrag.llm.client import ChatLLM

T = TypeVar("T")

# The sampling seed and temperature of every request that sets none (attempt n of a checked
# reply asks with SEED + n). Both are in every recorded request's cache key, so neither is a
# setting: another value would replay nothing (docs/defaults-provenance.md); temperature 0
# keeps replies repeatable.
SEED = 7
TEMPERATURE = 0.0
# Repair rounds per attempt; not a setting: another value would not replay the recorded cache
JSON_REPAIR_ROUNDS = 2


class JSONOutputError(LLMError):
    """The model's output stayed invalid against the schema after every repair round."""


class _FailedAttempt(Exception):  # noqa: N818 - internal signal, not an error for users
    """One :meth:`ChatLLM.ajson` attempt ended invalid; ``live`` if it asked the model."""

    def __init__(self, error: str, live: bool) -> None:
        super().__init__(error)
        self.error, self.live = error, live


class JSONSyntaxError(ValueError):
    """A reply is not JSON at all (as opposed to JSON that breaks its schema)."""


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _unfenced(text: str) -> str:
    match = _FENCE.match(text)
    return match.group(1) if match else text.strip()


def _validated(value: Any, schema: dict[str, Any]) -> Any:
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "the top level"
        raise ValueError(f"schema violation at {where}: {err.message[:200]}") from err
    return value


def parse_json_output(text: str, schema: dict[str, Any]) -> Any:
    """Return the JSON value in ``text`` if it validates against ``schema``; raise ValueError
    (:class:`JSONSyntaxError` if it is not JSON at all)."""
    try:
        return _validated(json.loads(_unfenced(text)), schema)
    except json.JSONDecodeError as err:
        raise JSONSyntaxError(f"not valid JSON ({err.msg} at character {err.pos})") from err


def mend_json_output(text: str, schema: dict[str, Any]) -> Any:
    """Return the JSON value ``json_repair`` mends ``text`` into (a missing comma, an unclosed
    bracket, prose around it) if it validates against ``schema``; raise ValueError."""
    try:
        value = json_repair.loads(_unfenced(text))
    except (ValueError, TypeError, RecursionError) as err:
        raise ValueError(f"json_repair could not mend the reply ({err})") from err
    return _validated(value, schema)


def json_request(
    json_mode: str, messages: list[dict[str, str]], schema: dict[str, Any], name: str
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Return the messages and request fields that ask for JSON in ``json_mode``:
    ``json_schema`` hands the schema to the endpoint, else it is written into the system
    message (and ``json_object`` asks for any JSON value)."""
    if json_mode == "json_schema":
        return messages, {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": True},
            }
        }
    instruction = (
        "Reply with one JSON value only, no prose, valid against this JSON "
        f"schema:\n{canonical_json(schema)}"
    )
    if messages[0]["role"] == "system":  # the instruction ends the system message
        instruction = f"{messages[0]['content']}\n\n{instruction}"
        messages = messages[1:]
    messages = [{"role": "system", "content": instruction}, *messages]
    fields = {"response_format": {"type": "json_object"}} if json_mode == "json_object" else {}
    return messages, fields


def _cut_reply(text: str, room: int) -> str:
    """Return ``text`` cut to ``room`` tokens with a visible mark; untouched if it fits."""
    mark = " …[cut]"
    if tokens.count_tokens(text) <= room:
        return text
    return tokens.truncate(text, max(room - tokens.count_tokens(mark), 0)) + mark


async def json_reply(
    llm: ChatLLM,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    name: str,
    max_tokens: int | None,
    stop_rule: StopRuleFactory | None = None,
) -> Any:
    """Return ``llm``'s reply parsed as JSON valid against ``schema`` (see ChatLLM.ajson)."""
    messages, fields = json_request(llm.settings.llm.json_mode, messages, schema, name)
    if stop_rule:
        fields = {**fields, "stop_rule": stop_rule}
    return await _attempts(
        llm, name, lambda seed: _json_attempt(llm, messages, schema, max_tokens, fields, seed)
    )


async def text_reply(
    llm: ChatLLM,
    messages: list[dict[str, str]],
    name: str,
    max_tokens: int | None,
    parse: Callable[[str], T] | None = None,
) -> T | str:
    """Return ``llm``'s plain-text reply, stripped, or what ``parse`` makes of it (see
    ChatLLM.atext)."""

    async def attempt(seed: int) -> T | str:
        try:
            with track_usage() as usage:
                completion = await llm.achat(messages, max_tokens=max_tokens, seed=seed)
        except CacheMissError as miss:
            miss.first_call_of_attempt = True
            raise
        text = completion.text.strip()
        error = "the reply was cut off at max_tokens" if text else "the reply is empty"
        if text and completion.finish_reason != "length":
            if parse is None:
                return text
            try:
                return parse(text)
            except ValueError as err:
                error = str(err)
        live = usage.calls > usage.cache_hits
        if completion.cache_key and live:
            llm.cache.annotate(completion.cache_key, invalid=error)
        raise _FailedAttempt(error, live)

    return await _attempts(llm, name, attempt)


async def _attempts(llm: ChatLLM, name: str, attempt: Callable[[int], Awaitable[T]]) -> T:
    """Return the result of the first attempt that succeeds (attempt n asks with seed + n):
    recorded attempts replay free, a failed live one fails the call, one new attempt per run."""
    seed = SEED
    last_failure: JSONOutputError | None = None
    while True:
        try:
            return await attempt(seed)
        except _FailedAttempt as failed:
            final = JSONOutputError(
                f"{name}: the model's reply stayed invalid (attempt "
                f"{seed - SEED + 1}, seed {seed}): {failed.error}; the "
                f"next run asks again with seed {seed + 1}"
            )
            if failed.live or llm.cache.mode == "off":
                raise final from None
            last_failure = final
        except CacheMissError as miss:
            if last_failure is None or not miss.first_call_of_attempt:
                raise
            llm.cache.misses.remove(str(miss))
            raise last_failure from None
        seed += 1


async def _json_attempt(
    llm: ChatLLM,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    max_tokens: int | None,
    fields: dict[str, Any],
    seed: int,
) -> Any:
    """Return the parsed reply of one attempt; raise :class:`_FailedAttempt` if invalid. A cut
    reply is asked again once with twice the room, a whole one mended locally if it can be, an
    invalid one shown back to the model; all within the context size."""
    limit = llm.context_limit()
    budget = max_tokens or llm.settings.llm.max_tokens
    widened, live, first = False, False, True
    error, rounds = "", 0
    while rounds <= JSON_REPAIR_ROUNDS:
        if limit is not None:
            budget = min(budget, max(limit - tokens.message_tokens(messages), 1))
        try:
            with track_usage() as usage:
                completion = await llm.achat(messages, max_tokens=budget, seed=seed, **fields)
        except CacheMissError as miss:
            miss.first_call_of_attempt = first
            raise
        first = False
        live = live or usage.calls > usage.cache_hits
        try:
            return parse_json_output(completion.text, schema)
        except ValueError as err:
            error = str(err)
            # Only a whole reply is mended (a cut one is asked again with more room). None of
            # the committed cache's invalid replies mends, so its repair requests still replay.
            if isinstance(err, JSONSyntaxError) and completion.finish_reason != "length":
                with contextlib.suppress(ValueError):
                    return mend_json_output(completion.text, schema)
            if completion.cache_key and usage.calls > usage.cache_hits:
                llm.cache.annotate(completion.cache_key, invalid=error)
            if completion.finish_reason == "length" and not widened:
                room = 2 * budget
                if limit is not None:
                    room = min(room, limit - tokens.message_tokens(messages))
                widened = True
                if room > budget:
                    budget = room
                    continue
            if completion.finish_reason == "length":
                error += " (the reply was cut off at max_tokens: be shorter)"
            rounds += 1
            request = f"That reply is invalid: {error}. Reply again with the corrected JSON only."
            shown = completion.text
            if limit is not None:
                fixed = tokens.message_tokens([*messages, {"content": request}, {"content": ""}])
                shown = _cut_reply(shown, limit - budget - fixed)
            messages = [
                *messages,
                {"role": "assistant", "content": shown},
                {"role": "user", "content": request},
            ]
    raise _FailedAttempt(
        f"JSON still invalid after {JSON_REPAIR_ROUNDS} repair rounds: {error}", live
    )
