"""Incremental indexing: delete a document then add it back gives the same graph; adding
costs only the new chunks' extraction calls; deleting costs no extraction call and rewrites
only the reports of communities that changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DEMO_DOCS, UNPACKED, FakeLLM, indexing_model, nlp_settings

from graphrag import schemas as S
from graphrag.index.incremental import IncrementalError, read_mentions, update_index
from graphrag.index.pipeline import build_index
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM

COOPERATIVE = "02_cooperative_history"  # the only document naming the boat "Marianne"


def graph_of(path: Path) -> tuple[set, set, dict]:
    index = load_index(path)
    entities = set(zip(index.entities[S.ID], index.entities[S.TITLE], strict=True))
    relationships = set(
        zip(index.relationships["source_id"], index.relationships["target_id"], strict=True)
    )
    descriptions = dict(zip(index.entities[S.ID], index.entities[S.DESCRIPTION], strict=True))
    return entities, relationships, descriptions


def one_document(tmp_path: Path, name: str, source: Path = DEMO_DOCS) -> Path:
    folder = tmp_path / f"add_{name}"
    folder.mkdir()
    shutil.copy(source / f"{name}.md", folder / f"{name}.md")
    return folder


def test_nlp_index_delete_then_add_back_gives_the_same_graph(tmp_path, replay_embedder) -> None:
    settings = nlp_settings()
    llm = ChatLLM(settings)
    out = tmp_path / "index"
    build_index(DEMO_DOCS, out, settings, llm, replay_embedder, progress=False)
    before = graph_of(out)

    deleted = update_index(out, settings, llm, replay_embedder, delete=[COOPERATIVE])
    after_delete = graph_of(out)
    index = load_index(out)
    assert COOPERATIVE not in set(index.documents[S.ID])
    assert not any(COOPERATIVE in ids for ids in index.text_units[S.DOCUMENT_IDS])
    assert deleted.removed_text_units == 1 and deleted.usage().calls == 0
    kept_units = set(index.text_units[S.ID])
    assert all(set(u) <= kept_units for u in index.entities[S.TEXT_UNIT_IDS])
    titles_before = {t for _, t in before[0]}
    assert "Marianne" in titles_before
    assert {t for _, t in after_delete[0]} == titles_before - {"Marianne"}
    assert after_delete[1] != before[1]

    update_index(out, settings, llm, replay_embedder, add=one_document(tmp_path, COOPERATIVE))
    assert graph_of(out) == before


@pytest.fixture
def fake_index(tmp_path, fake_llm: FakeLLM, make_settings, replay_embedder, demo_subset):
    fake_llm.respond_with(indexing_model)  # the scripted model writes JSON extractions
    settings = make_settings(fake_llm.base_url, index=UNPACKED)
    llm = ChatLLM(settings)
    out = tmp_path / "llm_index"
    build_index(demo_subset, out, settings, llm, replay_embedder, progress=False)
    return out, settings, llm


def is_extraction(body: dict) -> bool:
    return body["messages"][0]["content"].startswith("You build a knowledge graph")


def calls_of(summary, stage: str) -> int:
    return int(summary.stages.get(stage, {}).get("calls", 0))


def test_llm_index_add_extracts_only_the_new_chunks_and_delete_none(
    fake_index, fake_llm: FakeLLM, replay_embedder, tmp_path
) -> None:
    out, settings, llm = fake_index
    before = graph_of(out)
    assert sum(map(is_extraction, fake_llm.requests)) == 3  # one chunk per document

    added = update_index(
        out, settings, llm, replay_embedder, add=one_document(tmp_path, "09_mayoral_election")
    )
    # the first update reads the older index's extractions back from the cache, apart
    assert calls_of(added, "mentions") == added.stages["mentions"]["cache_hits"] == 3
    assert calls_of(added, "extract") == added.new_text_units == 1
    assert added.stages["extract"]["cache_hits"] == 0
    assert read_mentions(out, set(load_index(out).text_units[S.ID])) is not None
    with_election = graph_of(out)
    assert with_election[0] > before[0]

    fake_llm.requests.clear()
    deleted = update_index(out, settings, llm, replay_embedder, delete=["09_mayoral_election"])
    assert "mentions" not in deleted.stages  # stored beside the index by the first update
    assert calls_of(deleted, "extract") == 0
    assert not any(map(is_extraction, fake_llm.requests))
    assert deleted.reports_kept >= 0
    assert deleted.reports_rewritten + deleted.reports_kept == len(
        load_index(out).community_reports
    )
    # every summary or report asked for was already seen (same prompts as the first build)
    assert deleted.usage().calls == deleted.usage().cache_hits
    assert graph_of(out) == before


def test_an_unchanged_community_keeps_its_report(fake_index, replay_embedder, tmp_path) -> None:
    out, settings, llm = fake_index
    # a document that shares no name with the corpus adds an island: nothing else changes
    island = tmp_path / "island"
    island.mkdir()
    (island / "zz_island.md").write_text(
        "Quill Harbor Trust and Amber Lantern Society signed a pact. "
        "Amber Lantern Society thanked Quill Harbor Trust."
    )
    reports_before = load_index(out).community_reports
    summary = update_index(out, settings, llm, replay_embedder, add=island)
    reports_after = load_index(out).community_reports
    assert summary.reports_kept >= 1
    kept = set(reports_before[S.ID]) & set(reports_after[S.ID])
    assert len(kept) == summary.reports_kept
    for rid in kept:
        old = reports_before[reports_before[S.ID] == rid].iloc[0]
        new = reports_after[reports_after[S.ID] == rid].iloc[0]
        assert new[S.FULL_CONTENT] == old[S.FULL_CONTENT]


def test_update_names_an_unknown_or_repeated_document(fake_index, replay_embedder) -> None:
    out, settings, llm = fake_index
    with pytest.raises(IncrementalError, match="nope"):
        update_index(out, settings, llm, replay_embedder, delete=["nope"])
    with pytest.raises(IncrementalError, match="01_kbmi_profile"):
        update_index(
            out, settings, llm, replay_embedder, add=one_document(out.parent, "01_kbmi_profile")
        )


def test_cli_deletes_and_adds_documents_of_an_nlp_index(tmp_path, monkeypatch, capsys) -> None:
    from workbench.cli import main

    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "emb.sqlite"))
    monkeypatch.setenv("GRAPHRAG_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("01_kbmi_profile", COOPERATIVE):
        shutil.copy(DEMO_DOCS / f"{name}.md", corpus / f"{name}.md")
    out = str(tmp_path / "idx")
    index = ["--cache", "off", "index", "--quiet", "--out", out]
    assert main([*index, "--method", "nlp", "--input", str(corpus)]) == 0
    capsys.readouterr()
    # no --method: the index is updated with the method it was built with (no LLM here)
    assert main([*index, "--delete", COOPERATIVE]) == 0
    assert "index (nlp) updated" in capsys.readouterr().out
    assert set(load_index(out).documents[S.ID]) == {"01_kbmi_profile"}
    assert main([*index, "--delete", "nope"]) == 1
    assert "cannot delete ['nope']" in capsys.readouterr().err
    assert main([*index, "--add", str(one_document(tmp_path, COOPERATIVE))]) == 0
    assert set(load_index(out).documents[S.ID]) == {"01_kbmi_profile", COOPERATIVE}
