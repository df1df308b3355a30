"""Streamed replies ended early by a stop rule (``index.stop_repeats``): a looping reply from
a fake OpenAI-compatible streaming endpoint is closed at its first repeated record, what was
unique is kept, the cache records it (with why) and replays it without the endpoint, and the
recorded completion tokens are those the endpoint generated before the close."""

from __future__ import annotations

import json

import pytest
from conftest import RECORDED_CACHE, FakeLLM, Reply

from graphrag import prompts
from graphrag.index.extract.record_calls import MALFORMED_RECORD, STOPPED_EARLY
from graphrag.index.extract.records import RECORD_STOP, REPEATED, parse_records
from graphrag.index.extract.stage import extract_graph
from graphrag.llm.client import SEED, TEMPERATURE, ChatLLM, run_sync
from graphrag.text import tokens
from studies.json_extraction import records_from_json_reply
from studies.recorded import recorded_replies

TYPES = ["person", "organization", "geo", "event", "technology"]
TEXT = "Mara Okafor directs the Kestrel Bay Marine Institute, which studies the Corvin Reef."
ONE_CHUNK_RECORDS = {"pack_documents_tokens": 0}  # no packing
UNIQUE = [
    '("entity"<|>Mara Okafor<|>person<|>Directs the institute.)\n',
    '("entity"<|>Kestrel Bay Marine Institute<|>organization<|>Studies the reef.)\n',
    '("entity"<|>Corvin Reef<|>geo<|>A reef the institute studies.)\n',
    '("relationship"<|>Mara Okafor<|>Kestrel Bay Marine Institute<|>directs<|>9)\n',
]
LOOP = [
    '("relationship"<|>Kestrel Bay Marine Institute<|>Corvin Reef<|>studies<|>8)\n',
    '("entity"<|>Corvin Reef<|>geo<|>A reef the institute studies.)\n',
]
# Enough loop lines that the endpoint cannot write them all into the socket buffers: it only
# gets to the end if the client reads everything, so a closed stream is seen as a cut.
LOOP_LINES = 60_000


def pieces(line: str) -> list[str]:
    """Split a line the way a server streams it: one piece per word (newline in the last)."""
    words = line.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def looping_reply() -> tuple[list[str], int, str]:
    """Return (pieces, pieces up to the end of the line that shows the loop, the kept text).

    The loop is LOOP[0], LOOP[1], LOOP[0], ...: LOOP[1] repeats UNIQUE[2], and the next
    LOOP[0] is a second repeat in a row, so the reply ends before that LOOP[1]."""
    unique = [p for line in UNIQUE for p in pieces(line)]
    loop = [p for i in range(LOOP_LINES) for p in pieces(LOOP[i % 2])]
    generated = len(unique) + len(pieces(LOOP[0])) * 2 + len(pieces(LOOP[1]))
    return unique + loop, generated, "".join(UNIQUE) + LOOP[0]


def messages() -> list[dict[str, str]]:
    return prompts.extract_graph_records(TEXT, TYPES)


def recorded(llm: ChatLLM, body_messages: list[dict[str, str]]) -> dict:
    llm_settings = llm.settings.llm  # the body of the same request sent unstreamed
    body = {
        "model": llm.model,
        "messages": body_messages,
        "temperature": TEMPERATURE,
        "max_tokens": llm_settings.max_tokens,
        "seed": SEED,
    }
    return json.loads(llm.cache.path_for(llm.cache_key(body, RECORD_STOP)).read_text())


def test_a_looping_reply_ends_at_its_first_repeat_and_replays(
    fake_llm: FakeLLM, make_llm, make_settings
) -> None:
    streamed, generated, unique_text = looping_reply()
    fake_llm.script(Reply(pieces=streamed))
    llm = make_llm()
    completion = run_sync(llm.achat(messages(), stop_rule=RECORD_STOP))
    assert completion.text == unique_text
    assert completion.stopped_early == REPEATED
    assert fake_llm.streams_cut == 1 and fake_llm.pieces_sent[0] < len(streamed)
    assert fake_llm.requests[0]["stream"] is True
    parsed = parse_records(completion.text)
    assert parsed.duplicates == 0 and len(parsed.entities) == 3 and len(parsed.relationships) == 2
    # recorded under the request's usual key (no stream fields), with why it stopped and the
    # tokens the endpoint generated before the close (one per streamed piece)
    record = recorded(llm, messages())
    assert "stream" not in record["request"]
    assert record["stopped_early"] == REPEATED
    assert record["response"]["choices"][0]["message"]["content"] == unique_text
    assert record["response"]["usage"]["completion_tokens"] == generated
    assert completion.usage.completion_tokens == generated
    # replay: the same answer and cost from the cache alone
    replay = ChatLLM(make_settings(fake_llm.base_url, cache={"mode": "replay"}))
    again = run_sync(replay.achat(messages(), stop_rule=RECORD_STOP))
    assert (again.text, again.stopped_early) == (unique_text, REPEATED)
    assert again.usage.cache_hits == 1 and again.usage.completion_tokens == generated
    assert fake_llm.calls == 1


