"""Name normalization, parsing one chunk's extraction, and extraction over real demo chunks."""

from __future__ import annotations

import pytest
from conftest import DEMO_DOCS, UNPACKED, FakeLLM, Reply, chunk_text, extraction_reply, names_in

from graphrag import schemas as S
from graphrag.index.extract.names import display_name, mentioned, name_key
from graphrag.index.extract.stage import (
    REPEATED_NAME,
    SELF_LOOP,
    drop_names_not_in_text,
    extract_graph,
    parse_extraction,
)
from graphrag.settings import IndexSettings
from graphrag.text.documents import chunk_documents, load_documents

# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("Kestrel Bay Marine Institute", "kestrel bay marine institute"),
        ("KESTREL BAY MARINE INSTITUTE", "kestrel bay marine institute"),
        ("  Kestrel   Bay\n Marine\tInstitute ", "kestrel bay marine institute"),
        ("kestrel bay marine institute.", "kestrel bay marine institute"),
        ('"Kestrel Bay Marine Institute"', "kestrel bay marine institute"),
        ("“Kestrel Bay Marine Institute”", "kestrel bay marine institute"),
        ("The Kestrel Bay Marine Institute", "kestrel bay marine institute"),
        ("the Kestrel Bay Marine Institute's", "kestrel bay marine institute"),
        ("Okafor's", "okafor"),
        ("Okafor’s", "okafor"),
        ("Director Mara Okafor", "mara okafor"),
        ("Dr. Mara Okafor", "mara okafor"),
        ("Prof Mara Okafor", "mara okafor"),
        ("Mayor Tomas Reyne", "tomas reyne"),
        ("Mayor Reyne", "mayor reyne"),  # one name left: the title is part of it
        ("Theodore Hale", "theodore hale"),  # "The" only as a whole word
        ("Storm Corvin (2022)", "storm corvin 2022"),
        ("Tidewell & Bluewrack", "tidewell & bluewrack"),
        ("Saltmere-University", "saltmere-university"),
        ("ﬁsh ﬁnder", "fish finder"),  # NFKC ligatures
        ("!!!", ""),
    ],
)
def test_name_key_normalizes(raw: str, key: str) -> None:
    assert name_key(raw) == key


def test_name_key_resolves_configured_aliases() -> None:
    aliases = {"KBMI": "The Kestrel Bay Marine Institute", "Okafor": "Director Mara Okafor"}
    canonical = name_key("Kestrel Bay Marine Institute")
    assert name_key("KBMI", aliases) == canonical
    assert name_key("kbmi.", aliases) == canonical
    assert name_key("The KBMI", aliases) == canonical
    assert name_key("Okafor's", aliases) == "mara okafor"
    assert name_key("KBMI") == "kbmi"  # no alias table, no resolution
    assert name_key("Port Aldry", aliases) == "port aldry"


def test_display_name_keeps_the_surface_form() -> None:
    assert display_name('  "Kestrel  Bay Marine Institute." ') == "Kestrel Bay Marine Institute"
    assert display_name("The Harbour Cup") == "The Harbour Cup"


# --------------------------------------------------------------------------- parsing


def test_parse_extraction_adds_missing_endpoints_and_drops_self_loops() -> None:
    settings = IndexSettings(aliases={"KBMI": "Kestrel Bay Marine Institute"})
    raw = {
        "entities": [
            {"name": "Mara Okafor", "type": "person", "description": " Leads KBMI. "},
            {
                "name": "Kestrel Bay Marine Institute",
                "type": "organization",
                "description": "A research centre.",
            },
            {"name": "mara okafor.", "type": "organization", "description": "duplicate"},
            {"name": "...", "type": "geo", "description": "no name left"},
        ],
        "relationships": [
            {
                "source": "Director Mara Okafor",
                "target": "KBMI",
                "description": " leads ",
                "strength": 9,
            },
            {
                "source": "KBMI",
                "target": "Kestrel Bay Marine Institute",
                "description": "same thing",
                "strength": 5,
            },
            {
                "source": "Jonah Whitlow",
                "target": "KelpSense",
                "description": "designed",
                "strength": 8,
            },
            {"source": "?", "target": "KelpSense", "description": "bad", "strength": 1},
        ],
    }
    entities, relationships, dropped = parse_extraction(raw, "unit-1", settings)
    # nothing the model said is lost: a second entry of a name and a self-loop are kept
    assert [(d["name"], d[S.REASON], d[S.DESCRIPTION]) for d in dropped] == [
        ("mara okafor", REPEATED_NAME, "duplicate"),
        ("KBMI -> Kestrel Bay Marine Institute", SELF_LOOP, "same thing"),
    ]
    assert {d[S.TEXT_UNIT_ID] for d in dropped} == {"unit-1"}
    by_key = {e[S.NAME_KEY]: e for e in entities}
    assert len(by_key) == len(entities)
    assert list(by_key) == [
        "mara okafor",
        "kestrel bay marine institute",
        "jonah whitlow",
        "kelpsense",
    ]
    assert by_key["mara okafor"][S.TYPE] == "person"  # the first mention wins in a chunk
    assert by_key["mara okafor"][S.DESCRIPTION] == "Leads KBMI."
    assert by_key["jonah whitlow"][S.TYPE] == "unknown"
    assert by_key["jonah whitlow"][S.DESCRIPTION] == ""
    assert by_key["kelpsense"][S.TITLE] == "KelpSense"
    assert all(e[S.TEXT_UNIT_ID] == "unit-1" for e in entities)

    assert [(r["source_key"], r["target_key"]) for r in relationships] == [
        ("mara okafor", "kestrel bay marine institute"),
        ("jonah whitlow", "kelpsense"),
    ]
    first = relationships[0]
    assert (first[S.SOURCE_ENTITY], first[S.TARGET_ENTITY]) == ("Director Mara Okafor", "KBMI")
    assert first[S.DESCRIPTION] == "leads" and first["strength"] == 9
    assert first[S.TEXT_UNIT_ID] == "unit-1"


