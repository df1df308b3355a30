"""Description grounding: a sentence naming what its chunk does not is found, and with
``index.ground_descriptions`` dropped (to the dropped table) before descriptions merge."""

from __future__ import annotations

import shutil

import pandas as pd
from conftest import DEMO_DOCS, UNPACKED, FakeLLM, indexing_model

from graphrag import schemas as S
from graphrag.index.extract.grounding import (
    UNGROUNDED,
    ground_mentions,
    missing_terms,
    sentence_terms,
    split_grounded,
    unsupported_sentences,
)
from graphrag.index.extract.records import parse_records
from graphrag.index.graph.merge import merge_graph_mentions
from graphrag.index.incremental import update_index
from graphrag.index.pipeline import build_index
from graphrag.index.run_summary import grounding_line
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings
from graphrag.text.lang import english
from studies.json_extraction import to_records

HALLUCINATED = "Founded in Cliftonport."  # no demo document names the town


def test_terms_are_names_and_numbers_after_the_first_word() -> None:
    assert sentence_terms("Storm that occurred in Cliftonport on 14 October 2022.") == [
        "Cliftonport",
        "14",
        "October",
        "2022",
    ]
    assert sentence_terms("A group of players.") == []  # a capital first word is no name
    assert sentence_terms("KBMI runs the buoys.") == ["KBMI"]  # an acronym is, even first
    assert sentence_terms("1998 tribute song.") == ["1998"]


def test_a_term_must_be_a_whole_word_of_the_source() -> None:
    source = "The storm hit Portland on 14 October 2022."
    assert missing_terms("Storm in Portland in 2022.", source) == []
    assert missing_terms("Storm in Port Aldry.", source) == ["Port", "Aldry"]  # not "Portland"
    assert missing_terms("It cost 2,400 in October.", "It cost 2,400 then.") == ["October"]


def test_split_keeps_the_supported_sentences_in_order() -> None:
    kept, dropped = split_grounded(
        "Storm that occurred on 14 October 2022. Storm that occurred in Cliftonport. It sank "
        "11 boats.",
        "Storm Corvin tore through on 14 October 2022 and 11 boats sank.",
    )
    assert kept == "Storm that occurred on 14 October 2022. It sank 11 boats."
    assert dropped == ["Storm that occurred in Cliftonport."]


def test_ground_mentions_checks_each_mention_against_its_own_chunk() -> None:
    units = pd.DataFrame(
        {S.ID: ["u1", "u2"], S.TEXT: ["Cliftonport lies north.", "Port Aldry lies south."]}
    )
    mentions = pd.DataFrame(
        {
            S.TITLE: ["Town", "Town"],
            S.DESCRIPTION: ["Town near Cliftonport.", "Town near Cliftonport. Lies south."],
            S.TEXT_UNIT_ID: ["u1", "u2"],
        }
    )
    grounded, dropped = ground_mentions(mentions, units, [S.TITLE])
    assert list(grounded[S.DESCRIPTION]) == ["Town near Cliftonport.", "Lies south."]
    assert list(mentions[S.DESCRIPTION])[1].startswith("Town near")  # the input is unchanged
    assert dropped.to_dict("records") == [
        {
            S.TEXT_UNIT_ID: "u2",
            S.NAME: "Town",
            S.REASON: UNGROUNDED,
            S.DESCRIPTION: "Town near Cliftonport.",
        }
    ]


def test_the_demo_index_holds_only_the_cliftonport_sentences_unsupported(demo_index) -> None:
    table = unsupported_sentences(
        demo_index.entities, demo_index.relationships, demo_index.text_units
    )
    assert len(table) > 100
    bad = table[table["missing"].map(len) > 0]
    assert len(bad) >= 1
    assert all(missing == ["Cliftonport"] for missing in bad["missing"])
    assert not any("cliftonport" in p.read_text().lower() for p in DEMO_DOCS.glob("*.md"))
    # a relationship read from a sentence of the chunk (index/sentence_edges.py) is its source
    copied = table[
        table["sentence"].map(lambda s: any(s in t for t in demo_index.text_units[S.TEXT]))
    ]
    assert len(copied) > 0 and all(copied["missing"].map(len) == 0)


