"""ChatLLM against a fake OpenAI-compatible endpoint: cache, replay, JSON repair, retries,
concurrency and usage accounting, all through the real openai client and HTTP."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import socket
from pathlib import Path

import openai
import pytest
from conftest import FakeLLM, Reply

from graphrag.llm.cache import UnrecordableRequestError
from graphrag.llm.client import (
    CacheMissError,
    ChatLLM,
    LLMError,
    parse_json_output,
    run_sync,
    track_usage,
)
from graphrag.llm.coroutines import gather_with_progress
from graphrag.llm.replies import JSONOutputError
from studies.recorded import recorded_replies

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def recorded(cache) -> int:
    """The number of responses stored in ``cache``."""
    return sum(1 for _ in cache.root.glob("*/*.json"))


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def cache_files(llm: ChatLLM) -> list[Path]:
    return sorted(llm.cache.root.glob("*/*.json"))


# --------------------------------------------------------------------------- cache


def test_cache_miss_then_hit(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script(Reply("Port Aldry.", prompt_tokens=12, completion_tokens=3))

    first = llm.chat(user("Where is KBMI?"))
    assert first.text == "Port Aldry."
    assert first.finish_reason == "stop"
    assert fake_llm.calls == 1
    assert (first.usage.calls, first.usage.cache_hits) == (1, 0)

    second = llm.chat(user("Where is KBMI?"))
    assert fake_llm.calls == 1  # answered from the cache, no HTTP request
    assert second.text == first.text
    assert (second.usage.calls, second.usage.cache_hits) == (1, 1)
    # a replayed call still reports what the response cost to make
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (12, 3)


def test_request_parameters_and_the_cache_file(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script("hello")
    llm.chat(user("hi"))
    body = fake_llm.requests[0]
    assert body["model"] == llm.settings.llm.model
    assert body["messages"] == user("hi")
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 1024, 7)

    files = cache_files(llm)
    assert files == [llm.cache.path_for(llm.cache_key(body))]
    record = json.loads(files[0].read_text())
    assert record["request"] == body
    assert record["response"]["choices"][0]["message"]["content"] == "hello"
    assert recorded(llm.cache) == 1


def test_a_record_names_the_machine_its_seconds_are_from(fake_llm: FakeLLM, make_llm) -> None:
    """Sessions change machines, so a recorded call's seconds say which machine they are
    from: a server on this machine by its CPU and cores, another endpoint by its host.
    A replay reports the recorded host; a record from before hosts were is "unknown"."""
    from graphrag.llm.transport import EMBEDDED_HOST, recording_host
    from graphrag.llm.usage import Usage

    here = recording_host("127.0.0.1")
    assert here.endswith(f", {os.cpu_count()} cores") and not here.startswith(",")
    assert recording_host("api.example.org") == "endpoint api.example.org"
    # the embedded model's requests carry its placeholder host until the transport sends them
    assert recording_host(EMBEDDED_HOST) == here

    llm = make_llm()
    fake_llm.script("hello")
    with track_usage() as usage:
        llm.chat(user("hi"))
    [file] = cache_files(llm)
    record = json.loads(file.read_text())
    assert record["host"] == here and usage.hosts == (here,)

    for host, expected in (("Other CPU, 2 cores", "Other CPU, 2 cores"), (None, "unknown")):
        if host:
            record["host"] = host  # as if recorded in another session
        else:
            del record["host"]  # as recorded before hosts were
        file.write_text(json.dumps(record))
        with track_usage() as usage:
            make_llm().chat(user("hi"))  # a new client: replayed from the file
        assert fake_llm.calls == 1 and usage.hosts == (expected,)

    total = Usage(hosts=("b",))
    total.add(Usage(hosts=("a", "b")))
    assert total.hosts == ("a", "b")  # a scope's machines: sorted, once each


def test_cache_key_changes_with_parameters(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.respond_with(lambda body: f"t={body['temperature']} m={body['max_tokens']}")
    a = llm.chat(user("same prompt"))
    b = llm.chat(user("same prompt"), temperature=0.7)
    c = llm.chat(user("same prompt"), max_tokens=50)
    d = llm.chat([{"role": "system", "content": "be brief"}, *user("same prompt")])
    assert fake_llm.calls == 4
    assert len({a.text, b.text, c.text}) == 3
    assert b.text == "t=0.7 m=1024" and c.text == "t=0.0 m=50"
    assert d.text == "t=0.0 m=1024"
    assert len(cache_files(llm)) == 4
    # each variant is now cached under its own key
    assert llm.chat(user("same prompt"), temperature=0.7).text == b.text
    assert fake_llm.calls == 4


def test_cache_key_changes_with_the_model(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(lambda body: body["model"])
    assert make_llm(llm={"model": "model-a"}).chat(user("q")).text == "model-a"
    assert make_llm(llm={"model": "model-b"}).chat(user("q")).text == "model-b"
    assert fake_llm.calls == 2


def test_mode_off_never_reads_or_writes(fake_llm: FakeLLM, make_llm) -> None:
    recorder = make_llm()
    fake_llm.respond_with(lambda body: "fresh")
    recorder.chat(user("q"))
    assert len(cache_files(recorder)) == 1

    llm = make_llm(cache={"mode": "off"})
    assert llm.chat(user("q")).text == "fresh"  # recorded, but off does not read it
    llm.chat(user("q"))
    llm.chat(user("another"))
    assert fake_llm.calls == 4
    assert len(cache_files(recorder)) == 1  # off wrote nothing


def test_replay_miss_names_the_prompt_and_never_calls_the_endpoint(
    fake_llm: FakeLLM, make_llm
) -> None:
    llm = make_llm(cache={"mode": "replay"}, llm={"max_retries": 3})
    fake_llm.respond_with(lambda body: "should not be asked")
    with pytest.raises(CacheMissError) as info:
        llm.chat(user("Who chairs the Kestrel Bay Fishing Cooperative?"))
    assert "Kestrel Bay Fishing Cooperative" in str(info.value)
    assert "GRAPHRAG_CACHE=on" in str(info.value)
    assert fake_llm.calls == 0
    assert len(llm.cache.misses) == 1  # a miss is not retried

    with pytest.raises(CacheMissError, match="asynchronous question"):
        run_sync(llm.achat(user("an asynchronous question")))
    assert fake_llm.calls == 0
    assert not cache_files(llm)


def test_replay_hit_is_answered_from_the_recording(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.script("recorded answer")
    make_llm().chat(user("recorded question"))
    assert fake_llm.calls == 1

    replay = make_llm(cache={"mode": "replay"})
    assert replay.chat(user("recorded question")).text == "recorded answer"
    assert run_sync(replay.achat(user("recorded question"))).text == "recorded answer"
    assert fake_llm.calls == 1


def test_corrupt_cache_entry_is_named(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script("fine")
    llm.chat(user("q"))
    (entry,) = cache_files(llm)
    entry.write_text("{truncated")
    with pytest.raises(LLMError, match=rf"{entry.name}.*delete it to re-record"):
        llm.chat(user("q"))


# --------------------------------------------------------------------------- JSON


def test_parse_json_output_strips_fences_and_validates() -> None:
    assert parse_json_output('```json\n{"answer": 3}\n```', SCHEMA) == {"answer": 3}
    assert parse_json_output('```\n{"answer": 4}\n```\n', SCHEMA) == {"answer": 4}
    assert parse_json_output('  {"answer": 5}  ', SCHEMA) == {"answer": 5}
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_json_output("The answer is 3.", SCHEMA)
    with pytest.raises(ValueError, match="schema violation at answer"):
        parse_json_output('{"answer": "three"}', SCHEMA)
    with pytest.raises(ValueError, match="schema violation at the top level"):
        parse_json_output('{"answer": 3, "extra": 1}', SCHEMA)


def test_invalid_json_is_repaired_with_the_error_shown(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script("Sure! The answer is forty-two.", '```json\n{"answer": 42}\n```')
    assert llm.json(user("What is six times seven?"), SCHEMA) == {"answer": 42}
    assert fake_llm.calls == 2
    repair = fake_llm.requests[1]["messages"]
    assert repair[:-2] == fake_llm.requests[0]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! The answer is forty-two."}
    assert "That reply is invalid: not valid JSON" in repair[-1]["content"]
    # the json_schema mode hands the schema to the server
    response_format = fake_llm.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == SCHEMA


def test_cut_off_reply_is_asked_again_with_twice_the_room(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script(Reply('{"answer": ', finish_reason="length"), '{"answer": 1}')
    assert llm.json(user("q"), SCHEMA, max_tokens=100) == {"answer": 1}
    first, second = fake_llm.requests
    assert second["messages"] == first["messages"], "a widened retry is the same prompt"
    assert (first["max_tokens"], second["max_tokens"]) == (100, 200)


def test_reply_cut_off_twice_is_told_to_be_shorter(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script(
        Reply('{"answer": ', finish_reason="length"),
        Reply('{"answer": ', finish_reason="length"),
        '{"answer": 1}',
    )
    assert llm.json(user("q"), SCHEMA, max_tokens=100) == {"answer": 1}
    assert fake_llm.calls == 3
    assert "cut off at max_tokens" in fake_llm.last_user()


@pytest.mark.parametrize("rounds", [1, 2])
def test_schema_invalid_output_fails_after_the_repair_rounds(
    fake_llm: FakeLLM, make_llm, rounds: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("graphrag.llm.replies.JSON_REPAIR_ROUNDS", rounds)
    llm = make_llm()
    fake_llm.respond_with(lambda body: '{"answer": "not a number"}')
    with pytest.raises(JSONOutputError, match=rf"{rounds} repair rounds.*schema violation"):
        llm.json(user("q"), SCHEMA, name="quiz")
    assert fake_llm.calls == rounds + 1
    assert "schema violation at answer" in fake_llm.last_user()


def _invalid_for_first_seed(body: dict) -> str:
    """The model fails every round of the first attempt (seed 7) and is right with seed 8."""
    return '{"answer": "seven"}' if body["seed"] == 7 else '{"answer": 8}'


def test_invalid_reply_is_never_replayed_as_final(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(_invalid_for_first_seed)
    with pytest.raises(JSONOutputError, match="attempt 1, seed 7.*asks again with seed 8"):
        make_llm().json(user("q"), SCHEMA)
    assert fake_llm.calls == 3  # the first question and two repair rounds
    first = make_llm().cache.get(make_llm().cache_key(fake_llm.requests[0]))
    assert first["invalid"].startswith("schema violation at answer")  # stored as failed

    # The next run replays the failed attempt from the cache and asks again with seed 8.
    assert make_llm().json(user("q"), SCHEMA) == {"answer": 8}
    assert fake_llm.calls == 4
    assert fake_llm.requests[3]["seed"] == 8
    assert fake_llm.requests[3]["messages"] == fake_llm.requests[0]["messages"]

    # Every later run, replay included, reaches the attempt that succeeded, with no call.
    with track_usage() as usage:
        assert make_llm(cache={"mode": "replay"}).json(user("q"), SCHEMA) == {"answer": 8}
    assert fake_llm.calls == 4
    assert usage.calls == usage.cache_hits == 4


def test_a_first_attempt_is_the_request_of_a_call_without_retries(
    fake_llm: FakeLLM, make_llm
) -> None:
    # The committed cache holds first attempts: their request bodies must not change.
    fake_llm.script('{"answer": 1}')
    make_llm().json(user("q"), SCHEMA)
    assert fake_llm.requests[0]["seed"] == 7
    assert set(fake_llm.requests[0]) == {
        "model",
        "messages",
        "temperature",
        "max_tokens",
        "seed",
        "response_format",
    }


def test_an_empty_or_cut_text_reply_is_a_failed_attempt(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(
        lambda body: {7: Reply("  "), 8: Reply("half a sen", finish_reason="length")}.get(
            body["seed"], "A whole sentence."
        )
    )
    with pytest.raises(JSONOutputError, match="seed 7.*empty.*seed 8"):
        run_sync(make_llm().atext(user("q"), name="summary"))
    with pytest.raises(JSONOutputError, match="seed 8.*cut off"):
        run_sync(make_llm().atext(user("q"), name="summary"))
    assert run_sync(make_llm().atext(user("q"))) == "A whole sentence."
    assert run_sync(make_llm(cache={"mode": "replay"}).atext(user("q"))) == "A whole sentence."
    assert [b["seed"] for b in fake_llm.requests] == [7, 8, 9]


def test_replay_of_a_recorded_failure_reproduces_it(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(_invalid_for_first_seed)
    with pytest.raises(JSONOutputError):
        make_llm().json(user("q"), SCHEMA)
    replay = make_llm(cache={"mode": "replay"})
    # The recorded run ended in this failure: replay gives it back, not a cache miss.
    with pytest.raises(JSONOutputError, match="attempt 1, seed 7"):
        replay.json(user("q"), SCHEMA)
    assert replay.cache.misses == []
    assert fake_llm.calls == 3


def test_repair_prompt_and_reasks_fit_the_context(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"context_tokens": 300})
    long_bad = "word " * 400
    fake_llm.script(
        Reply(long_bad, finish_reason="length"),
        Reply(long_bad, finish_reason="length"),
        '{"answer": 3}',
    )
    assert llm.json(user("q"), SCHEMA, max_tokens=100) == {"answer": 3}
    from graphrag.text.tokens import message_tokens

    for body in fake_llm.requests:
        assert message_tokens(body["messages"]) + body["max_tokens"] <= 300
    assert fake_llm.requests[1]["max_tokens"] > 100  # still widened, within the context
    shown = fake_llm.requests[2]["messages"][-2]["content"]
    assert shown.endswith("…[cut]") and len(shown) < len(long_bad)


def test_replay_refuses_what_it_cannot_serve(fake_llm: FakeLLM, make_llm) -> None:
    fake_llm.respond_with(lambda body: "should not be asked")
    for mode in ("replay", "on"):
        llm = make_llm(cache={"mode": mode})

        async def legacy(llm=llm):
            return await llm.async_client().completions.create(model="m", prompt="legacy")

        with pytest.raises(openai.APIConnectionError) as info:
            run_sync(legacy())
        assert isinstance(info.value.__cause__, UnrecordableRequestError)
        assert "/completions" in str(info.value.__cause__)
    assert fake_llm.calls == 0

    # a streamed chat request is served by the cache like any other (test_llm_stream.py):
    # never recorded, it is a replay miss, not a call
    async def streamed():
        return (
            await make_llm(cache={"mode": "replay"})
            .async_client()
            .chat.completions.create(model="m", messages=user("q"), stream=True)
        )

    with pytest.raises(openai.APIConnectionError) as info:
        run_sync(streamed())
    assert isinstance(info.value.__cause__, CacheMissError)
    assert fake_llm.calls == 0
    # and through our own calls the refusal is the named error, not retried
    llm = make_llm(cache={"mode": "replay"}, llm={"max_retries": 3})
    with pytest.raises(CacheMissError):
        llm.chat(user("never recorded"))


def test_cache_writes_leave_no_temporary_files(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.respond_with(lambda body: "x")
    for i in range(5):
        llm.chat(user(f"q{i}"))
    assert not list(llm.cache.root.rglob("*.tmp"))
    assert recorded(llm.cache) == 5


def test_prompt_json_mode_puts_the_schema_in_the_system_message(
    fake_llm: FakeLLM, make_llm
) -> None:
    llm = make_llm(llm={"json_mode": "prompt"})
    fake_llm.script('{"answer": 1}')
    messages = [{"role": "system", "content": "You count."}, *user("q")]
    assert llm.json(messages, SCHEMA) == {"answer": 1}
    body = fake_llm.requests[0]
    assert "response_format" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You count.")
    assert '"required":["answer"]' in system["content"]

    object_llm = make_llm(llm={"json_mode": "json_object"})
    fake_llm.script('{"answer": 2}')
    assert object_llm.json(user("q2"), SCHEMA) == {"answer": 2}
    body = fake_llm.requests[1]
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["role"] == "system"  # instruction added before the user turn


def test_sequential_blocking_json_calls_reuse_the_client(fake_llm: FakeLLM, make_llm) -> None:
    # Each blocking call runs its own event loop; the kept-alive connection of the previous
    # loop must not be reused by the next one.
    llm = make_llm()
    fake_llm.respond_with(lambda body: json.dumps({"answer": len(body["messages"][-1]["content"])}))
    results = [llm.json(user("x" * n), SCHEMA) for n in (1, 2, 3)]
    assert results == [{"answer": 1}, {"answer": 2}, {"answer": 3}]
    assert fake_llm.calls == 3


def test_blocking_json_works_inside_a_running_loop(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script('{"answer": 9}')

    async def notebook_cell() -> dict:
        return llm.json(user("q"), SCHEMA)  # as in Jupyter, where a loop is running

    assert asyncio.run(notebook_cell()) == {"answer": 9}


# --------------------------------------------------------------------------- errors


def test_503_is_retried_then_succeeds(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"max_retries": 2})
    fake_llm.script(Reply("busy", status=503), "finally")
    assert llm.chat(user("q")).text == "finally"
    assert fake_llm.calls == 2
    assert len(cache_files(llm)) == 1  # the failure was not recorded

    fake_llm.script(Reply("busy", status=503), Reply("busy", status=429), "async too")
    assert run_sync(llm.achat(user("q2"))).text == "async too"
    assert fake_llm.calls == 5


def test_5xx_gives_up_after_max_retries(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"max_retries": 1})
    fake_llm.respond_with(lambda body: Reply("overloaded", status=503))
    with pytest.raises(LLMError, match=rf"{fake_llm.base_url} answered 503"):
        llm.chat(user("q"))
    assert fake_llm.calls == 2
    assert not cache_files(llm)


def test_400_is_not_retried(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"max_retries": 3})
    fake_llm.respond_with(lambda body: Reply("context length exceeded", status=400))
    with pytest.raises(LLMError, match="answered 400.*context length exceeded"):
        llm.chat(user("q"))
    assert fake_llm.calls == 1
    with pytest.raises(LLMError, match="answered 400"):
        run_sync(llm.achat(user("q")))
    assert fake_llm.calls == 2


def test_a_prompt_too_long_for_the_server_is_refused_the_same_way_in_replay(
    fake_llm: FakeLLM, make_llm
) -> None:
    """llama.cpp refuses a prompt longer than a slot's context (the demo's DRIFT contexts
    under the faithfulness judge): the refusal depends on the request only, so it is recorded
    and a replay fails that call exactly as the live run did, instead of with a cache miss."""
    too_long = "request (4943 tokens) exceeds the available context size (4096 tokens)"
    fake_llm.script(Reply(too_long, status=400, error_type="exceed_context_size_error"))
    llm = make_llm()
    with pytest.raises(LLMError, match="answered 400.*exceeds the available context size"):
        llm.chat(user("a long prompt"))
    assert len(cache_files(llm)) == 1
    assert recorded_replies(llm.cache.root) == [], "a refusal holds no reply to read"

    replay = make_llm(cache={"mode": "replay"})
    with pytest.raises(LLMError, match="answered 400.*exceeds the available context size"):
        replay.chat(user("a long prompt"))
    assert fake_llm.calls == 1

    # any other 400 (here a bad request of another kind) is not the request's fate: not kept
    fake_llm.script(Reply("bad grammar", status=400, error_type="invalid_request_error"))
    with pytest.raises(LLMError, match="answered 400.*bad grammar"):
        llm.chat(user("another prompt"))
    assert len(cache_files(llm)) == 1
    with pytest.raises(CacheMissError):
        replay.chat(user("another prompt"))


def test_what_a_smaller_window_decided_is_asked_again_with_a_larger_one(
    fake_llm: FakeLLM, make_llm
) -> None:
    """A refusal for a prompt over the slot's window, and a reply the server cut because its
    window was full (before ``max_tokens``), are the fate of that window: a cache whose window
    is larger asks again (and keeps the new answer); one no larger replays them as recorded.
    A reply cut at ``max_tokens`` is the request's own fate and is always replayed."""
    refusal = {
        "error": {
            "code": 400,
            "message": "request (4529 tokens) exceeds the available context size (4096 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 4529,
            "n_ctx": 4096,
        }
    }
    fake_llm.script(
        Reply(raw=json.dumps(refusal).encode(), status=400),
        Reply(
            "cut where the window",
            finish_reason="length",
            prompt_tokens=3968,
            completion_tokens=128,
        ),
        Reply("cut at max_tokens", finish_reason="length", completion_tokens=1024),
    )
    small = make_llm(llm={"context_tokens": 4096})
    with pytest.raises(LLMError, match="exceeds the available context size"):
        small.chat(user("long"))
    assert small.chat(user("cut"), max_tokens=1024).finish_reason == "length"
    assert small.chat(user("capped"), max_tokens=1024).text == "cut at max_tokens"
    assert fake_llm.calls == 3

    same = make_llm(llm={"context_tokens": 4096}, cache={"mode": "replay"})
    with pytest.raises(LLMError, match="exceeds the available context size"):
        same.chat(user("long"))
    assert same.chat(user("cut"), max_tokens=1024).text == "cut where the window"

    larger_replay = make_llm(llm={"context_tokens": 8192}, cache={"mode": "replay"})
    with pytest.raises(CacheMissError):
        larger_replay.chat(user("long"))
    with pytest.raises(CacheMissError):
        larger_replay.chat(user("cut"), max_tokens=1024)
    assert larger_replay.chat(user("capped"), max_tokens=1024).text == "cut at max_tokens"

    fake_llm.script(Reply("whole answer"), Reply("the whole reply"))
    larger = make_llm(llm={"context_tokens": 8192})
    assert larger.chat(user("long")).text == "whole answer"
    assert larger.chat(user("cut"), max_tokens=1024).text == "the whole reply"
    assert fake_llm.calls == 5
    replay = make_llm(llm={"context_tokens": 4096}, cache={"mode": "replay"})
    assert replay.chat(user("long")).text == "whole answer", "the new answer replaced it"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_endpoint_names_the_base_url(make_settings) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    llm = ChatLLM(make_settings(base_url, llm={"max_retries": 1}))
    with pytest.raises(LLMError, match=rf"{base_url} is unreachable.*llm\.base_url"):
        llm.chat(user("q"))
    with pytest.raises(LLMError, match=rf"{base_url} is unreachable"):
        run_sync(llm.achat(user("q")))


