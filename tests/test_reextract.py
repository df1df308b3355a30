"""``index.reextract_empty``: a text unit whose first extraction named nothing its text
mentions (the 1.5B model copied the worked example) is asked once more, alone, with the
second worked example. Over the demo's real documents (its cooperative history is the unit
the recorded model copied the example for) and MuSiQue's packed paragraphs, on a fake
endpoint that copies the first example wherever it is told to."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import REPO_ROOT, FakeLLM, names_in

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.names import mentioned, name_key
from graphrag.index.extract.record_calls import ASKED_AGAIN
from graphrag.index.extract.stage import NOT_IN_CHUNK, extract_graph
from graphrag.text.documents import chunk_documents, load_documents

DEMO_DOCS = REPO_ROOT / "data" / "kestrel_bay" / "docs"
MUSIQUE_DOCS = REPO_ROOT / "data" / "musique" / "docs"
COPIER = "Fifty Years on the Water"  # the demo document the recorded model answered wrongly
# the fake model writes Microsoft's tuple records and copies that style's worked examples
TUPLE = {"record_style": "tuple", "relationships_follow_up": False}


@pytest.fixture(scope="module")
def demo_units() -> pd.DataFrame:
    return chunk_documents(load_documents(DEMO_DOCS, 200_000).documents, 600, 100)


def _records_of(text: str) -> str:
    lines = [f'("entity"<|>{n}<|>organization<|>Named in the text.)' for n in names_in(text)]
    return "\n".join([*lines, "<|COMPLETE|>"])


def copying_model(copy_again: bool = False):
    """A model that answers the first worked example's records for the cooperative history
    (and, with ``copy_again``, the second example's when asked again), the text's names
    for any other text."""

    def reply(body: dict) -> str:
        messages = body["messages"]
        text = messages[-1]["content"]
        asked_again = messages[2]["content"] == prompts.SECOND_EXAMPLE_RECORDS
        if COPIER in text:
            if not asked_again:
                return prompts.EXAMPLE_RECORDS
            if copy_again:
                return prompts.SECOND_EXAMPLE_RECORDS
        return _records_of(text.removeprefix("Text:\n"))

    return reply


def _copier_unit(units: pd.DataFrame) -> str:
    return units[units[S.TEXT].str.contains(COPIER)][S.ID].iloc[0]


def test_a_unit_that_got_the_example_back_is_asked_again(
    fake_llm: FakeLLM, make_llm, demo_units
) -> None:
    fake_llm.respond_with(copying_model())
    llm = make_llm(index={**TUPLE, "reextract_empty": True, "pack_documents_tokens": 0})
    entities, _, errors, dropped = extract_graph(
        demo_units, llm, llm.settings.index, progress=False
    )
    copier = _copier_unit(demo_units)
    assert errors.empty and fake_llm.calls == len(demo_units) + 1
    again = fake_llm.requests[-1]["messages"]
    assert again[2]["content"] == prompts.SECOND_EXAMPLE_RECORDS
    assert COPIER in again[-1]["content"]
    text = demo_units.set_index(S.ID).loc[copier, S.TEXT]
    found = set(entities[entities[S.TEXT_UNIT_ID] == copier][S.NAME_KEY])
    assert found == {name_key(n) for n in names_in(text)}
    assert "kestrel bay fishing cooperative" in found
    # what the first reply said stays visible: its names, and why the unit was asked again
    own = dropped[dropped[S.TEXT_UNIT_ID] == copier]
    note = own[own[S.REASON] == ASKED_AGAIN]
    assert len(note) == 1
    assert {"Dunmore Rowing Club", "Lena Ortiz", "Tarn Boats"} <= set(
        note[S.DESCRIPTION].iloc[0].split("; ")
    )
    # every other unit was asked once, and keeps exactly its own names
    for unit, unit_text in zip(demo_units[S.ID], demo_units[S.TEXT], strict=True):
        titles = set(entities[entities[S.TEXT_UNIT_ID] == unit][S.TITLE])
        assert all(mentioned(t, unit_text) for t in titles)


def test_without_the_setting_the_unit_stays_out_of_the_graph(
    fake_llm: FakeLLM, make_llm, demo_units
) -> None:
    fake_llm.respond_with(copying_model())
    llm = make_llm(index={**TUPLE, "reextract_empty": False, "pack_documents_tokens": 0})
    entities, _, _, dropped = extract_graph(demo_units, llm, llm.settings.index, progress=False)
    assert fake_llm.calls == len(demo_units)
    assert _copier_unit(demo_units) not in set(entities[S.TEXT_UNIT_ID])
    assert ASKED_AGAIN not in set(dropped[S.REASON])


def test_a_unit_is_asked_again_once_at_most(fake_llm: FakeLLM, make_llm, demo_units) -> None:
    fake_llm.respond_with(copying_model(copy_again=True))
    llm = make_llm(index={**TUPLE, "reextract_empty": True, "pack_documents_tokens": 0})
    entities, _, errors, dropped = extract_graph(
        demo_units, llm, llm.settings.index, progress=False
    )
    copier = _copier_unit(demo_units)
    assert errors.empty and fake_llm.calls == len(demo_units) + 1
    assert copier not in set(entities[S.TEXT_UNIT_ID])
    own = dropped[dropped[S.TEXT_UNIT_ID] == copier]
    # the second reply's names grounded out, the first's in the note
    assert "Anya Petrov" in set(own[own[S.REASON] == NOT_IN_CHUNK][S.NAME])
    assert "Lena Ortiz" in own[own[S.REASON] == ASKED_AGAIN][S.DESCRIPTION].iloc[0]


def test_packed_documents_that_got_the_example_back_are_asked_alone(
    fake_llm: FakeLLM, make_llm
) -> None:
    units = chunk_documents(load_documents(MUSIQUE_DOCS, 200_000).documents, 600, 100)
    units = units.iloc[:10].reset_index(drop=True)
    from graphrag.index.extract.record_calls import pack_text_units

    first_pack = pack_text_units(units, 600)[0]
    # chosen by content, not by arrival: two slots may deliver the second pack first
    marker = units[S.TEXT].iloc[first_pack[0]]

    def reply(body: dict) -> str:
        messages = body["messages"]
        text = messages[-1]["content"].removeprefix("Text:\n")
        if messages[2]["content"] == prompts.EXAMPLE_PACKED_RECORDS and marker in text:
            return prompts.EXAMPLE_PACKED_RECORDS  # the first pack's reply copies the example
        if messages[2]["content"] == prompts.EXAMPLE_PACKED_RECORDS:
            lines = []
            for n, document in enumerate(text.split("\n\n[")):
                lines += [f'[{n + 1}] ("entity"<|>{x}<|>geo<|>In it.)' for x in names_in(document)]
            return "\n".join([*lines, "<|COMPLETE|>"])
        return _records_of(text)

    fake_llm.respond_with(reply)
    llm = make_llm(index={**TUPLE, "reextract_empty": True, "pack_documents_tokens": 600})
    entities, _, errors, _ = extract_graph(units, llm, llm.settings.index, progress=False)
    assert len(first_pack) > 1 and errors.empty
    again = prompts.SECOND_EXAMPLE_RECORDS
    alone = [r["messages"] for r in fake_llm.requests if r["messages"][2]["content"] == again]
    # the first pack's documents, and any the fake reads no name in, each asked once alone
    nameless = {i for i in range(len(units)) if not names_in(units[S.TEXT].iloc[i])}
    expected = set(first_pack) | nameless
    assert sorted(m[-1]["content"] for m in alone) == sorted(
        prompts.extract_graph_records_again(units[S.TEXT].iloc[i], [])[-1]["content"]
        for i in expected
    )
    for i in first_pack:
        unit, text = units[S.ID].iloc[i], units[S.TEXT].iloc[i]
        found = set(entities[entities[S.TEXT_UNIT_ID] == unit][S.NAME_KEY])
        assert found == {name_key(n) for n in names_in(text)}
