"""Alias and acronym merging (index/aliases.py): the rules on small texts, KBMI on the demo's
recorded extraction, and the merges it must not make on MuSiQue's Wikipedia paragraphs."""

from __future__ import annotations

import itertools
import re

import pandas as pd
import pytest
from conftest import REPO_ROOT, UNPACKED, FakeLLM, chunk_text, indexing_model, report_reply
from test_graph import entity_mentions, relationship_mentions

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.extract.nlp import extract_graph_nlp
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.graph.aliases import (
    ALIAS_SELF_LOOP,
    definitions,
    find_alias_pairs,
    initials_fit,
    is_acronym,
    merge_alias_mentions,
)
from graphrag.index.graph.merge import merge_entities, merge_relationships
from graphrag.index.graph.sentence_edges import add_sentence_edges
from graphrag.index.incremental import update_index
from graphrag.index.pipeline import build_index
from graphrag.index.stages import IndexContext, graph_stage
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM
from graphrag.text.documents import chunk_documents, load_documents
from studies.json_extraction import to_records

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
    """The graph stage (a fake model writes the summaries) against the same mentions merged
    without the alias step: one Kestrel Bay Marine Institute node holding KBMI's chunks and
    neighbours; gold recall kept."""
    entity, relationship, units = demo_mentions
    fake_llm.respond_with(indexing_model)
    tables = {
        "text_units": units,
        "entity_mentions": entity,
        "relationship_mentions": relationship,
        "dropped": pd.DataFrame(columns=S.DROPPED_COLUMNS),
        "errors": pd.DataFrame(columns=S.ERROR_COLUMNS),
    }
    llm = make_llm()
    after = graph_stage(tables, IndexContext(llm.settings, llm, embedder=None))
    entities = merge_entities(entity, by_frequency=True)
    edges = merge_relationships(relationship, entities, keep_descriptions=True)
    max_entities = llm.settings.index.sentence_edges_max_entities
    edges = add_sentence_edges(edges, entities, entity, units, max_entities)
    before = {"entities": entities, "relationships": edges}
    results = {False: before, True: after}
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


# --------------------------------------------------------------------------- whole index

NAMES = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b|\b[A-Z]{2,}\b")
ALIAS_DOCS = {
    "a_profile.md": "Kestrel Bay Marine Institute (KBMI) hired Mara Okafor in 2011.",
    "b_seals.md": "In 2019 KBMI tagged 40 seals near Gull Point with Owen Brask.",
}


def acronym_model(body: dict) -> str:
    """The test indexing model, reading acronyms as names too, answering the indexing prompts."""
    system = body["messages"][0]["content"]
    if system.startswith("You build a knowledge graph"):
        names = list(dict.fromkeys(NAMES.findall(chunk_text(body))))
        return to_records(
            {
                "entities": [
                    {"name": n, "type": "organization", "description": f"{n} is named."}
                    for n in names
                ],
                "relationships": [
                    {"source": a, "target": b, "description": "appear together", "strength": 3}
                    for a, b in itertools.pairwise(names)
                ],
            }
        )
    if system.startswith("You write a report"):
        return report_reply(body["messages"][1]["content"].removeprefix("Data:\n"))
    return indexing_model(body)


def test_an_update_merges_aliases_as_a_full_build_does(
    tmp_path, fake_llm: FakeLLM, make_settings, replay_embedder
) -> None:
    fake_llm.respond_with(acronym_model)
    # one extraction call per chunk; an LLM report for every community
    settings = make_settings(fake_llm.base_url, index={**UNPACKED, "min_report_entities": 0})
    llm = ChatLLM(settings)
    folders = {}
    for name, files in (("full", ALIAS_DOCS), ("first", dict(list(ALIAS_DOCS.items())[:1]))):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        for file, text in files.items():
            (folders[name] / file).write_text(text)
    second = tmp_path / "second"
    second.mkdir()
    (second / "b_seals.md").write_text(ALIAS_DOCS["b_seals.md"])

    build_index(folders["full"], tmp_path / "full_index", settings, llm, replay_embedder, False)
    build_index(folders["first"], tmp_path / "updated", settings, llm, replay_embedder, False)
    update_index(tmp_path / "updated", settings, llm, replay_embedder, add=second)

    full, updated = load_index(tmp_path / "full_index"), load_index(tmp_path / "updated")
    titles = set(full.entities[S.TITLE])
    assert "Kestrel Bay Marine Institute" in titles and "KBMI" not in titles
    assert set(full.entities[S.TITLE]) == set(updated.entities[S.TITLE])
    assert set(full.relationships[S.ID]) == set(updated.relationships[S.ID])
    institute = full.entities.set_index(S.TITLE).loc["Kestrel Bay Marine Institute"]
    assert len(institute[S.TEXT_UNIT_IDS]) == 2  # both documents' chunks
    for index in (full, updated):
        assert index.dropped[S.REASON].tolist().count(ALIAS_SELF_LOOP) == 1
    assert (full.community_reports[S.CONTEXT_SOURCE] != "template").all()
