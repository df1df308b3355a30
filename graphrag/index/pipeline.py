"""The indexing pipeline: ``STAGES`` in order, each a function from tables to tables. Every
LLM call goes through the cache, so an interrupted run resumes by running again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from graphrag.index import nlp_stages, stages
from graphrag.index.artifacts import artifacts_to_build
from graphrag.index.run_summary import IndexSummary, Tables, index_counts, timed, total_usage
from graphrag.index.stages import IndexContext
from graphrag.index.store import write_index
from graphrag.llm.client import ChatLLM
from graphrag.llm.embedding_endpoint import make_embedder
from graphrag.llm.progress import RunProgress
from graphrag.settings import Settings
from graphrag.text.documents import load_documents
from graphrag.text.embeddings import Embedder

Stage = Callable[[Tables, IndexContext], Tables]
STAGES: list[tuple[str, Stage]] = [
    ("chunk", stages.chunk_stage),
    ("extract", stages.extract_stage),
    ("graph", stages.graph_stage),
    ("communities", stages.communities_stage),
    ("reports", stages.reports_stage),
    ("embed", stages.embed_stage),
]


def stages_for(settings: Settings) -> list[tuple[str, Stage]]:
    """Return the stages of ``index.method``: "nlp" swaps in LLM-free extraction, graph and
    reports (with ``lazy_reports`` the LLM reports stage stays; it writes templates only)."""
    if settings.index.method == "llm":
        return STAGES
    swapped = {"extract": nlp_stages.nlp_extract_stage, "graph": nlp_stages.nlp_graph_stage}
    if not settings.index.lazy_reports:
        swapped["reports"] = nlp_stages.template_reports_stage
    return [(name, swapped.get(name, stage)) for name, stage in STAGES]


def build_index(
    input_path: str | Path,
    out: str | Path,
    settings: Settings,
    llm: ChatLLM | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    skip_bad: bool = False,
    expected: dict[str, float | None] | None = None,
    all_artifacts: bool = False,
) -> IndexSummary:
    """Index the corpus at ``input_path`` into ``out``; return the run summary (``expected``: the
    estimate's seconds per stage, for the ETA; ``all_artifacts``: build every artifact)."""
    loaded = load_documents(input_path, settings.chunking.max_document_tokens, skip_bad)
    own_llm = llm is None
    llm = llm or ChatLLM(settings)
    artifacts = artifacts_to_build(settings, all_artifacts)
    try:
        ctx = IndexContext(settings, llm, embedder or make_embedder(settings), progress, artifacts)
        tables: Tables = {"documents": loaded.documents}
        costs: dict[str, dict[str, float]] = {}  # each stage's usage and wall time
        ordered = stages_for(settings)
        lines = RunProgress([name for name, _ in ordered], expected, progress)
        for name, stage in ordered:
            with lines.stage(name):
                tables = timed(costs, name, partial(stage, tables, ctx))
    finally:
        if own_llm:
            llm.close()
    failed = tables["errors"].to_dict("records")
    summary = IndexSummary(Path(out), index_counts(tables), failed, costs, loaded.skipped)
    manifest = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "input": str(input_path),
        "llm_model": settings.llm.model,
        "llm_base_url": settings.llm.base_url or "embedded",
        "embedding_model": ctx.embedder.model_id,
        "artifacts": sorted(ctx.artifacts),
        "settings": settings.to_dict(),
        "summary": summary.to_dict(),
        "usage": total_usage(costs).to_dict(),
    }
    write_index(tables, out, manifest)
    return summary