# --------------------------------------------------------------------------- concurrency


def test_async_concurrency_is_bounded(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"concurrency": 2})
    fake_llm.delay = 0.2
    fake_llm.respond_with(lambda body: body["messages"][-1]["content"].upper())

    async def ask_all() -> list:
        return await asyncio.gather(*(llm.achat(user(f"q{i}")) for i in range(6)))

    results = run_sync(ask_all())
    assert [r.text for r in results] == [f"Q{i}" for i in range(6)]
    assert fake_llm.calls == 6
    assert fake_llm.max_in_flight == 2


def test_threaded_concurrency_is_bounded(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"concurrency": 2})
    fake_llm.delay = 0.2
    fake_llm.respond_with(lambda body: "ok")
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        texts = list(pool.map(lambda i: llm.chat(user(f"t{i}")).text, range(6)))
    assert texts == ["ok"] * 6
    assert fake_llm.max_in_flight == 2


def test_identical_concurrent_requests_reach_the_endpoint_once(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm(llm={"concurrency": 4})
    fake_llm.delay = 0.2
    fake_llm.respond_with(lambda body: "shared")

    async def ask_same() -> list:
        return await asyncio.gather(*(llm.achat(user("same")) for _ in range(4)))

    with track_usage() as usage:
        results = run_sync(ask_same())
    assert [r.text for r in results] == ["shared"] * 4
    assert fake_llm.calls == 1
    assert (usage.calls, usage.cache_hits) == (4, 3)

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        texts = list(pool.map(lambda _: llm.chat(user("same, threaded")).text, range(4)))
    assert texts == ["shared"] * 4
    assert fake_llm.calls == 2


# --------------------------------------------------------------------------- usage


def test_track_usage_sums_reported_tokens(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.script(
        Reply("a", prompt_tokens=7, completion_tokens=3),
        Reply("b", prompt_tokens=5, completion_tokens=2),
        Reply("c", prompt_tokens=100, completion_tokens=50),
    )
    with track_usage() as outer:
        with track_usage() as inner:
            llm.chat(user("one"))
            run_sync(llm.achat(user("two")))
        llm.chat(user("one"))  # a cache hit: counted with its recorded cost
    assert (inner.calls, inner.cache_hits) == (2, 0)
    assert (inner.prompt_tokens, inner.completion_tokens) == (12, 5)
    assert (outer.calls, outer.cache_hits) == (3, 1)
    assert (outer.prompt_tokens, outer.completion_tokens) == (19, 8)
    assert outer.seconds >= inner.seconds > 0

    llm.chat(user("three"))  # outside every scope
    assert outer.calls == 3


def test_track_usage_counts_concurrent_tasks(fake_llm: FakeLLM, make_llm) -> None:
    llm = make_llm()
    fake_llm.respond_with(lambda body: Reply("x", prompt_tokens=10, completion_tokens=1))

    async def fan_out() -> None:
        await asyncio.gather(*(llm.achat(user(f"q{i}")) for i in range(5)))

    with track_usage() as usage:
        run_sync(fan_out())
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (5, 50, 5)


def test_gather_with_progress_keeps_order_and_returns_errors() -> None:
    async def value(i: int) -> int:
        await asyncio.sleep(0.01 * (5 - i))
        if i == 2:
            raise ValueError("item two failed")
        return i * 10

    results = asyncio.run(gather_with_progress((value(i) for i in range(5)), "t", True))
    assert results[:2] == [0, 10] and results[3:] == [30, 40]
    assert isinstance(results[2], ValueError) and str(results[2]) == "item two failed"


def test_run_sync_inside_a_running_loop_keeps_usage_scopes(fake_llm: FakeLLM, make_llm) -> None:
    # Jupyter runs cells inside an event loop: run_sync then works on a worker thread, and the
    # caller's track_usage must still see the calls made there.
    import asyncio

    from graphrag.llm.client import run_sync, track_usage

    llm = make_llm()
    fake_llm.script("first")

    async def cell() -> None:
        with track_usage() as usage:
            assert run_sync(llm.achat(user("q"))).text == "first"
        assert usage.calls == 1 and usage.completion_tokens > 0

    asyncio.run(cell())
