"""Relationships from sentences: a chunk's extracted entities that one short sentence names
together are related (the sentence as description) when the LLM did not relate them; on the
demo's recorded lean extraction this lifts relationship recall on the gold graph."""

from __future__ import annotations

import pandas as pd
from conftest import DEMO_DOCS, RECORDED_CACHE

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.graph.merge import merge_entities, merge_graph_mentions, merge_relationships
from graphrag.index.graph.sentence_edges import add_sentence_edges, named_in
from graphrag.index.stages import IndexContext, chunk_stage, extract_stage
from graphrag.llm.client import ChatLLM
from graphrag.settings import REPO_ROOT, load_settings
from graphrag.text.documents import load_documents
from studies.lean import LEAN_INDEX_SETTINGS

TEXT = (
    "Ilse Varga left KBMI in 2017 to found the Bluewrack Kelp Company at Gull Point. "
    "The Kestrel Bay Marine Institute still monitors the farm. "
    "Mara Okafor directs the Kestrel Bay Marine Institute. "
    "Visitors came from Port Aldry, Gull Point, Corran Island, Saltmere and Kestrel Bay."
)
NAMES = [
    "Ilse Varga",
    "Bluewrack Kelp Company",
    "Gull Point",
    "Kestrel Bay Marine Institute",
    "Kestrel Bay",
    "Mara Okafor",
    "Port Aldry",
    "Corran Island",
    "Saltmere",
]


def tables(llm_pairs: list[tuple[str, str]]):
    mentions = pd.DataFrame(
        {
            S.TITLE: NAMES,
            S.NAME_KEY: [name_key(n) for n in NAMES],
            S.TYPE: ["person"] * len(NAMES),
            S.DESCRIPTION: ["d"] * len(NAMES),
            S.TEXT_UNIT_ID: ["u1"] * len(NAMES),
        }
    )
    relationship_mentions = pd.DataFrame(
        {
            S.SOURCE_KEY: [name_key(a) for a, _ in llm_pairs],
            S.TARGET_KEY: [name_key(b) for _, b in llm_pairs],
            S.DESCRIPTION: ["directs"] * len(llm_pairs),
            S.STRENGTH: [9] * len(llm_pairs),
            S.TEXT_UNIT_ID: ["u1"] * len(llm_pairs),
        }
    )
    entities = merge_entities(mentions)
    units = pd.DataFrame({S.ID: ["u1"], S.TEXT: [TEXT]})
    return merge_relationships(relationship_mentions, entities), entities, mentions, units


def pairs(relationships: pd.DataFrame) -> set[frozenset[str]]:
    return {
        frozenset(p)
        for p in zip(relationships[S.SOURCE_ENTITY], relationships[S.TARGET_ENTITY], strict=True)
    }


def test_a_name_inside_a_longer_name_is_not_a_second_entity_of_the_sentence() -> None:
    names = NAMES
    assert named_in("The Kestrel Bay Marine Institute still monitors the farm.", names) == {
        "Kestrel Bay Marine Institute"
    }
    assert named_in("KBMI studies Kestrel Bay.", names) == {"Kestrel Bay"}


def test_short_sentences_relate_the_pairs_the_llm_left_unrelated() -> None:
    relationships, entities, mentions, units = tables(
        [("Mara Okafor", "Kestrel Bay Marine Institute")]
    )
    out = add_sentence_edges(relationships, entities, mentions, units, max_entities=4)
    added = out.iloc[len(relationships) :]
    assert pairs(added) == {
        frozenset(("Ilse Varga", "Bluewrack Kelp Company")),
        frozenset(("Ilse Varga", "Gull Point")),
        frozenset(("Bluewrack Kelp Company", "Gull Point")),
    }
    # the description is the sentence itself; the LLM's relationship is kept as it was
    assert set(added[S.DESCRIPTION]) == {TEXT.split(". ")[0] + "."}
    assert (added[S.TEXT_UNIT_IDS].map(list) == pd.Series([["u1"]] * 3, index=added.index)).all()
    assert out.iloc[0][S.DESCRIPTION] == "directs" and len(out) == len(relationships) + 3
    # a sentence naming five entities (a list) states no pairwise link
    assert not any("Corran Island" in p for p in pairs(added))


def test_off_or_a_cap_below_two_adds_nothing() -> None:
    relationships, entities, mentions, units = tables([])
    for cap in (0, 1):
        assert add_sentence_edges(relationships, entities, mentions, units, cap).empty


def recall(sentence_edges: int) -> tuple[float, pd.DataFrame, pd.DataFrame]:
    """Relationship recall of the demo's recorded lean extraction on its gold graph."""
    settings = load_settings(
        overrides={
            "index": {**LEAN_INDEX_SETTINGS, "sentence_edges_max_entities": sentence_edges},
            "cache": {"mode": "replay", "path": str(RECORDED_CACHE)},
        }
    )
    llm = ChatLLM(settings)
    try:
        ctx = IndexContext(settings, llm, None, False)
        docs = load_documents(DEMO_DOCS, 200_000, False).documents
        extracted = extract_stage(chunk_stage({"documents": docs}, ctx), ctx)
    finally:
        llm.close()
    entities, relationships, _ = merge_graph_mentions(
        extracted["entity_mentions"],
        extracted["relationship_mentions"],
        extracted["text_units"],
        settings.index,
    )
    gold = load_gold_graph(REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json")
    return (
        extraction_quality(entities, relationships, gold).relationship_recall,
        relationships,
        extracted["text_units"],
    )


def test_on_the_demos_recorded_lean_extraction_recall_reaches_the_default_pipelines() -> None:
    """Issue 13's bar: the lean pipeline's relationship recall at least the JSON pipeline's
    0.53. Every added relationship's description is a sentence of one of its text units."""
    without, _, _ = recall(0)
    with_edges, relationships, units = recall(LEAN_INDEX_SETTINGS["sentence_edges_max_entities"])
    assert without < 0.53 <= with_edges
    text_of = dict(zip(units[S.ID], units[S.TEXT], strict=True))
    added = relationships[relationships[S.WEIGHT] < 2]
    for description, unit_ids in zip(added[S.DESCRIPTION], added[S.TEXT_UNIT_IDS], strict=True):
        if description.endswith("."):
            assert any(description in " ".join(text_of[u].split()) for u in unit_ids)
