"""Extraction quality against a gold graph: alias-aware matching, exact numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO_DOCS

from graphrag import schemas as S
from graphrag.index.extract.quality import GoldGraphError, extraction_quality, load_gold_graph

GOLD = {
    "entities": [
        {"name": "Kestrel Bay Marine Institute", "type": "organization", "aliases": ["KBMI"]},
        {"name": "Mara Okafor", "type": "person", "aliases": ["Okafor"]},
        {"name": "Port Aldry", "type": "geo"},
        {"name": "KelpSense", "type": "technology"},
    ],
    "relationships": [
        {"source": "Mara Okafor", "target": "Kestrel Bay Marine Institute"},
        {"source": "Kestrel Bay Marine Institute", "target": "Port Aldry"},
        {"source": "Kestrel Bay Marine Institute", "target": "KelpSense"},
    ],
}


def frames(titles: list[str], pairs: list[tuple[int, int]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    entities = pd.DataFrame({S.ID: [f"e{i}" for i in range(len(titles))], S.TITLE: titles})
    relationships = pd.DataFrame(
        {"source_id": [f"e{a}" for a, _ in pairs], "target_id": [f"e{b}" for _, b in pairs]}
    )
    return entities, relationships


def test_aliases_and_normal_forms_match() -> None:
    entities, relationships = frames(
        [
            "KBMI",  # alias
            "the Kestrel Bay Marine Institute",  # normal form of the name: the same gold entity
            "Director Mara Okafor",  # honorific dropped
            "Saltmere University",  # not in the gold graph
            "port aldry.",  # case and punctuation
        ],
        [(2, 0), (4, 1), (3, 4)],  # Okafor-KBMI (reversed), Port Aldry-KBMI, an extra pair
    )
    quality = extraction_quality(entities, relationships, GOLD)
    assert quality.gold_entities == 4 and quality.extracted_entities == 5
    assert quality.entity_recall == 3 / 4
    # KBMI and "the Kestrel Bay Marine Institute" are one gold entity: 3 distinct of 5.
    assert quality.entity_precision == 3 / 5
    assert quality.duplicate_matches == 1
    assert quality.missed_entities == ["KelpSense"]
    assert quality.unmatched_extracted == ["Saltmere University"]
    assert quality.gold_relationships == 3
    assert quality.relationship_recall == pytest.approx(2 / 3)
    assert quality.missed_relationships == [("Kestrel Bay Marine Institute", "KelpSense")]
    assert quality.render() == (
        "entity recall 0.75 (3/4), entity precision 0.60 (3 distinct gold entities/5 extracted; "
        "1 more matched an already-matched gold entity), relationship recall 0.67 (2/3)"
    )


def test_three_rows_of_one_gold_entity_are_one_hit() -> None:
    entities, relationships = frames(["Mara Okafor", "Okafor", "Director Mara Okafor"], [])
    quality = extraction_quality(entities, relationships, GOLD)
    assert quality.entity_precision == 1 / 3
    assert quality.duplicate_matches == 2
    assert quality.entity_recall == 1 / 4


def test_surname_alias_and_a_perfect_extraction() -> None:
    entities, relationships = frames(
        ["Okafor", "Kestrel Bay Marine Institute", "Port Aldry", "KelpSense"],
        [(0, 1), (1, 2), (3, 1)],
    )
    quality = extraction_quality(entities, relationships, GOLD)
    assert (quality.entity_recall, quality.entity_precision, quality.relationship_recall) == (
        1.0,
        1.0,
        1.0,
    )
    assert quality.missed_entities == quality.unmatched_extracted == []


def test_nothing_extracted() -> None:
    entities, relationships = frames([], [])
    quality = extraction_quality(entities, relationships, GOLD)
    assert (quality.entity_recall, quality.entity_precision, quality.relationship_recall) == (
        0.0,
        0.0,
        0.0,
    )
    assert len(quality.missed_relationships) == 3


def test_unmatched_endpoints_do_not_count_as_relationships() -> None:
    entities, relationships = frames(["Mara Okafor", "Someone Else", "Another"], [(1, 2), (0, 1)])
    quality = extraction_quality(entities, relationships, GOLD)
    assert quality.relationship_recall == 0.0
    assert quality.entity_precision == 1 / 3


def test_demo_gold_graph_loads() -> None:
    gold = load_gold_graph(DEMO_DOCS.parent / "gold_graph.json")
    assert len(gold["entities"]) == 28
    assert len(gold["relationships"]) == 60


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ({"entities": [{"type": "person"}]}, r"entities\[0\] has no name"),
        (
            {"entities": [{"name": "A"}], "relationships": [{"source": "A", "target": "B"}]},
            r"relationships\[0\] names an entity that is not in entities",
        ),
    ],
)
def test_malformed_gold_graph_is_named(tmp_path: Path, gold: dict, message: str) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(gold))
    with pytest.raises(GoldGraphError, match=message) as info:
        load_gold_graph(path)
    assert str(path) in str(info.value)
    path.write_text("{broken")
    with pytest.raises(GoldGraphError, match=str(path)):
        load_gold_graph(path)
