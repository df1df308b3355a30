"""Extraction quality against a gold graph: entity recall/precision, relationship recall, names
matched by the merge's keys and the gold aliases."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import name_key


class GoldGraphError(ValueError):
    """The gold graph file is malformed; the message names the file and entry."""


@dataclass
class ExtractionQuality:
    entity_recall: float
    entity_precision: float
    relationship_recall: float
    gold_entities: int
    extracted_entities: int
    gold_relationships: int
    missed_entities: list[str] = field(default_factory=list)
    unmatched_extracted: list[str] = field(default_factory=list)
    missed_relationships: list[tuple[str, str]] = field(default_factory=list)
    duplicate_matches: int = 0

    def render(self) -> str:
        found_relationships = self.gold_relationships - len(self.missed_relationships)
        found = self.gold_entities - len(self.missed_entities)
        duplicates = (
            f"; {self.duplicate_matches} more matched an already-matched gold entity"
            if self.duplicate_matches
            else ""
        )
        return (
            f"entity recall {self.entity_recall:.2f} ({found}/{self.gold_entities}), "
            f"entity precision {self.entity_precision:.2f} "
            f"({found} distinct gold entities/{self.extracted_entities} extracted{duplicates}), "
            "relationship recall "
            f"{self.relationship_recall:.2f} ({found_relationships}/{self.gold_relationships})"
        )


def load_gold_graph(path: str | Path) -> dict:
    path = Path(path)
    try:
        gold = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GoldGraphError(f"gold graph {path}: {err}") from err
    names = set()
    for i, entity in enumerate(gold.get("entities", [])):
        if not isinstance(entity, dict) or not entity.get("name"):
            raise GoldGraphError(f"gold graph {path}: entities[{i}] has no name")
        names.add(entity["name"])
    for i, rel in enumerate(gold.get("relationships", [])):
        if rel.get("source") not in names or rel.get("target") not in names:
            raise GoldGraphError(
                f"gold graph {path}: relationships[{i}] names an entity that is not in entities"
            )
    return gold


def gold_keys(gold: dict) -> dict[str, str]:
    """Return the gold entity each name key names (its name's and its aliases')."""
    gold_of_key: dict[str, str] = {}
    for entity in gold["entities"]:
        for surface in [entity["name"], *entity.get("aliases", [])]:
            gold_of_key.setdefault(name_key(surface), entity["name"])
    return gold_of_key


def extraction_quality(
    entities: pd.DataFrame, relationships: pd.DataFrame, gold: dict
) -> ExtractionQuality:
    """Return how well the extracted tables cover the gold graph."""
    gold_of_key = gold_keys(gold)
    matched_gold_of_id = {}
    unmatched = []
    for row in entities.itertuples(index=False):
        match = gold_of_key.get(name_key(getattr(row, S.TITLE)))
        if match:
            matched_gold_of_id[getattr(row, S.ID)] = match
        else:
            unmatched.append(getattr(row, S.TITLE))
    found = set(matched_gold_of_id.values())
    gold_names = [e["name"] for e in gold["entities"]]
    pairs = {
        frozenset((matched_gold_of_id.get(s), matched_gold_of_id.get(t)))
        for s, t in zip(relationships[S.SOURCE_ID], relationships[S.TARGET_ID], strict=True)
    }
    gold_pairs = [(r["source"], r["target"]) for r in gold["relationships"]]
    missed_pairs = [p for p in gold_pairs if frozenset(p) not in pairs]
    n_extracted = len(entities)
    return ExtractionQuality(
        entity_recall=len(found) / len(gold_names) if gold_names else 0.0,
        entity_precision=len(found) / n_extracted if n_extracted else 0.0,
        relationship_recall=(1 - len(missed_pairs) / len(gold_pairs)) if gold_pairs else 0.0,
        gold_entities=len(gold_names),
        extracted_entities=n_extracted,
        gold_relationships=len(gold_pairs),
        missed_entities=[n for n in gold_names if n not in found],
        unmatched_extracted=unmatched,
        missed_relationships=missed_pairs,
        duplicate_matches=len(matched_gold_of_id) - len(found),
    )
