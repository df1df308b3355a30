"""An index builds the artifacts only some methods read (fact vectors) when a configured
method reads them or when asked for all; an index without them loads and keeps them out of
an update, and one with them keeps them through an update."""

from __future__ import annotations

from conftest import DEMO_DOCS, nlp_settings

from graphrag import schemas as S
from graphrag.index.artifacts import FACT_EMBEDDINGS, artifacts_to_build, configured_methods
from graphrag.index.incremental import update_index
from graphrag.index.pipeline import build_index
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM

COOPERATIVE = "02_cooperative_history"


def test_the_default_methods_read_no_optional_artifact() -> None:
    settings = nlp_settings()
    assert "ppr" not in configured_methods(settings)
    assert artifacts_to_build(settings) == frozenset()
    assert artifacts_to_build(settings, every=True) == {FACT_EMBEDDINGS}


def test_a_method_reading_facts_is_configured_directly_or_through_another_methods_settings():
    settings = nlp_settings()
    settings.eval.methods = [*settings.eval.methods, "hipporag"]
    assert artifacts_to_build(settings) == {FACT_EMBEDDINGS}

    settings = nlp_settings()
    settings.eval.methods = ["naive", "router"]
    settings.query.methods["router"].multi_hop_method = "integrate"
    settings.query.methods["integrate"].graph_method = "ppr"
    assert {"router", "integrate", "ppr"} <= configured_methods(settings)
    assert artifacts_to_build(settings) == {FACT_EMBEDDINGS}


def test_facts_are_embedded_only_when_asked_and_an_update_keeps_what_the_index_had(
    tmp_path, replay_embedder
) -> None:
    settings = nlp_settings()
    llm = ChatLLM(settings)
    lean, full = tmp_path / "lean", tmp_path / "full"
    build_index(DEMO_DOCS, lean, settings, llm, replay_embedder, progress=False)
    build_index(DEMO_DOCS, full, settings, llm, replay_embedder, False, all_artifacts=True)

    without, with_facts = load_index(lean), load_index(full)
    assert S.FACT_EMBEDDING not in without.relationships
    assert without.manifest["artifacts"] == []
    assert with_facts.manifest["artifacts"] == [FACT_EMBEDDINGS]
    assert with_facts.relationships[S.FACT_EMBEDDING].map(len).eq(384).all()
    # the same tables otherwise, vectors included
    for name in ("text_units", "entities", "community_reports"):
        assert getattr(without, name).equals(getattr(with_facts, name))

    for out in (lean, full):
        update_index(out, settings, llm, replay_embedder, delete=[COOPERATIVE])
    assert S.FACT_EMBEDDING not in load_index(lean).relationships
    updated = load_index(full)
    assert updated.manifest["artifacts"] == [FACT_EMBEDDINGS]
    assert updated.relationships[S.FACT_EMBEDDING].map(len).eq(384).all()