def test_grounded_demo_mentions_merge_without_the_invented_town(demo_mentions) -> None:
    entity, relationship, units = demo_mentions
    settings = IndexSettings(ground_descriptions=True)
    entities, _, dropped = merge_graph_mentions(entity, relationship, units, settings)
    plain, _, _ = merge_graph_mentions(entity, relationship, units, IndexSettings())
    text = " ".join(" ".join(d) for d in entities[S.DESCRIPTIONS])
    assert "Cliftonport" in " ".join(" ".join(d) for d in plain[S.DESCRIPTIONS])
    assert "Cliftonport" not in text
    ungrounded = dropped[dropped[S.REASON] == UNGROUNDED]
    assert len(ungrounded) >= 3 and ungrounded[S.DESCRIPTION].str.contains("Cliftonport").all()
    assert set(entities[S.TITLE]) == set(plain[S.TITLE])  # no entity is lost


def hallucinating_model(body: dict) -> str:
    """The scripted indexing model, with a town no chunk names added to every description."""
    reply = indexing_model(body)
    if not body["messages"][0]["content"].startswith("You build a knowledge graph"):
        return reply
    data = parse_records(reply).extraction()
    for entity in data["entities"]:
        entity["description"] += f" {HALLUCINATED}"
    return to_records(data)


def test_an_update_finds_ungrounded_sentences_again_without_repeating_them(
    tmp_path, fake_llm: FakeLLM, make_settings, replay_embedder, demo_subset
) -> None:
    fake_llm.respond_with(hallucinating_model)
    settings = make_settings(fake_llm.base_url, index={**UNPACKED, "ground_descriptions": True})
    llm = ChatLLM(settings)
    out = tmp_path / "index"
    build_index(demo_subset, out, settings, llm, replay_embedder, progress=False)

    def ungrounded(path) -> pd.DataFrame:
        index = load_index(path)
        assert not index.entities[S.DESCRIPTION].str.contains("Cliftonport").any()
        rows = index.dropped[index.dropped[S.REASON] == UNGROUNDED]
        return rows.sort_values([S.TEXT_UNIT_ID, S.NAME]).reset_index(drop=True)

    before = ungrounded(out)
    # every extracted entity's invented sentence (the fake's descriptions also quote a chunk's
    # first 40 characters, whose cut word the chunk lacks too)
    assert (before[S.DESCRIPTION] == HALLUCINATED).sum() >= 3
    added = tmp_path / "add"
    added.mkdir()
    shutil.copy(DEMO_DOCS / "09_mayoral_election.md", added)
    update_index(out, settings, llm, replay_embedder, add=added)
    grown = ungrounded(out)
    assert not grown.duplicated().any() and len(grown) > len(before)
    update_index(out, settings, llm, replay_embedder, delete=["09_mayoral_election"])
    pd.testing.assert_frame_equal(ungrounded(out), before)


def test_the_run_summary_counts_unsupported_sentences_and_those_dropped(demo_index) -> None:
    counts = demo_index.manifest["summary"]["counts"]
    table = unsupported_sentences(
        demo_index.entities, demo_index.relationships, demo_index.text_units
    )
    assert counts["description_sentences"] == len(table)
    assert counts["unsupported_description_sentences"] == (table["missing"].map(len) > 0).sum()
    assert counts["ungrounded_sentences_dropped"] == 0  # off by default
    assert grounding_line(counts).endswith("(index.ground_descriptions drops them)")
    on = {**counts, "unsupported_description_sentences": 0, "ungrounded_sentences_dropped": 4}
    assert grounding_line(on) == (
        f"description sentences naming a name or number their chunks lack: 0 of "
        f"{len(table)}; 4 more dropped by index.ground_descriptions"
    )


def test_a_chinese_description_splits_into_its_own_sentences() -> None:
    """Sentences end at 。！？ in Chinese (the English rule needs a space and a capital), so
    each sentence of a Chinese description is checked on its own: the grounded one stays.
    (Its terms are still space-separated words: a name glued to Chinese characters is not
    checked yet.)"""
    source = "Sarah Collins在杭州表示，公司看好海洋碳汇市场。"
    description = "Sarah Collins是首席执行官。她在 Cliftonport 工作。"
    assert len(english.sentences(description)) == 1  # the old rule: one sentence, all dropped
    kept, dropped = split_grounded(description, source)
    assert (kept, dropped) == ("Sarah Collins是首席执行官。", ["她在 Cliftonport 工作。"])
