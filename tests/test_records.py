"""The record format: the demo's recorded JSON extraction replies converted to records and
back, malformed lines repaired or reported (never raised), repeats dropped, the start of a
repetition loop found, and the record extraction end to end on a fake endpoint."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import RECORDED_CACHE, FakeLLM, Reply

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.record_calls import MALFORMED_RECORD, REPEATED_RECORDS
from graphrag.index.extract.records import COMPLETE, parse_records
from graphrag.index.extract.stage import extract_graph
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings
from studies.json_extraction import records_from_json_reply, to_records
from studies.recorded import recorded_replies


def recorded_extractions() -> list[tuple[str, str]]:
    """(reply text, finish reason) of every recorded demo extraction reply."""
    replies = []
    for record in recorded_replies(RECORDED_CACHE, "graph_extraction"):
        choice = record["response"]["choices"][0]
        replies.append((choice["message"]["content"], choice["finish_reason"]))
    return replies


REPLIES = recorded_extractions()


def test_the_demo_has_recorded_extraction_replies_some_cut_off() -> None:
    assert len(REPLIES) >= 12
    assert any(reason == "length" for _, reason in REPLIES)


@pytest.mark.parametrize("reply", [r for r, reason in REPLIES if reason == "stop"][:8])
def test_a_complete_json_reply_round_trips_through_records(reply: str) -> None:
    value = json.loads(reply)
    parsed = parse_records(to_records(value))
    assert parsed.complete and parsed.malformed == []
    # repeats are dropped; everything else comes back as it was, in order
    kept = {json.dumps(e, sort_keys=True) for e in parsed.entities}
    assert kept <= {json.dumps(e, sort_keys=True) for e in value["entities"]}
    assert len(parsed.entities) + len(parsed.relationships) + parsed.duplicates == len(
        value["entities"]
    ) + len(value["relationships"])


def first_repeat(records: str) -> int | None:
    """The character offset of the first line the parser drops as a repeat, or None."""
    offset = 0
    for line in records.splitlines(keepends=True):
        if parse_records(records[: offset + len(line)]).duplicates:
            return offset
        offset += len(line)
    return None


def test_recorded_repetition_loops_are_dropped_and_located() -> None:
    """The demo's replies repeat records (the 1.5B model's loops): the parser keeps one of
    each, and the first line it drops repeats a record kept before it."""
    total_repeats = 0
    for reply, _ in REPLIES:
        records = records_from_json_reply(reply)
        parsed = parse_records(records)
        total_repeats += parsed.duplicates
        offset = first_repeat(records + "\n")
        if parsed.duplicates:
            assert offset is not None
            before = parse_records(records[:offset])
            assert before.duplicates == 0
            repeated = parse_records(records[offset:].splitlines()[0])
            record = (repeated.entities or repeated.relationships)[0]
            assert record in before.entities + before.relationships or any(
                record["description"].casefold() == r["description"].casefold()
                for r in before.entities + before.relationships
            )
        else:
            assert offset is None
    assert total_repeats > 50  # measured: 142 of 506 records


def test_a_cut_off_json_reply_still_gives_its_finished_records() -> None:
    reply = next(r for r, reason in REPLIES if reason == "length")
    with pytest.raises(ValueError):
        json.loads(reply)
    records = records_from_json_reply(reply)
    parsed = parse_records(records)
    assert parsed.entities and not parsed.complete and parsed.malformed == []


EXAMPLE = {
    "entities": [
        {"name": "Mara Okafor", "type": "person", "description": "Directs KBMI."},
        {"name": "KBMI", "type": "organization", "description": "A marine institute."},
    ],
    "relationships": [
        {"source": "Mara Okafor", "target": "KBMI", "description": "directs", "strength": 9}
    ],
}


@pytest.mark.parametrize(
    ("line", "expected", "repair"),
    [
        ('"entity"<|>Mara Okafor<|>person<|>Directs KBMI.)', "entity", "opening parenthesis"),
        ('("entity"<|>Mara Okafor<|>person<|>Directs KBMI.', "entity", "closing parenthesis"),
        ("(entity<|>Mara Okafor<|>person<|>Directs <|> KBMI.)", "entity", "extra delimiters"),
        ('("relationship"<|>Mara Okafor<|>KBMI<|>directs<|>8.0)', "relationship", "integer"),
        ('("relationship"<|>Mara Okafor<|>KBMI<|>directs<|>12)', "relationship", "read as 10"),
        ('("relationship"<|>Mara Okafor<|>KBMI<|>directs)', "relationship", "strength set to 5"),
        ('("relationship"<|>"Mara Okafor"<|>KBMI<|>directs<|>high)', "relationship", "set to 5"),
        ('("entity"<|Mara Okafor<|person<|Directs KBMI.>)', "entity", "without one of their"),
        ('("relationship"<|Mara Okafor<|KBMI<|directs|>9)', "relationship", "without one of"),
        ('("entity"<|>Mara Okafor<|>KBMI<|>directs<|>9)', "relationship", "as an entity"),
        ('("entity"<|>Mara Okafor<|>director of KBMI.)', "entity", "type unknown"),
        ('("entity"<|>Mara Okafor<|>KBMI<|>organization<|>Directs it.)', "relationship", "entity"),
        # recorded on MuSiQue: a relationship with a source and a fact but no target
        (
            '[1] ("relationship"<|Seattle<|average annual snowfall, as measured at Sea-Tac '
            "Airport, is 6.8 inches (17.3 cm).>)",
            "entity",
            "without a target read as an entity description",
        ),
    ],
)
def test_repairable_lines_are_kept_and_the_repair_named(line, expected, repair) -> None:
    parsed = parse_records(line)
    assert parsed.malformed == []
    kept = parsed.entities if expected == "entity" else parsed.relationships
    assert len(kept) == 1
    assert any(repair in note for _, note in parsed.repaired), parsed.repaired
    if expected == "relationship":
        assert kept[0]["source"] == "Mara Okafor" and 1 <= kept[0]["strength"] <= 10


def test_malformed_lines_are_reported_with_their_number_and_never_raise() -> None:
    reply = "\n".join(
        [
            '("entity"<|>Mara Okafor<|>person<|>Directs KBMI.)',
            "Here are the entities:",
            '("entity"<|>KBMI)',
            '("relationship"<|>Mara Okafor)',
            '("event"<|>Storm<|>event<|>A storm.)',
            "",
            '("entity"<|>KBMI<|>organization<|>A marine inst',  # cut off mid-line
        ]
    )
    parsed = parse_records(reply)
    assert [e["name"] for e in parsed.entities] == ["Mara Okafor", "KBMI"]
    assert [n for n, _, _ in parsed.malformed] == [2, 3, 4, 5]
    assert "3 fields" in parsed.malformed[1][2] and "4 fields" in parsed.malformed[2][2]
    assert not parsed.complete


def test_several_records_on_one_line_and_repeats() -> None:
    line = to_records(EXAMPLE).replace("\n", "##").removesuffix(f"##{COMPLETE}")
    parsed = parse_records(f"{line}##{line}\n{COMPLETE}")
    assert parsed.extraction() == EXAMPLE
    assert parsed.duplicates == 3 and parsed.complete
    # a repeat that differs only in case is still the same record
    same = '("entity"<|>KBMI<|>org<|>A marine institute.)\n("entity"<|>kbmi<|>org<|>a marine inst'
    assert parse_records(same + "itute.)").duplicates == 1


def test_records_format_indexes_a_chunk_and_lists_what_it_kept_out(
    fake_llm: FakeLLM, make_settings
) -> None:
    text = "Mara Okafor directs KBMI in Port Aldry."
    fake_llm.script(
        Reply(
            content="\n".join(
                [
                    '("entity"<|>Mara Okafor<|>person<|>Directs KBMI.)',
                    '("entity"<|>KBMI<|>organization<|>An institute in Port Aldry.)',
                    '("relationship"<|>Mara Okafor<|>KBMI<|>directs<|>9)',
                    '("relationship"<|>Mara Okafor<|>KBMI<|>directs<|>9)',
                    "sure! here you go",
                    '("entity"<|>Port Ald',
                ]
            ),
            finish_reason="length",
        )
    )
    settings = make_settings(fake_llm.base_url)
    index = IndexSettings(pack_documents_tokens=0)  # one chunk
    units = pd.DataFrame({S.ID: ["u1"], S.TEXT: [text]})
    entities, relationships, errors, dropped = extract_graph(
        units, ChatLLM(settings), index, progress=False
    )
    assert fake_llm.requests[0]["messages"][0]["content"].startswith("You build a knowledge")
    assert "response_format" not in fake_llm.requests[0]
    assert sorted(entities[S.TITLE]) == ["KBMI", "Mara Okafor"]
    assert len(relationships) == 1 and errors.empty
    reasons = dropped[S.REASON].tolist()
    assert reasons.count(MALFORMED_RECORD) == 2 and reasons.count(REPEATED_RECORDS) == 1


LEAN_SYSTEM = "You build a knowledge graph from a text. Reply with one record per line"


def recorded_record_replies() -> list[str]:
    """Every recorded reply in the record format (the demo's lean re-index and MuSiQue)."""
    return [
        r["response"]["choices"][0]["message"]["content"]
        for r in recorded_replies(RECORDED_CACHE)
        if str(r["request"]["messages"][0]["content"]).startswith(LEAN_SYSTEM)
    ]


def test_recorded_record_replies_lose_no_line_that_names_a_record_kind() -> None:
    """The 1.5B model's own slips, recorded live: delimiters written "<|" (one reply, 17
    records), relationships under the entity label, entities without a type, relationships
    without a target (MuSiQue: 34 lines in 3 replies). Every line that says which kind it is
    is read, so only lines cut off at the token cap stay malformed."""
    replies = recorded_record_replies()
    assert len(replies) >= 12
    slips = [r for r in replies if '"entity"<|Kelp' in r or "<|organization<|>" in r]
    assert slips, "the recorded slips are the data this test is about"
    for reply in replies:
        parsed = parse_records(reply)
        for number, line, why in parsed.malformed:
            assert number == len(reply.splitlines()), (line, why)  # only the unfinished last
        named = [line for line in reply.splitlines() if line.lstrip("(").startswith('"')]
        assert len(parsed.entities) + len(parsed.relationships) + parsed.duplicates >= len(
            named
        ) - len(parsed.malformed)


def test_recorded_replies_read_the_same_in_the_pipe_style() -> None:
    """Every recorded record reply (demo and MuSiQue), rewritten in the pipe style
    (``index.record_style = "pipe"``), gives as many entities and relationships; each line the
    rewrite converted gives the same record; and the replies take fewer tokens."""
    from graphrag.index.extract.records import parse_record
    from graphrag.text import tokens

    replies = recorded_record_replies()
    assert len(replies) >= 12
    tuple_tokens = pipe_tokens = converted = 0
    for reply in replies:
        piped = prompts.pipe_style(reply)  # a record with loose delimiters stays as it was
        a, b = parse_records(reply), parse_records(piped)
        assert (len(a.entities), len(a.relationships)) == (len(b.entities), len(b.relationships))
        for before, after in zip(reply.splitlines(), piped.splitlines(), strict=True):
            if before != after and "<|" not in after:
                assert parse_record(before)[:2] == parse_record(after)[:2], before
                converted += 1
        tuple_tokens += tokens.count_tokens(reply)
        pipe_tokens += tokens.count_tokens(piped)
    assert converted >= 1000
    assert pipe_tokens < 0.9 * tuple_tokens


def test_the_pipe_style_prompt_keeps_the_texts_and_the_examples_records() -> None:
    """Only the format description and the worked example change style; the document does
    not, and the example parses to the same records."""
    text = 'Ann (the "chair") met Bo <|> at Cliffport.'
    tuple_messages = prompts.extract_graph_records(text, ["person", "geo"])
    pipe_messages = prompts.in_pipe_style(tuple_messages)
    assert pipe_messages[-1] == tuple_messages[-1]
    assert "entity|name|type|description:" in pipe_messages[0]["content"]
    assert (
        parse_records(pipe_messages[2]["content"]).extraction()
        == parse_records(tuple_messages[2]["content"]).extraction()
    )


def test_a_finished_reply_without_relationships_is_asked_for_them_when_set(
    fake_llm: FakeLLM, make_settings
) -> None:
    """``index.relationships_follow_up``: a reply that ended normally with entities and no
    relationship gets one more call asking for the relationships only, in the pipe style
    when that is the style asked; off, it is taken as it is. The recorded replies show why:
    a share of the 1.5B model's finished first replies list entities only."""
    replies = recorded_record_replies()
    entities_only = [
        r
        for r in replies
        if (p := parse_records(r)).complete and len(p.entities) >= 2 and not p.relationships
    ]
    assert len(entities_only) >= 10
    first = "entity|Mara Okafor|person|Directs KBMI.\nentity|KBMI|organization|An institute.\n"
    for follow_up in (False, True):
        text = f"Mara Okafor directs KBMI in Port Aldry ({follow_up})."  # not a cache hit
        fake_llm.reset()
        fake_llm.script(first + COMPLETE, "relationship|Mara Okafor|KBMI|directs|9\n" + COMPLETE)
        index = IndexSettings(
            pack_documents_tokens=0, record_style="pipe", relationships_follow_up=follow_up
        )
        units = pd.DataFrame({S.ID: ["u1"], S.TEXT: [text]})
        _, relationships, errors, _ = extract_graph(
            units, ChatLLM(make_settings(fake_llm.base_url)), index, progress=False
        )
        assert errors.empty
        assert len(fake_llm.requests) == 1 + follow_up
        assert len(relationships) == int(follow_up)
        assert "entity|name|type|description" in fake_llm.requests[0]["messages"][0]["content"]
        if follow_up:
            last = fake_llm.requests[1]["messages"]
            assert last[-2]["content"].startswith("entity|Mara Okafor")
            assert "relationship records only" in last[-1]["content"]


# The end of a live reply for the demo's Reyne interview (two of five cold live runs wrote
# it byte for byte): after its entities and two relationships, the model restated each
# entity as a relationship to its own type, with descending strengths, to the end.
INTERVIEW_ENTITIES = "".join(
    line + "\n"
    for line in (
        "entity|Tomas Reyne|person|Chairs the Kestrel Bay Fishing Cooperative.",
        "entity|Storm Corvin|event|A storm that occurred in 2012.",
        "entity|cod|technology|Fish species that the Kestrel Bay Fishing Cooperative primarily "
        "catches.",
        "entity|Tarn Boats|organization|Sponsor of the Harbour Cup.",
        "entity|Bluetide Marine|organization|Buys the harvest of kelp from the Kestrel Bay "
        "Fishing Cooperative under a five-year contract.",
        "entity|Desmond Hale|person|Served as the mayor of Port Aldry.",
        "relationship|Tomas Reyne|Kestrel Bay Fishing Cooperative|chairs|9",
        "relationship|Kestrel Bay Fishing Cooperative|Port Aldry|based in|7",
    )
)
INTERVIEW_MIRRORS = "".join(
    line + "\n"
    for line in (
        "relationship|Storm Corvin|event|occurred in 2012|6",
        "relationship|cod|technology|fish species that the Kestrel Bay Fishing Cooperative "
        "primarily catches|5",
        "relationship|Tarn Boats|organization|Sponsor of the Harbour Cup|2",
        "relationship|Bluetide Marine|organization|Buys the harvest of kelp from the Kestrel "
        "Bay Fishing Cooperative under a five-year contract|1",
        "relationship|Desmond Hale|person|Served as the mayor of Port Aldry|0",
    )
)


def test_entities_restated_as_relationships_to_their_types_end_the_reply() -> None:
    from graphrag.index.extract.records import MIRRORED, RecordStop

    reply = INTERVIEW_ENTITIES + INTERVIEW_MIRRORS
    assert RecordStop().check(reply) == (len(INTERVIEW_ENTITIES), MIRRORED)
    kept = parse_records(reply[: len(INTERVIEW_ENTITIES)])
    assert (len(kept.entities), len(kept.relationships)) == (6, 2)
    # fed line by line, it stops as soon as the third mirror in a row is complete
    rule, partial = RecordStop(), ""
    for line in reply.splitlines(keepends=True):
        partial += line
        if rule.check(partial):
            break
    assert partial.count("\n") == INTERVIEW_ENTITIES.count("\n") + 3


def test_two_mirrors_then_a_real_relationship_or_a_packed_reply_go_on() -> None:
    from graphrag.index.extract.records import RecordStop

    mirrors = INTERVIEW_MIRRORS.splitlines(keepends=True)
    real = "relationship|Desmond Hale|Port Aldry|mayor of|8\n"
    assert RecordStop().check(INTERVIEW_ENTITIES + "".join(mirrors[:2]) + real) is None
    packed = "".join(
        f"[1] {line}" for line in (INTERVIEW_ENTITIES + INTERVIEW_MIRRORS).splitlines(keepends=True)
    )
    assert RecordStop().check(packed) is None
