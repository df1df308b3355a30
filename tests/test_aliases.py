"""Alias and acronym merging (index/aliases.py): the rules on small texts, KBMI on the demo's
recorded extraction, and the merges it must not make on MuSiQue's Wikipedia paragraphs."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import REPO_ROOT, FakeLLM, indexing_model
from test_graph import entity_mentions, relationship_mentions

from graphrag.documents import chunk_documents, load_documents
from graphrag.index import schemas as S
from graphrag.index.aliases import (
    ALIAS_SELF_LOOP,
    definitions,
    find_alias_pairs,
    initials_fit,
    is_acronym,
    merge_alias_mentions,
)
from graphrag.index.extract import name_key
from graphrag.index.nlp_extract import extract_graph_nlp
from graphrag.index.pipeline import IndexContext, graph_stage
from graphrag.index.quality import extraction_quality, load_gold_graph

KBMI, LONG = "kbmi", "kestrel bay marine institute"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The Kestrel Bay Marine Institute (KBMI) studies kelp.",
            ("KBMI", "Kestrel Bay Marine Institute", "long (abbr)"),
        ),
        (
            "Funding came from NOAA (National Oceanic and Atmospheric Administration).",
            ("NOAA", "National Oceanic and Atmospheric Administration", "abbr (long)"),
        ),
        (
            "He joined NASA, the National Aeronautics and Space Administration, in 1962.",
            ("NASA", "National Aeronautics and Space Administration", "abbr, the long"),
        ),
        ("The Department of Energy (DOE) said so.", ("DOE", "Department of Energy", "long (abbr)")),
    ],
)
def test_definitions(text: str, expected: tuple[str, str, str]) -> None:
    assert definitions(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Port Aldry (population 4,200) is small.",  # not an acronym
        "The council met in Gull Point (GP2) last year.",  # the letters do not fit
        "Tidewell Aquaculture (TW) grew kelp.",  # nor here
        "KBMI (see above) and OK (Oklahoma) differ.",  # one-word long names
    ],
)
def test_definitions_need_fitting_initials(text: str) -> None:
    assert definitions(text) == []


def test_acronyms_and_initials() -> None:
    assert is_acronym("KBMI") and is_acronym("U.S") and is_acronym("BoE")
    assert not is_acronym("Mara") and not is_acronym("KelpSense") and not is_acronym("A")
    assert initials_fit("KBMI", "Kestrel Bay Marine Institute")
    assert initials_fit("KBMI", "The Kestrel Bay Marine Institute")
    assert initials_fit("DOE", "Department of Energy") and initials_fit(
        "DE", "Department of Energy"
    )
    assert not initials_fit("KBMI", "Kestrel Bay")
    assert not initials_fit("K", "Kestrel")


def mentions_and_units(texts: dict[str, str], names: dict[str, list[str]]):
    """Entity mentions of ``names`` ({unit: names}) over text units ``texts`` ({unit: text})."""
    rows = [
        (n, name_key(n), "organization", f"{n} in {u}.", u) for u, ns in names.items() for n in ns
    ]
    units = pd.DataFrame({S.ID: list(texts), S.TEXT: list(texts.values())})
    return entity_mentions(*rows), units


def test_an_acronym_two_names_could_stand_for_is_left_alone() -> None:
    mentions, units = mentions_and_units(
        {"u1": "AB signed with Acme Bank and Alpha Beta."},
        {"u1": ["AB", "Acme Bank", "Alpha Beta"]},
    )
    assert find_alias_pairs(mentions, units) == []


def test_an_acronym_mostly_used_without_the_long_name_is_left_alone() -> None:
    mentions, units = mentions_and_units(
        {
            "u1": "Bogota is the Distrito Capital, shortened DC.",
            "u2": "The comic was published by DC.",
            "u3": "DC also published the sequel.",
        },
        {"u1": ["DC", "Distrito Capital"], "u2": ["DC"], "u3": ["DC"]},
    )
    assert find_alias_pairs(mentions, units) == []
    # when most of its chunks name the long name too, it is merged
    mentions, units = mentions_and_units(
        {"u1": "Distrito Capital, shortened DC.", "u2": "DC, the Distrito Capital, grew."},
        {"u1": ["DC", "Distrito Capital"], "u2": ["DC", "Distrito Capital"]},
    )
    assert [(p.alias, p.canonical) for p in find_alias_pairs(mentions, units)] == [
        ("dc", "distrito capital")
    ]


def test_merging_rewrites_keys_titles_and_drops_the_alias_self_loop() -> None:
    mentions, _ = mentions_and_units({}, {"u1": ["Kestrel Bay Marine Institute"], "u2": ["KBMI"]})
    relationships = relationship_mentions(
        ("KBMI", "Mara Okafor", "led by", 5, "u2"),
        ("KBMI", "Kestrel Bay Marine Institute", "same thing", 5, "u1"),
    )
    relationships[S.SOURCE_KEY] = relationships[S.SOURCE_ENTITY].map(name_key)
    relationships[S.TARGET_KEY] = relationships[S.TARGET_ENTITY].map(name_key)
    (pair,) = find_alias_pairs(
        mentions,
        pd.DataFrame(
            {S.ID: ["u1", "u2"], S.TEXT: ["Kestrel Bay Marine Institute (KBMI).", "KBMI."]}
        ),
    )
    entities, edges, dropped = merge_alias_mentions(mentions, relationships, [pair])
    assert set(entities[S.NAME_KEY]) == {LONG}
    assert set(entities[S.TITLE]) == {"Kestrel Bay Marine Institute"}
    assert edges[[S.SOURCE_KEY, S.TARGET_KEY]].values.tolist() == [[LONG, "mara okafor"]]
    assert dropped[S.REASON].tolist() == [ALIAS_SELF_LOOP]
    assert dropped.columns.tolist() == S.DROPPED_COLUMNS


# --------------------------------------------------------------------------- real data


def test_kbmi_is_the_one_merge_on_the_demo(demo_mentions) -> None:
    entity, relationship, units = demo_mentions
    pairs = find_alias_pairs(entity, units)
    assert [(p.alias, p.canonical, p.rule) for p in pairs] == [(KBMI, LONG, "long (abbr)")]
    merged, edges, _ = merge_alias_mentions(entity, relationship, pairs)
    assert KBMI not in set(merged[S.NAME_KEY])
    assert KBMI not in set(edges[S.SOURCE_KEY]) | set(edges[S.TARGET_KEY])
    kbmi_units = set(entity.loc[entity[S.NAME_KEY] == KBMI, S.TEXT_UNIT_ID])
    long_units = set(merged.loc[merged[S.NAME_KEY] == LONG, S.TEXT_UNIT_ID])
    assert kbmi_units and kbmi_units <= long_units
    kbmi_descriptions = set(entity.loc[entity[S.NAME_KEY] == KBMI, S.DESCRIPTION])
    assert kbmi_descriptions <= set(merged.loc[merged[S.NAME_KEY] == LONG, S.DESCRIPTION])


def test_graph_stage_merges_kbmi_before_communities(
    demo_mentions, fake_llm: FakeLLM, make_llm
) -> None:
    """The graph stage under ``index.merge_aliases`` (a fake model writes the summaries): one
    Kestrel Bay Marine Institute node holding KBMI's chunks and neighbours; gold recall kept."""
    entity, relationship, units = demo_mentions
    fake_llm.respond_with(indexing_model)
    tables = {
        "text_units": units,
        "entity_mentions": entity,
        "relationship_mentions": relationship,
        "dropped": pd.DataFrame(columns=S.DROPPED_COLUMNS),
        "errors": pd.DataFrame(columns=S.ERROR_COLUMNS),
    }
    results = {}
    for merge in (False, True):
        llm = make_llm(index={"merge_aliases": merge})
        results[merge] = graph_stage(tables, IndexContext(llm.settings, llm, embedder=None))
    before, after = results[False], results[True]
    titles = set(after["entities"][S.TITLE])
    assert "KBMI" in set(before["entities"][S.TITLE]) and "KBMI" not in titles
    assert len(after["entities"]) == len(before["entities"]) - 1
    institute = after["entities"].set_index(S.TITLE).loc["Kestrel Bay Marine Institute"]
    old = before["entities"].set_index(S.TITLE)
    assert set(institute[S.TEXT_UNIT_IDS]) == set(
        old.loc["KBMI", S.TEXT_UNIT_IDS] + old.loc["Kestrel Bay Marine Institute", S.TEXT_UNIT_IDS]
    )
    edges = after["relationships"]
    assert not (edges[S.SOURCE_ENTITY].eq("KBMI") | edges[S.TARGET_ENTITY].eq("KBMI")).any()
    gold = load_gold_graph(REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json")
    quality = {
        m: extraction_quality(r["entities"], r["relationships"], gold) for m, r in results.items()
    }
    assert quality[True].entity_recall == quality[False].entity_recall
    assert quality[True].relationship_recall == quality[False].relationship_recall
    assert quality[True].duplicate_matches == quality[False].duplicate_matches - 1


@pytest.fixture(scope="module")
def musique_mentions(replay_settings):
    """MuSiQue's names from the LLM-free extractor, with its own acronym aliasing undone."""
    documents = load_documents(REPO_ROOT / "data" / "musique" / "docs", 200_000).documents
    units = chunk_documents(documents, 600, 100)
    entity, _, _, _ = extract_graph_nlp(units, replay_settings.index)
    return entity.assign(**{S.NAME_KEY: entity[S.TITLE].map(name_key)}), units


MUST_NOT_MERGE = [
    ("dc", "distrito capital"),  # "DC Comics" in the other chunk that says DC
    ("uk", "united kingdom"),  # right, but only one of its two chunks names the long form
]


def test_musique_merges_are_few_and_none_of_the_wrong_ones(musique_mentions) -> None:
    entity, units = musique_mentions
    pairs = {(p.alias, p.canonical) for p in find_alias_pairs(entity, units)}
    assert {("us", "united states"), ("nhl", "national hockey league")} <= pairs
    assert not pairs & set(MUST_NOT_MERGE)
    assert len(pairs) <= 10  # of 1,600 names: a precise pass merges few
    for alias, canonical in pairs:  # the long name spells the acronym
        title = entity.loc[entity[S.NAME_KEY] == alias, S.TITLE].iloc[0]
        assert initials_fit(title, canonical.title())
