"""Entity resolution (graphrag/index/graph/resolve.py): each rule, its refusals, the merged
view the graph methods read, on the demo's recorded extraction against its gold graph and on
MuSiQue's names; and the clause names extraction drops (names.is_clause)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from conftest import REPO_ROOT, UNPACKED, FakeLLM

from graphrag import schemas as S
from graphrag.index.extract.names import is_clause
from graphrag.index.extract.quality import load_gold_graph
from graphrag.index.extract.stage import CLAUSE_NAME, drop_clause_names, extract_graph
from graphrag.index.graph.resolve import TITLES, Resolution, core_name, resolve_entities, typo
from graphrag.query.local import LocalSearch
from graphrag.query.ppr import ENTITY, PPRRetrieval
from studies.benchmarks.entity_resolution import merge_quality
from studies.json_extraction import to_records

GOLD = REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json"


def table(*rows: tuple, vectors: dict[str, list[float]] | None = None) -> pd.DataFrame:
    """Entities from (title, type, text units[, description]) rows; ids are the titles."""
    vectors = vectors or {}
    return pd.DataFrame(
        {
            S.ID: [r[0] for r in rows],
            S.TITLE: [r[0] for r in rows],
            S.TYPE: [r[1] for r in rows],
            S.TEXT_UNIT_IDS: [list(r[2]) for r in rows],
            S.FREQUENCY: [len(r[2]) for r in rows],
            S.DESCRIPTION: [r[3] if len(r) > 3 else "" for r in rows],
            S.DESCRIPTION_EMBEDDING: [vectors.get(r[0], [1.0, 0.0, 0.0]) for r in rows],
        }
    )


def edges(*pairs: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            S.SOURCE_ID: [p[0] for p in pairs],
            S.TARGET_ID: [p[1] for p in pairs],
            S.SOURCE_ENTITY: [p[0] for p in pairs],
            S.TARGET_ENTITY: [p[1] for p in pairs],
        },
        columns=[S.SOURCE_ID, S.TARGET_ID, S.SOURCE_ENTITY, S.TARGET_ENTITY],
    )


def merged(entities: pd.DataFrame, relationships: pd.DataFrame | None = None) -> dict[str, str]:
    aliases = resolve_entities(entities, relationships if relationships is not None else edges())
    return dict(zip(aliases[S.TITLE], aliases["canonical_title"], strict=True))


# --------------------------------------------------------------------------- rules


def test_titles_are_dropped_from_a_persons_name_only() -> None:
    assert core_name("Councillor Marsh") == "marsh"
    assert core_name("Dr. Mara Okafor") == "mara okafor"
    assert core_name("Mayor") == "mayor"  # a title alone stays a name
    assert core_name("Director Board", person=False) == "director board"


def test_the_title_rule_merges_a_name_with_and_without_its_title() -> None:
    entities = table(("Councillor Marsh", "person", ["a"]), ("Marsh", "person", ["b"]))
    assert merged(entities) == {"Marsh": "Councillor Marsh"}
    # needs no evidence, but the types must agree
    organisation = table(("Councillor Marsh", "person", ["a"]), ("Marsh", "organization", ["b"]))
    assert merged(organisation) == {}


def test_a_surname_merges_into_its_one_full_name_given_evidence() -> None:
    entities = table(("Okafor", "person", ["u1"]), ("Mara Okafor", "person", ["u1", "u2"]))
    assert merged(entities) == {"Okafor": "Mara Okafor"}
    apart = table(("Okafor", "person", ["u1"]), ("Mara Okafor", "person", ["u2"]))
    assert merged(apart) == {}, "no shared unit, neighbour or close description"
    neighbours = edges(("Okafor", "KBMI"), ("Mara Okafor", "KBMI"))
    assert merged(apart, neighbours) == {"Okafor": "Mara Okafor"}


def test_a_surname_two_full_names_share_is_left_alone() -> None:
    entities = table(
        ("Reyne", "person", ["u1"]),
        ("Tomas Reyne", "person", ["u1"]),
        ("Ana Reyne", "person", ["u1"]),
    )
    assert merged(entities) == {}


def test_close_descriptions_are_evidence() -> None:
    rows = (
        ("Okafor", "person", ["u1"], "Marine director."),
        ("Mara Okafor", "person", ["u2"], "d"),
    )
    close = {"Okafor": [1.0, 0.1, 0.0], "Mara Okafor": [1.0, 0.0, 0.0]}
    far = {"Okafor": [0.0, 1.0, 0.0], "Mara Okafor": [1.0, 0.0, 0.0]}
    assert merged(table(*rows, vectors=close)) == {"Okafor": "Mara Okafor"}
    assert merged(table(*rows, vectors=far)) == {}


def test_an_acronym_merges_into_the_one_long_name_it_spells() -> None:
    entities = table(
        ("ECB", "organization", ["u1"]), ("European Central Bank", "organization", ["u1"])
    )
    assert merged(entities) == {"ECB": "European Central Bank"}
    two = table(
        ("ECB", "organization", ["u1"]),
        ("European Central Bank", "organization", ["u1"]),
        ("Eastern Cricket Board", "organization", ["u1"]),
    )
    assert merged(two) == {}
    # most of the acronym's units must name the long name ("FM" on radio pages, once beside
    # a "Foreign Ministry")
    radio = table(
        ("FM", "organization", ["u1", "u2", "u3"]),
        ("Foreign Ministry", "organization", ["u1"]),
    )
    assert merged(radio) == {}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("bharatiya janta party", "bharatiya janata party", True),
        ("murtala muhammed airport", "murtala mohammed airport", True),
        ("gamal abdul nasser", "gamal abdel nasser", False),  # one letter of five: too unlike
        ("southwest missouri", "southeast missouri", False),  # compass points: two places
        ("malaysian", "malaysia", False),  # a word and its ending
        ("east germans", "east germany", False),
        ("apollo 11", "apollo 12", False),
        ("tai chi zero", "tai chi hero", False),  # short words
        ("john smith", "jane smith", False),
    ],
)
def test_the_spelling_rule_takes_misspellings_only(a: str, b: str, same: bool) -> None:
    assert typo(a, b) is same


def test_hyphens_and_spaces_are_one_spelling() -> None:
    entities = table(("Palais-Royal", "geo", ["u1"]), ("Palais Royal", "geo", ["u1"]))
    assert len(merged(entities)) == 1


def test_two_different_full_names_never_end_in_one_entity() -> None:
    # "Marsh" could join either through a title; the group would hold two full names
    entities = table(
        ("Lena Marsh", "person", ["u1"]),
        ("Councillor Lena Marsh", "person", ["u1"]),
        ("Tom Marsh", "person", ["u1"]),
        ("Marsh", "person", ["u1"]),
    )
    canonical = merged(entities)
    assert canonical == {"Councillor Lena Marsh": "Lena Marsh"} or canonical == {
        "Lena Marsh": "Councillor Lena Marsh"
    }


def test_the_merged_view_unions_units_and_keeps_relationship_rows() -> None:
    entities = table(("Marsh", "person", ["b", "c"]), ("Councillor Marsh", "person", ["a", "b"]))
    relationships = edges(("Marsh", "Port Aldry"), ("Councillor Marsh", "Port Aldry"))
    resolution = Resolution.of(entities, relationships)
    view_entities, view_relationships = resolution.tables()
    assert list(view_entities[S.TITLE]) == ["Councillor Marsh"]
    assert view_entities[S.TEXT_UNIT_IDS].iloc[0] == ["a", "b", "c"]
    assert list(view_relationships[S.SOURCE_ID]) == ["Councillor Marsh"] * 2
    assert resolution.members("Marsh") == ["Councillor Marsh", "Marsh"]
    assert resolution.expand({"Port Aldry"}) == {"Port Aldry"}


# --------------------------------------------------------------------------- real data


def test_the_demo_merges_the_marsh_names_and_nothing_gold_keeps_apart(demo_index) -> None:
    resolution = demo_index.resolution()
    id_of = dict(zip(demo_index.entities[S.TITLE], demo_index.entities[S.ID], strict=True))
    marsh = {resolution.canonical(id_of[t]) for t in ("Marsh", "Councillor Marsh")}
    assert marsh == {resolution.canonical(id_of["Councillor Lena Marsh"])}
    assert resolution.canonical(id_of["Hale"]) == resolution.canonical(id_of["Desmond Hale"])
    for a, b in [
        ("Kestrel Bay Fishing Cooperative", "Kestrel Bay Fishing Cooperative boat"),
        ("Port Aldry", "Port Aldry Harbour"),
        ("Hale", "Councillor Lena Marsh"),
        ("KelpSense", "KelpSense buoys"),
    ]:
        assert resolution.canonical(id_of[a]) != resolution.canonical(id_of[b]), (a, b)
    quality = merge_quality(
        demo_index.entities, resolution.canonical_of, load_gold_graph(GOLD), TITLES
    )
    assert quality.wrong == [] and quality.missed == []
    assert quality.merged_pairs == quality.gold_pairs > 0


def test_graph_methods_read_the_merged_view_only_when_asked(
    demo_index, replay_settings, replay_embedder
) -> None:
    query = replay_settings.query.changed({"entity_resolution": True})
    settings_on = dataclasses.replace(replay_settings, query=query)
    marsh = demo_index.entities.set_index(S.TITLE).loc["Marsh", S.ID]
    off_local = LocalSearch(demo_index, replay_settings, llm=None, embedder=replay_embedder)
    on_local = LocalSearch(demo_index, settings_on, llm=None, embedder=replay_embedder)
    assert off_local.same_ids(marsh) == [marsh]
    assert len(on_local.same_ids(marsh)) == 3
    off_ppr = PPRRetrieval(demo_index, replay_settings, llm=None, embedder=replay_embedder)
    on_ppr = PPRRetrieval(demo_index, settings_on, llm=None, embedder=replay_embedder)
    nodes = [sum(n.startswith(ENTITY) for n in m.graph.nodes()) for m in (off_ppr, on_ppr)]
    assert nodes == [len(demo_index.entities), len(demo_index.entities) - 4]


def test_musique_merges_are_few_and_keep_apart_what_differs(musique_index) -> None:
    aliases = musique_index.resolution().aliases
    assert 0 < len(aliases) < 0.01 * len(musique_index.entities)
    pairs = set(zip(aliases[S.TITLE], aliases["canonical_title"], strict=True))
    assert ("U.S", "United States") in pairs
    types = musique_index.entities.set_index(S.ID)[S.TYPE]
    for row in aliases.itertuples(index=False):
        assert len({types[getattr(row, S.ID)], types[row.canonical_id]} - {"unknown"}) == 1
    titles = set(musique_index.entities[S.TITLE])
    for a, b in [("West Germany", "East Germany"), ("North Korea", "South Korea")]:
        if a in titles and b in titles:
            assert (a, b) not in pairs and (b, a) not in pairs


# --------------------------------------------------------------------------- clause names

CLAUSES = ["20 people have died on New South Wales roads", "ACT and Tasmania remain fatality free"]
NAMES = [
    "Gone with the Wind",
    "Kestrel Bay Fishing Cooperative boat",
    "Port Aldry mayoral election",
    "Bank of England",
    "Harry Potter and the Deathly Hallows",
    "Renamed",
]


@pytest.mark.parametrize("name", CLAUSES + ["Renamed by an act of the United States Congress"])
def test_a_clause_is_not_a_name(name: str) -> None:
    assert is_clause(name)


@pytest.mark.parametrize("name", NAMES)
def test_a_name_is_not_a_clause(name: str) -> None:
    assert not is_clause(name)


def test_a_clause_and_its_relationships_are_dropped() -> None:
    raw = {
        "entities": [{"name": CLAUSES[0], "type": "event", "description": "d"}],
        "relationships": [{"source": CLAUSES[0], "target": "New South Wales"}],
    }
    kept, dropped = drop_clause_names(raw)
    assert kept == {"entities": [], "relationships": []} and dropped == [CLAUSES[0]]


@pytest.mark.parametrize("drop", [True, False])
def test_extraction_lists_the_clauses_it_drops(fake_llm: FakeLLM, make_llm, drop: bool) -> None:
    text = f"{CLAUSES[0]} this year. {CLAUSES[1]}, police said."
    reply = {
        "entities": [
            {"name": CLAUSES[0], "type": "event", "description": "Road deaths."},
            {"name": "New South Wales", "type": "geo", "description": "A state."},
        ],
        "relationships": [
            {
                "source": CLAUSES[0],
                "target": "New South Wales",
                "description": "Deaths in the state.",
                "strength": 5,
            }
        ],
    }
    fake_llm.respond_with(lambda body: to_records(reply))
    llm = make_llm(index={**UNPACKED, "drop_clause_names": drop})
    units = pd.DataFrame({S.ID: ["u1"], S.TEXT: [text]})
    entities, relationships, _, dropped = extract_graph(
        units, llm, llm.settings.index, progress=False
    )
    clause_rows = dropped[dropped[S.REASON] == CLAUSE_NAME]
    if drop:
        assert list(entities[S.TITLE]) == ["New South Wales"] and relationships.empty
        assert list(clause_rows[S.NAME]) == [CLAUSES[0]]
    else:
        assert CLAUSES[0] in set(entities[S.TITLE]) and len(relationships) == 1
        assert clause_rows.empty


def test_unit_vectors_are_compared_by_cosine() -> None:
    # the description evidence normalizes: a long vector is as close as a short one
    rows = (("Okafor", "person", ["u1"], "x"), ("Mara Okafor", "person", ["u2"], "y"))
    vectors = {"Okafor": list(np.array([10.0, 1.0, 0.0])), "Mara Okafor": [1.0, 0.0, 0.0]}
    assert merged(table(*rows, vectors=vectors)) == {"Okafor": "Mara Okafor"}
