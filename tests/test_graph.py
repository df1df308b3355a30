"""Merging mentions into entities and relationships, summaries, the graph and degrees."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import FakeLLM, Reply

from graphrag import schemas as S
from graphrag.index.extract.stage import ENTITY_COLUMNS, RELATIONSHIP_COLUMNS
from graphrag.index.graph import merge
from graphrag.index.graph.merge import (
    add_degrees,
    build_graph,
    entity_edges,
    merge_entities,
    merge_relationships,
    node_degrees,
    summarize_entities,
)


def entity_mentions(*rows: tuple[str, str, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=ENTITY_COLUMNS)


def relationship_mentions(*rows: tuple[str, str, str, int, str]) -> pd.DataFrame:
    return pd.DataFrame(
        [(s, t, s.lower(), t.lower(), d, w, u) for s, t, d, w, u in rows],
        columns=RELATIONSHIP_COLUMNS,
    )


MENTIONS = entity_mentions(
    ("KBMI", "kbmi", "organization", "A research centre.", "u1"),
    ("Kbmi", "kbmi", "unknown", "", "u2"),
    ("KBMI", "kbmi", "geo", "A research centre.", "u3"),
    ("KBMI", "kbmi", "geo", "Founded in 1998.", "u3"),
    ("Kbmi", "kbmi", "organization", "Based in Port Aldry.", "u4"),
    ("Okafor", "okafor", "person", "Director.", "u2"),
    ("Port Aldry", "port aldry", "unknown", "", "u4"),
)


def test_merge_entities() -> None:
    entities = merge_entities(MENTIONS).set_index(S.NAME_KEY)
    assert list(entities.index) == ["kbmi", "okafor", "port aldry"]
    kbmi = entities.loc["kbmi"]
    assert kbmi[S.TITLE] == "KBMI"  # 3 of 5 mentions
    assert kbmi[S.TYPE] == "organization"  # 2 organization vs 2 geo: the first seen wins
    assert kbmi["descriptions"] == [
        "A research centre.",
        "Founded in 1998.",
        "Based in Port Aldry.",
    ]
    assert kbmi[S.TEXT_UNIT_IDS] == ["u1", "u2", "u3", "u4"]
    assert kbmi[S.FREQUENCY] == 4
    assert entities.loc["port aldry", S.TYPE] == "unknown"
    assert entities.loc["port aldry", "descriptions"] == []
    assert entities.loc["okafor", S.FREQUENCY] == 1
    assert entities[S.ID].is_unique
    # ids depend on the key only: stable across runs and mention order
    reordered = merge_entities(MENTIONS.iloc[::-1]).set_index(S.NAME_KEY)
    assert reordered[S.ID].to_dict() == entities[S.ID].to_dict()


def test_most_frequent_type_ignores_unknown() -> None:
    mentions = entity_mentions(
        ("A", "a", "unknown", "", "u1"),
        ("A", "a", "unknown", "", "u2"),
        ("A", "a", "event", "x", "u3"),
    )
    assert merge_entities(mentions)[S.TYPE].tolist() == ["event"]


def test_merge_relationships_merges_undirected_pairs() -> None:
    entities = merge_entities(
        entity_mentions(
            ("Alpha", "alpha", "person", "a", "u1"),
            ("Beta", "beta", "person", "b", "u1"),
            ("Gamma", "gamma", "geo", "c", "u2"),
        )
    )
    mentions = relationship_mentions(
        ("Beta", "Alpha", "works with", 3, "u1"),
        ("Alpha", "Beta", "works with", 4, "u2"),
        ("Alpha", "Beta", "married", 2, "u2"),
        ("Alpha", "Gamma", "lives in", 5, "u3"),
    )
    relationships = merge_relationships(mentions, entities)
    assert len(relationships) == 2
    id_of = dict(zip(entities[S.NAME_KEY], entities[S.ID], strict=True))
    pair = relationships.iloc[0]
    assert (pair[S.SOURCE_ENTITY], pair[S.TARGET_ENTITY]) == ("Beta", "Alpha")  # first stated
    assert (pair["source_id"], pair["target_id"]) == (id_of["beta"], id_of["alpha"])
    assert pair[S.WEIGHT] == 9.0
    assert pair[S.DESCRIPTION] == "works with; married"
    assert pair[S.TEXT_UNIT_IDS] == ["u1", "u2"]
    other = relationships.iloc[1]
    assert (other[S.SOURCE_ENTITY], other[S.TARGET_ENTITY], other[S.WEIGHT]) == (
        "Alpha",
        "Gamma",
        5.0,
    )
    assert relationships[S.ID].is_unique
    flipped = merge_relationships(mentions.iloc[[1, 0, 2, 3]], entities)
    assert flipped[S.ID].tolist() == relationships[S.ID].tolist()  # id of the unordered pair


def test_summaries_only_for_entities_with_several_descriptions(
    fake_llm: FakeLLM, make_llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    entities = pd.DataFrame(
        {
            S.ID: ["e1", "e2", "e3", "e4", "e5"],
            S.TITLE: ["One", "Two", "Three", "None", "Broken"],
            "descriptions": [["only"], ["first", "second"], ["a", "b", "c"], [], ["x", "y"]],
        }
    )

    def reply(body: dict) -> str | Reply:
        entity = body["messages"][-1]["content"].splitlines()[0].removeprefix("Entity: ")
        if entity == "Broken":
            return Reply("bad request", status=400)
        return f"  Merged {entity}.  "

    fake_llm.respond_with(reply)
    # threshold 0: every entity with several descriptions is summarized, however short
    monkeypatch.setattr(merge, "SUMMARY_MAX_TOKENS", 33)
    llm = make_llm(index={"summary_threshold_tokens": 0})
    result, errors = summarize_entities(entities, llm, llm.settings.index, False)
    assert fake_llm.calls == 3
    asked = sorted(b["messages"][-1]["content"].splitlines()[0] for b in fake_llm.requests)
    assert asked == ["Entity: Broken", "Entity: Three", "Entity: Two"]
    assert {b["max_tokens"] for b in fake_llm.requests} == {33}
    assert "- b\n- c" in next(
        b["messages"][-1]["content"] for b in fake_llm.requests if "Three" in str(b)
    )
    assert result[S.DESCRIPTION].tolist() == [
        "only",
        "Merged Two.",
        "Merged Three.",
        "",
        "x y",  # a failed summary keeps the facts
    ]
    assert "descriptions" not in result.columns
    assert "descriptions" in entities.columns  # the input is not modified
    # the failed summary is an errors row, so the next run asks again
    assert errors[S.STAGE].tolist() == ["summarize"] and errors[S.ITEM_ID].tolist() == ["e5"]
    assert "400" in errors[S.ERROR].iloc[0]


def test_build_graph_and_degrees() -> None:
    entities = pd.DataFrame(
        {
            S.ID: ["hub", "a", "b", "c", "alone"],
            S.TITLE: ["Hub", "A", "B", "C", "Alone"],
            S.TYPE: ["organization"] * 5,
            S.DESCRIPTION: ["h", "a", "b", "c", "x"],
        }
    )
    relationships = pd.DataFrame(
        {
            S.ID: ["r1", "r2", "r3", "r4"],
            "source_id": ["hub", "hub", "c", "a"],
            "target_id": ["a", "b", "hub", "b"],
            S.WEIGHT: [1.0, 2.0, 3.0, 4.0],
            S.DESCRIPTION: ["x"] * 4,
        }
    )
    graph = build_graph(entities, relationships)
    assert set(graph.nodes) == {"hub", "a", "b", "c", "alone"}
    assert graph.number_of_edges() == 4
    assert graph.edges["b", "a"]["weight"] == 4.0 and graph.edges["a", "b"]["id"] == "r4"
    assert graph.nodes["hub"]["title"] == "Hub"

    edges = entity_edges(entities, relationships)
    assert edges == [(a, b, w) for a, b, w in graph.edges(data="weight")], "networkx's order"
    degrees = node_degrees(entities, edges)
    assert degrees == dict(graph.degree())
    with_degree, rel_degree = add_degrees(entities, relationships, degrees)
    assert dict(zip(with_degree[S.ID], with_degree[S.DEGREE], strict=True)) == {
        "hub": 3,
        "a": 2,
        "b": 2,
        "c": 1,
        "alone": 0,
    }
    assert rel_degree[S.COMBINED_DEGREE].tolist() == [5, 5, 4, 4]
    assert with_degree[S.HUMAN_ID].tolist() == [0, 1, 2, 3, 4]
    assert list(with_degree.columns[:2]) == [S.ID, S.HUMAN_ID]
    assert S.DEGREE not in entities.columns  # inputs untouched