def test_a_lone_repeat_is_not_a_loop(fake_llm: FakeLLM, make_llm) -> None:
    reply = [*UNIQUE[:3], UNIQUE[0], UNIQUE[3], "<|COMPLETE|>"]
    fake_llm.script(Reply(pieces=[p for line in reply for p in pieces(line)]))
    completion = run_sync(make_llm().achat(messages(), stop_rule=RECORD_STOP))
    assert completion.text == "".join(reply) and completion.stopped_early is None
    assert parse_records(completion.text).duplicates == 1  # the parser drops it


def test_a_stream_without_loop_is_recorded_whole_with_the_servers_usage(
    fake_llm: FakeLLM, make_llm
) -> None:
    streamed = [p for line in UNIQUE for p in pieces(line)] + ["<|COMPLETE|>"]
    fake_llm.script(Reply(pieces=streamed))
    llm = make_llm()
    completion = run_sync(llm.achat(messages(), stop_rule=RECORD_STOP))
    assert completion.text == "".join(streamed) and completion.stopped_early is None
    assert completion.finish_reason == "stop" and fake_llm.streams_cut == 0
    record = recorded(llm, messages())
    assert "stopped_early" not in record
    assert record["response"]["usage"]["completion_tokens"] == len(streamed)


def test_stop_repeats_in_extraction_keeps_the_unique_records(
    fake_llm: FakeLLM, make_llm, demo_subset
) -> None:
    import pandas as pd

    streamed, _, _ = looping_reply()
    fake_llm.script(Reply(pieces=streamed))
    settings = make_llm(index={**ONE_CHUNK_RECORDS, "stop_repeats": True})
    units = pd.DataFrame({"id": ["u1"], "text": [TEXT]})
    entities, relationships, errors, dropped = extract_graph(
        units, settings, settings.settings.index, progress=False
    )
    assert sorted(entities["title"]) == [
        "Corvin Reef",
        "Kestrel Bay Marine Institute",
        "Mara Okafor",
    ]
    assert len(relationships) == 2 and errors.empty
    assert list(dropped["reason"]) == [STOPPED_EARLY]


def demo_extractions() -> list[tuple[str, str]]:
    """(chunk text, reply as record lines) of the recorded demo extraction replies."""
    found = []
    for record in recorded_replies(RECORDED_CACHE, "graph_extraction"):
        chunk = record["request"]["messages"][3]["content"].removeprefix("Text:\n")
        reply = record["response"]["choices"][0]["message"]["content"]
        found.append((chunk, records_from_json_reply(reply) + "\n"))
    return found


def expected_cut(text: str) -> int | None:
    """Where a reply's loop starts: the first of two lines in a row that each repeat an
    earlier line (whitespace and case aside)."""
    lines = text.splitlines(keepends=True)
    starts = [sum(len(x) for x in lines[:i]) for i in range(len(lines))]
    norm = [" ".join(line.split()).casefold() for line in lines]
    repeats = [norm[i] in norm[:i] for i in range(len(lines))]
    for i in range(len(lines) - 1):
        if repeats[i] and repeats[i + 1] and lines[i + 1].endswith("\n"):
            return starts[i]
    return None


DEMO = demo_extractions()
LOOPING = [(c, t) for c, t in DEMO if expected_cut(t)]


def test_most_recorded_demo_extraction_replies_would_be_cut() -> None:
    assert len(DEMO) >= 12 and len(LOOPING) >= len(DEMO) // 3


ENTITY_LOOP = [
    p for line in [*UNIQUE[:3]] + [UNIQUE[1 + i % 2] for i in range(400)] for p in pieces(line)
]