def test_parse_extraction_of_nothing() -> None:
    assert parse_extraction({"entities": [], "relationships": []}, "u", IndexSettings()) == (
        [],
        [],
        [],
    )


# --------------------------------------------------------------------------- extract_graph


def test_extract_graph_keeps_good_chunks_and_records_the_bad_one(
    fake_llm: FakeLLM, make_llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = load_documents(DEMO_DOCS).documents
    units = chunk_documents(documents, 200, 40).head(3)
    bad_id, bad_text = units[S.ID].iloc[1], units[S.TEXT].iloc[1]

    def reply(body: dict) -> str | Reply:
        text = chunk_text(body)
        return (
            Reply("the server failed", status=400) if text == bad_text else extraction_reply(text)
        )

    fake_llm.respond_with(reply)
    llm = make_llm(index=UNPACKED)
    settings = llm.settings.index
    entities, relationships, errors, _ = extract_graph(units, llm, settings, progress=False)

    assert errors.to_dict("records") == [
        {S.STAGE: "extract", S.ITEM_ID: bad_id, S.ERROR: errors[S.ERROR].iloc[0]}
    ]
    assert "the server failed" in errors[S.ERROR].iloc[0]
    assert fake_llm.calls == 3  # one per chunk: the failed one is retried by the next run

    good = units[units[S.ID] != bad_id]
    assert set(entities[S.TEXT_UNIT_ID]) == set(good[S.ID])
    for unit_id, text in zip(good[S.ID], good[S.TEXT], strict=True):
        expected = {name_key(n) for n in names_in(text)}
        assert expected, "the demo chunk should name something"
        found = set(entities[entities[S.TEXT_UNIT_ID] == unit_id][S.NAME_KEY])
        assert found == expected
    assert len(relationships) == sum(max(len(names_in(t)) - 1, 0) for t in good[S.TEXT])
    assert list(entities.columns) == [S.TITLE, S.NAME_KEY, S.TYPE, S.DESCRIPTION, S.TEXT_UNIT_ID]

    # the request asks for the configured entity types, in plain text (no response format)
    request = fake_llm.requests[0]
    assert ", ".join(settings.entity_types) in request["messages"][0]["content"]
    assert "response_format" not in request


def test_ground_drops_names_the_chunk_never_mentions_and_their_relationships() -> None:
    text = "Director Okafor (Mara) leads the Kestrel Bay Marine Institute in Port Aldry."
    raw = {
        "entities": [
            {"name": "Mara Okafor", "type": "person", "description": "Leads KBMI."},
            {"name": "Kestrel Bay Marine Institute", "type": "organization", "description": ""},
            {"name": "Dunmore Rowing Club", "type": "organization", "description": "copied"},
        ],
        "relationships": [
            {
                "source": "Mara Okafor",
                "target": "Kestrel Bay Marine Institute",
                "description": "leads",
                "strength": 9,
            },
            {
                "source": "Mara Okafor",
                "target": "Dunmore Rowing Club",
                "description": "invented",
                "strength": 5,
            },
            {
                "source": "Port Aldry",
                "target": "Cliffport",
                "description": "invented",
                "strength": 5,
            },
        ],
    }
    kept, dropped = drop_names_not_in_text(raw, text)
    assert dropped == ["Cliffport", "Dunmore Rowing Club"]
    assert [e["name"] for e in kept["entities"]] == ["Mara Okafor", "Kestrel Bay Marine Institute"]
    assert [(r["source"], r["target"]) for r in kept["relationships"]] == [
        ("Mara Okafor", "Kestrel Bay Marine Institute")
    ]
    assert mentioned("mara okafor", text) and not mentioned("Mara Okafor Smith", text)
