"""Traceable answers: an answer's [n] resolve to the file, character span and sentence a person
can open, over the demo index's recorded answers, and the CLI prints that numbered list."""

from __future__ import annotations

import pandas as pd
from conftest import DEMO_DOCS

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.base import Answer
from graphrag.query.citations import (
    Tracer,
    _span,
    citations_frame,
    citing_sentences,
    source_list,
)
from graphrag.query.registry import make_methods
from graphrag.settings import REPO_ROOT
from graphrag.text import tokens

QUESTIONS = pd.read_json(REPO_ROOT / "data/kestrel_bay/questions.jsonl", lines=True).set_index("id")


def _answer(demo_index: Index, settings, embedder, method: str, qid: str) -> Answer:
    made = make_methods(demo_index, [method], settings, ChatLLM(settings), embedder)[method]
    return made.answer(QUESTIONS.loc[qid, "question"])


def test_a_recorded_citation_resolves_to_a_file_a_span_and_the_sentence(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    # q04's recorded DRIFT answer cites [1]: the first intermediate answer it ranked
    answer = _answer(demo_index, replay_settings, replay_embedder, "drift", "q04")
    assert "[1]" in answer.text
    citations = Tracer(demo_index).trace(answer)
    first = citations[0]
    assert first.number == 1 and first.cited and first.places
    documents = demo_index.documents.set_index(S.ID)
    for place in first.places:
        assert (DEMO_DOCS / f"{place.document}.md").exists()
        text = documents.at[place.document, S.TEXT]
        assert place.snippet in text[place.start : place.end]  # the span holds the sentence
    # the sentence nearest the claim names the councillor the answer names
    assert "Marsh" in first.places[0].snippet
    assert set(answer.cited) <= {s for c in citations if c.cited for s in c.sources}
    assert [c.number for c in citations if not c.cited] == [n for n in answer.numbered if n != 1], (
        "then every other number the prompt showed, in its order"
    )


def test_every_number_of_a_naive_answer_is_a_text_unit_span_of_its_file(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    answer = _answer(demo_index, replay_settings, replay_embedder, "naive", "q01")
    citations = Tracer(demo_index).trace(answer)
    assert [c.number for c in citations] == list(range(1, len(answer.contexts) + 1))
    units = demo_index.text_units.set_index(S.ID)
    documents = demo_index.documents.set_index(S.ID)
    for citation, context in zip(citations, answer.contexts, strict=True):
        (place,) = citation.places
        assert units.at[place.text_unit, S.TEXT] == context
        assert documents.at[place.document, S.TEXT][place.start : place.end] == context
        assert place.file.endswith(f"{place.document}.md")
    frame = citations_frame(citations)
    assert list(frame["number"]) == [c.number for c in citations]


def test_graph_sources_are_traced_through_their_text_units(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    answer = _answer(demo_index, replay_settings, replay_embedder, "local", "q01")
    citations = Tracer(demo_index).trace(answer)
    entity = next(c for c in citations if c.sources[0].startswith("entity:"))
    entity_id = entity.sources[0].partition(":")[2]
    row_units = set(demo_index.entities.set_index(S.ID).at[entity_id, S.TEXT_UNIT_IDS])
    assert entity.places and {p.text_unit for p in entity.places} <= row_units
    assert all(p.via == entity.sources[0] for p in entity.places)


def test_a_number_never_in_the_prompt_is_named_not_dropped(demo_index: Index) -> None:
    unit = demo_index.text_units[S.ID].iloc[0]
    answer = Answer(
        "q", "naive", "Founded in 1998 [1]. It has a ship [7].", ["x"], [f"text_unit:{unit}"]
    )
    answer.numbered = {1: [f"text_unit:{unit}"]}
    citations = Tracer(demo_index).trace(answer)
    assert [(c.number, c.cited, c.note) for c in citations] == [
        (1, True, ""),
        (7, True, "cited but not in the prompt"),
    ]
    assert "[7]* cited but not in the prompt" in source_list(citations)


def test_citing_sentences_reads_grouped_markers_in_chinese() -> None:
    found = citing_sentences("研究所成立于1998年[1]。它由两家机构创办[2, 3]。")
    assert found == {1: "研究所成立于1998年。", 2: "它由两家机构创办。", 3: "它由两家机构创办。"}


def test_a_chunk_cut_inside_a_character_still_gets_its_span() -> None:
    document = "Horseshoe crabs gather at the 🦀🦑 reef, said the survey."
    ids = tokens.encode(document)
    # a chunk that starts inside an emoji's bytes decodes with U+FFFD: the text search fails
    cut = next(k for k in range(len(ids)) if "\ufffd" in tokens.decode(ids[k:]))
    chunk = tokens.decode(ids[cut:])
    assert document.find(chunk) < 0
    start, end = _span(document, chunk, cut)
    # the span starts at the character the chunk begins inside and runs to the chunk's end
    assert document[start:].startswith("🦀🦑 reef") and end == len(document)
