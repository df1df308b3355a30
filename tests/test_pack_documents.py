"""``index.pack_documents_tokens``: short whole documents share one extraction call, each
labelled, and every record goes back to its own document's text unit. Call counts on the
MuSiQue paragraphs (no LLM); provenance on a fake endpoint that answers packed prompts."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from conftest import REPO_ROOT, FakeLLM, Reply, names_in

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.names import mentioned
from graphrag.index.extract.record_calls import pack_text_units
from graphrag.index.extract.stage import NOT_IN_CHUNK, extract_graph
from graphrag.text.documents import chunk_documents, load_documents

MUSIQUE_DOCS = REPO_ROOT / "data" / "musique" / "docs"


@pytest.fixture(scope="module")
def musique_units() -> pd.DataFrame:
    documents = load_documents(MUSIQUE_DOCS, 200_000).documents
    return chunk_documents(documents, 600, 100)


@pytest.mark.parametrize("budget", [300, 600, 1500])
def test_musique_paragraphs_pack_into_far_fewer_calls(musique_units, budget: int) -> None:
    groups = pack_text_units(musique_units, budget)
    assert [i for group in groups for i in group] == list(range(len(musique_units)))
    sizes = [int(musique_units[S.N_TOKENS].iloc[g].sum()) for g in groups]
    assert all(size <= budget for size, group in zip(sizes, groups, strict=True) if len(group) > 1)
    # a pack is closed only when the next paragraph would not fit
    for group, following in zip(groups, groups[1:], strict=False):
        next_tokens = int(musique_units[S.N_TOKENS].iloc[following[0]])
        assert sum(musique_units[S.N_TOKENS].iloc[group]) + next_tokens > budget
    assert len(groups) <= len(musique_units) // 2


def test_musique_call_counts_with_packing_off_and_on(musique_units) -> None:
    assert len(musique_units) == 264  # one paragraph, one chunk, one call each today
    assert len(pack_text_units(musique_units, 600)) == 58


def test_chunks_of_a_long_document_are_never_packed() -> None:
    long_text = " ".join(f"Word{i} is here." for i in range(900))
    documents = pd.DataFrame(
        {
            S.ID: ["a", "long", "b", "c"],
            S.TEXT: ["Ann Lee rows.", long_text, "Bo Tan sails.", "Cy Moe swims."],
        }
    )
    units = chunk_documents(documents, 600, 100)
    groups = pack_text_units(units, 600)
    long_units = [i for i, ids in enumerate(units[S.DOCUMENT_IDS]) if ids == ["long"]]
    assert len(long_units) > 1
    assert all([i] in groups for i in long_units)
    assert groups[-1] == [len(units) - 2, len(units) - 1]  # b and c share a call


def packed_model(body: dict) -> Reply | str:
    """Answer a packed extraction prompt with labelled records of each document's names, one
    record labelled with the wrong document; and a single-text prompt unlabelled."""
    text = body["messages"][3]["content"].removeprefix("Text:\n")
    documents = re.split(r"\n\n(?=\[\d+\] )", text)
    if len(documents) == 1 or not documents[0].startswith("[1] "):
        return "\n".join(
            f'("entity"<|>{n}<|>organization<|>Named in the text.)' for n in names_in(text)
        )
    lines = []
    for document in documents:
        label, _, body_text = document.partition(" ")
        for name in names_in(body_text):
            lines.append(f'{label} ("entity"<|>{name}<|>organization<|>Named in {label}.)')
    last_names = names_in(documents[-1])
    lines.append(f'[1] ("entity"<|>{last_names[0]}<|>event<|>Labelled with the first.)')
    return "\n".join([*lines, "<|COMPLETE|>"])


@pytest.mark.parametrize("style", ["tuple", "pipe"])
def test_packed_extraction_keeps_each_documents_provenance(
    fake_llm: FakeLLM, make_llm, musique_units, style: str
) -> None:
    units = musique_units.iloc[:12].reset_index(drop=True)
    if style == "pipe":
        fake_llm.respond_with(lambda body: prompts.pipe_style(packed_model(body)))
    else:
        fake_llm.respond_with(packed_model)
    # the fake replies are entity records only: no relationship follow-up is asked for
    llm = make_llm(
        index={
            "pack_documents_tokens": 600,
            "record_style": style,
            "relationships_follow_up": False,
        }
    )
    entities, _, errors, dropped = extract_graph(units, llm, llm.settings.index, progress=False)
    groups = pack_text_units(units, 600)
    assert fake_llm.calls == len(groups) < len(units) and errors.empty
    texts = dict(zip(units[S.ID], units[S.TEXT], strict=True))
    assert set(entities[S.TEXT_UNIT_ID]) == set(units[S.ID])
    for name, unit in zip(entities[S.TITLE], entities[S.TEXT_UNIT_ID], strict=True):
        assert mentioned(name, texts[unit]), (name, unit)
    # each document's names, exactly where a one-document-per-call run would put them
    for unit_id, text in texts.items():
        found = set(entities[entities[S.TEXT_UNIT_ID] == unit_id][S.TITLE])
        assert found == set(names_in(text))
    # the record labelled with the wrong document went to the document that names it
    for group in groups:
        if len(group) > 1:
            last = units[S.ID].iloc[group[-1]]
            first_name = names_in(texts[last])[0]
            rows = entities[(entities[S.TITLE] == first_name) & (entities[S.TEXT_UNIT_ID] == last)]
            assert len(rows) == 1
            moved = dropped[(dropped[S.TEXT_UNIT_ID] == last) & (dropped[S.NAME] == first_name)]
            assert list(moved[S.DESCRIPTION]) == ["Labelled with the first."]
    assert NOT_IN_CHUNK not in set(dropped[S.REASON])
    prompt = fake_llm.requests[0]["messages"]
    assert prompt[0]["content"].endswith(prompts.PACKED_NOTE)
    assert fake_llm.requests[0]["max_tokens"] >= 1024


def test_the_packed_worked_example_is_the_single_one_split_in_two() -> None:
    from graphrag.index.extract.records import parse_records

    single = parse_records(prompts.EXAMPLE_RECORDS)
    packed = parse_records(prompts.EXAMPLE_PACKED_RECORDS)
    assert packed.complete and not packed.malformed and not packed.duplicates
    assert {e["name"] for e in packed.entities} == {e["name"] for e in single.entities}
    strip = [{k: v for k, v in r.items() if k != "label"} for r in packed.relationships]
    assert [(r["source"], r["target"]) for r in strip] == [
        (r["source"], r["target"]) for r in single.relationships
    ]