@pytest.mark.parametrize(
    ("first", "dropped_reasons"),
    [
        # a loop in the entity records, stopped where it starts
        (Reply(pieces=ENTITY_LOOP), [STOPPED_EARLY]),
        # the demo's lean re-index: the institute profile's entity descriptions filled all
        # 1,024 tokens; the unfinished last line is left out of the follow-up's previous turn
        (
            Reply(content="".join(UNIQUE[:3]) + UNIQUE[0][:25], finish_reason="length"),
            [MALFORMED_RECORD],
        ),
    ],
    ids=["entity loop", "cut at the cap"],
)
def test_a_reply_without_relationships_is_followed_by_one_call_for_them(
    fake_llm: FakeLLM, make_llm, first: Reply, dropped_reasons: list[str]
) -> None:
    import pandas as pd

    fake_llm.script(
        first,
        Reply(
            pieces=[p for line in [*UNIQUE[3:], *LOOP[:1], "<|COMPLETE|>"] for p in pieces(line)]
        ),
    )
    llm = make_llm(index={**ONE_CHUNK_RECORDS, "stop_repeats": True})
    units = pd.DataFrame({"id": ["u1"], "text": [TEXT]})
    entities, relationships, errors, dropped = extract_graph(
        units, llm, llm.settings.index, progress=False
    )
    assert fake_llm.calls == 2 and errors.empty
    follow_up = fake_llm.requests[1]["messages"]
    assert follow_up[-2] == {"role": "assistant", "content": "".join(UNIQUE[:3]).rstrip("\n")}
    assert "relationship records only" in follow_up[-1]["content"]
    assert len(entities) == 3 and len(relationships) == 2
    assert list(dropped["reason"]) == dropped_reasons


@pytest.mark.parametrize("chunk,text", LOOPING[:4])
def test_recorded_demo_loops_streamed_token_by_token_end_where_they_start(
    fake_llm: FakeLLM, make_llm, chunk: str, text: str
) -> None:
    """The demo's own looping extraction replies (as records), streamed one Qwen token per
    event for their own chunk: each ends where its loop starts, and fewer tokens are
    generated than the whole reply."""
    ids = tokens.encode(text)
    fake_llm.script(Reply(pieces=[tokens.decode([i]) for i in ids]))
    request = prompts.extract_graph_records(chunk, TYPES)
    completion = run_sync(make_llm().achat(request, stop_rule=RECORD_STOP))
    cut = expected_cut(text)
    assert completion.text == text[:cut] and completion.stopped_early == REPEATED
    assert completion.usage.completion_tokens < len(ids)


def test_a_server_that_ignores_stream_is_recorded_whole(fake_llm: FakeLLM, make_llm) -> None:
    """Some OpenAI-compatible servers answer stream=True with one JSON completion."""
    text = "".join(UNIQUE) + "<|COMPLETE|>"
    fake_llm.script(Reply(text, ignore_stream=True, completion_tokens=77))
    completion = run_sync(make_llm().achat(messages(), stop_rule=RECORD_STOP))
    assert completion.text == text and completion.stopped_early is None
    assert completion.usage.completion_tokens == 77
    assert fake_llm.requests[0]["stream"] is True


def test_the_stop_rule_is_not_sent_but_is_part_of_the_key(fake_llm: FakeLLM, make_llm) -> None:
    """The rule is the caller's code, handed to the call: the endpoint sees only the request
    and ``stream``; the reply is recorded under the request unstreamed and the rule's spec, so
    the same request without the rule is asked again (it might run on where the rule cut)."""
    whole = [p for line in UNIQUE for p in pieces(line)] + ["<|COMPLETE|>"]
    fake_llm.script(Reply(pieces=whole), Reply(content="".join(whole)))
    llm = make_llm()
    streamed = run_sync(llm.achat(messages(), stop_rule=RECORD_STOP))
    plain = run_sync(llm.achat(messages()))
    assert plain.cache_key != streamed.cache_key and plain.text == streamed.text
    assert fake_llm.calls == 2
    assert recorded(llm, messages())["stop"] == RECORD_STOP.spec
    sent = fake_llm.requests[0]
    assert set(sent) == {
        "model",
        "messages",
        "temperature",
        "max_tokens",
        "seed",
        "stream",
        "stream_options",
    }
