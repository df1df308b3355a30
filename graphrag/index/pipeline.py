"""The indexing pipeline: an ordered list of stages, each a function from tables to tables.

Read ``STAGES`` top to bottom to see what runs. Every LLM call goes through the recorded
cache, so an interrupted run resumes by running again: finished calls are free.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from graphrag.config import IndexSettings, Settings, repo_relative
from graphrag.documents import chunk_documents, load_documents
from graphrag.embeddings import Embedder
from graphrag.index import schemas as S
from graphrag.index.communities import communities_table, detect_communities
from graphrag.index.extract import NOT_IN_CHUNK, SELF_LOOP, extract_graph
from graphrag.index.graph import (
    add_degrees,
    build_graph,
    fact_texts,
    merge_graph_mentions,
    summarize_entities,
    summarize_relationships,
)
from graphrag.index.reports import REPORT_COLUMNS, write_community_reports
from graphrag.index.store import write_index
from graphrag.llm import ChatLLM
from graphrag.usage import Usage, track_usage

Tables = dict[str, pd.DataFrame]
T = TypeVar("T")


@dataclass
class IndexContext:
    settings: Settings
    llm: ChatLLM
    embedder: Embedder
    progress: bool = True


def _with_rows(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Return ``old`` with the rows of ``new`` appended (``old`` itself when there are none)."""
    return pd.concat([old, new], ignore_index=True) if len(new) else old


def _errors(tables: Tables, new: pd.DataFrame) -> pd.DataFrame:
    return _with_rows(tables.get("errors", pd.DataFrame(columns=S.ERROR_COLUMNS)), new)


def chunk_stage(tables: Tables, ctx: IndexContext) -> Tables:
    chunking = ctx.settings.chunking
    text_units = chunk_documents(tables["documents"], chunking.size, chunking.overlap)
    documents = tables["documents"].copy()
    units_of = text_units.explode(S.DOCUMENT_IDS).groupby(S.DOCUMENT_IDS)[S.ID].apply(list)
    documents[S.TEXT_UNIT_IDS] = documents[S.ID].map(units_of)
    return {**tables, "documents": documents, "text_units": text_units}


def extract_stage(tables: Tables, ctx: IndexContext) -> Tables:
    entity_mentions, relationship_mentions, errors, dropped = extract_graph(
        tables["text_units"], ctx.llm, ctx.settings.index, ctx.progress
    )
    return {
        **tables,
        "entity_mentions": entity_mentions,
        "relationship_mentions": relationship_mentions,
        "dropped": dropped,
        "errors": _errors(tables, errors),
    }


def merge_and_summarize(
    entity_mentions: pd.DataFrame,
    relationship_mentions: pd.DataFrame,
    text_units: pd.DataFrame,
    ctx: IndexContext,
    known: dict[str, tuple[list[str], str]] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships, dropped alias self-loops, errors): the mentions merged
    into one entity per name and one relationship per pair, several descriptions summarized
    by the LLM, with degrees. A full build and an incremental update both merge this way.

    ``known`` ({entity id: (its descriptions, its description)}, from the index an update
    starts from): an entity whose descriptions are the same keeps its description and is not
    summarized again. Relationships are always asked again: an unchanged pair's question is
    in the cache, so it is free.
    """
    index = ctx.settings.index
    entities, relationships, loops = merge_graph_mentions(
        entity_mentions, relationship_mentions, text_units, index
    )
    known = known or {}
    same = [
        eid in known and known[eid][0] == list(descriptions)
        for eid, descriptions in zip(entities[S.ID], entities[S.DESCRIPTIONS], strict=True)
    ]
    asked = entities[~pd.Series(same, index=entities.index, dtype=bool)].reset_index(drop=True)
    summarized, errors = summarize_entities(asked, ctx.llm, index, ctx.progress)
    description_of = {eid: known[eid][1] for eid, s in zip(entities[S.ID], same, strict=True) if s}
    description_of.update(zip(summarized[S.ID], summarized[S.DESCRIPTION], strict=True))
    entities = entities.drop(columns=[S.DESCRIPTIONS])
    entities[S.DESCRIPTION] = entities[S.ID].map(description_of)
    relationships, more = summarize_relationships(relationships, ctx.llm, index, ctx.progress)
    entities, relationships = add_degrees(
        entities, relationships, build_graph(entities, relationships)
    )
    return entities, relationships, loops, _with_rows(errors, more)


def graph_stage(tables: Tables, ctx: IndexContext) -> Tables:
    """Merge the extracted mentions into the entity graph (:func:`merge_and_summarize`), then
    link each text unit to what was extracted from it. ``index.merge_aliases`` first merges
    acronyms into the long names the text defines (index/aliases.py)."""
    entities, relationships, loops, errors = merge_and_summarize(
        tables["entity_mentions"], tables["relationship_mentions"], tables["text_units"], ctx
    )
    rest = {k: v for k, v in tables.items() if not k.endswith("_mentions")}
    return {
        **rest,
        "entities": entities,
        "relationships": relationships,
        "text_units": link_text_units(tables["text_units"], entities, relationships),
        "dropped": _with_rows(tables["dropped"], loops),
        "errors": _errors(tables, errors),
    }


def link_text_units(
    text_units: pd.DataFrame, entities: pd.DataFrame, relationships: pd.DataFrame
) -> pd.DataFrame:
    """Return the text units with the ids of the entities and relationships found in each
    (the reverse of their provenance), as Microsoft GraphRAG's text_units table has them."""
    text_units = text_units.copy()
    for column, frame in ((S.ENTITY_IDS, entities), (S.RELATIONSHIP_IDS, relationships)):
        owners = frame[[S.ID, S.TEXT_UNIT_IDS]].explode(S.TEXT_UNIT_IDS)
        ids_of = owners.groupby(S.TEXT_UNIT_IDS)[S.ID].apply(list)
        text_units[column] = [ids_of.get(u, []) for u in text_units[S.ID]]
    return text_units


def communities_stage(tables: Tables, ctx: IndexContext) -> Tables:
    index = ctx.settings.index
    graph = build_graph(tables["entities"], tables["relationships"])
    clusters = detect_communities(
        graph, index.max_cluster_size, index.seed, index.community_algorithm
    )
    return {
        **tables,
        "communities": communities_table(clusters, tables["entities"], tables["relationships"]),
    }


def prose_communities(communities: pd.DataFrame, settings: IndexSettings) -> pd.Series:
    """Return which ``communities`` get an LLM report (the others, fewer than
    ``min_report_entities`` entities, get a template)."""
    return communities[S.ENTITY_IDS].map(len) >= settings.min_report_entities


def write_reports(
    communities: pd.DataFrame,
    tables: Tables,
    ctx: IndexContext,
    known_reports: dict[int, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (community_reports, errors) of ``communities``: written by the LLM, or from a
    template for a community with fewer than ``index.min_report_entities`` entities (a pair
    of names needs no prose); a parent reads its small children's template reports like any
    other child report."""
    from graphrag.index.nlp_stages import template_report_row

    entities, relationships = tables["entities"], tables["relationships"]
    small = ~prose_communities(communities, ctx.settings.index)
    # an nlp graph's relationships are co-occurrences, and its templates say so
    edge_kind = "co-occurrence " if ctx.settings.index.method == "nlp" else ""
    templates = pd.DataFrame(
        [
            template_report_row(c, entities, relationships, edge_kind=edge_kind)
            for _, c in communities[small].iterrows()
        ],
        columns=REPORT_COLUMNS,
    )
    if ctx.settings.index.lazy_reports:  # the rest are written by the queries that read them
        return templates.sort_values(S.COMMUNITY).reset_index(drop=True), pd.DataFrame(
            columns=S.ERROR_COLUMNS
        )
    known = dict(known_reports or {})
    known |= dict(zip(templates[S.COMMUNITY], templates[S.FULL_CONTENT], strict=True))
    reports, errors = write_community_reports(
        communities[~small],
        entities,
        relationships,
        ctx.llm,
        ctx.settings.index,
        ctx.progress,
        known_reports=known,
    )
    if len(templates):
        reports = pd.concat([reports, templates], ignore_index=True)
        reports = reports.sort_values(S.COMMUNITY).reset_index(drop=True)
    return reports, errors


def reports_stage(tables: Tables, ctx: IndexContext) -> Tables:
    reports, errors = write_reports(tables["communities"], tables, ctx)
    return {**tables, "community_reports": reports, "errors": _errors(tables, errors)}


def embed_stage(tables: Tables, ctx: IndexContext) -> Tables:
    """Embed what the query methods match a question against: chunks, entity descriptions,
    relationships read as facts (PPR's seeds; on a large NLP graph these are most of the
    work, done once here rather than at the first query) and community reports."""

    def vectors(texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in ctx.embedder.embed(texts)] if texts else []

    text_units = tables["text_units"].copy()
    text_units[S.TEXT_EMBEDDING] = vectors(list(text_units[S.TEXT]))
    entities = tables["entities"].copy()
    entities[S.DESCRIPTION_EMBEDDING] = vectors(
        [f"{t}: {d}" for t, d in zip(entities[S.TITLE], entities[S.DESCRIPTION], strict=True)]
    )
    relationships = tables["relationships"].copy()
    relationships[S.FACT_EMBEDDING] = vectors(fact_texts(relationships))
    reports = tables["community_reports"].copy()
    reports[S.FULL_CONTENT_EMBEDDING] = vectors(list(reports[S.FULL_CONTENT]))
    return {
        **tables,
        "text_units": text_units,
        "entities": entities,
        "relationships": relationships,
        "community_reports": reports,
    }


Stage = Callable[[Tables, IndexContext], Tables]
STAGES: list[tuple[str, Stage]] = [
    ("chunk", chunk_stage),
    ("extract", extract_stage),
    ("graph", graph_stage),
    ("communities", communities_stage),
    ("reports", reports_stage),
    ("embed", embed_stage),
]


def stages_for(settings: Settings) -> list[tuple[str, Stage]]:
    """Return the stages of ``index.method``: "nlp" swaps extraction, graph and reports for
    their LLM-free versions (graphrag/index/nlp_stages.py) and keeps the rest; with
    ``lazy_reports`` it keeps the LLM reports stage, which then writes templates only."""
    if settings.index.method == "llm":
        return STAGES
    from graphrag.index import nlp_stages

    swapped = {
        "extract": nlp_stages.nlp_extract_stage,
        "graph": nlp_stages.nlp_graph_stage,
    }
    if not settings.index.lazy_reports:
        swapped["reports"] = nlp_stages.template_reports_stage
    return [(name, swapped.get(name, stage)) for name, stage in STAGES]


@dataclass
class IndexSummary:
    """What an indexing run produced and what each stage cost."""

    out: Path
    counts: dict[str, Any]
    failed: list[dict[str, str]]
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    skipped_documents: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "counts": self.counts,
            "failed": self.failed,
            "stages": self.stages,
            "skipped_documents": self.skipped_documents,
        }

    def render(self, timings: bool = True) -> str:
        """Return the run summary; ``timings=False`` leaves out the seconds (which vary)."""
        c = self.counts
        levels = ", ".join(f"level {k}: {v}" for k, v in c["communities_per_level"].items())
        lines = [
            f"index written to {repo_relative(self.out)}",
            f"documents {c['documents']}, chunks {c['text_units']}, entities "
            f"{c['entities']}, relationships {c['relationships']}",
            f"communities {c['communities']} ({levels}), reports {c['community_reports']}",
            f"names dropped as not in their chunk: {c.get('ungrounded_names_dropped', 0)}, "
            f"self-loops dropped: {c.get('self_loops_dropped', 0)} (see the dropped table)",
            f"failed items {len(self.failed)}"
            + "".join(f"\n  {f[S.STAGE]} {f[S.ITEM_ID]}: {f[S.ERROR][:200]}" for f in self.failed),
        ]
        if self.skipped_documents:
            lines.append(
                "skipped documents:"
                + "".join(f"\n  {p}: {why}" for p, why in self.skipped_documents)
            )
        return "\n".join(lines + stage_lines(self.stages, timings))


def stage_lines(stages: dict[str, dict[str, float]], timings: bool) -> list[str]:
    """Return the per-stage cost table of a run summary (index build or update)."""
    header = f"{'stage':<12}{'calls':>7}{'cached':>8}{'prompt tok':>12}{'compl. tok':>12}"
    lines = [header + (f"{'LLM s':>9}{'wall s':>9}" if timings else "")]
    for name, s in stages.items():
        row = (
            f"{name:<12}{s['calls']:>7.0f}{s['cache_hits']:>8.0f}"
            f"{s['prompt_tokens']:>12.0f}{s['completion_tokens']:>12.0f}"
        )
        seconds = f"{s['seconds']:>9.1f}{s['wall_seconds']:>9.1f}"
        lines.append(row + (seconds if timings else ""))
    return lines


def timed(costs: dict[str, dict[str, float]], name: str, step: Callable[[], T]) -> T:
    """Return ``step()``, keeping its LLM usage and wall seconds as ``costs[name]``."""
    started = time.monotonic()
    with track_usage() as usage:
        result = step()
    costs[name] = {**usage.to_dict(), "wall_seconds": time.monotonic() - started}
    return result


def total_usage(costs: dict[str, dict[str, float]], exclude: tuple[str, ...] = ()) -> Usage:
    """Return the summed usage of the stages in ``costs`` (but those named in ``exclude``)."""
    total = Usage()
    for name, stage in costs.items():
        if name not in exclude:
            total.add(Usage(**{k: v for k, v in stage.items() if k != "wall_seconds"}))
    return total


def run_stages(tables: Tables, ctx: IndexContext) -> tuple[Tables, dict[str, dict[str, float]]]:
    """Run every stage in order; return the tables and each stage's usage and wall time."""
    costs: dict[str, dict[str, float]] = {}
    for name, stage in stages_for(ctx.settings):
        tables = timed(costs, name, partial(stage, tables, ctx))
    return tables, costs


def build_index(
    input_path: str | Path,
    out: str | Path,
    settings: Settings,
    llm: ChatLLM | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    skip_bad: bool = False,
) -> IndexSummary:
    """Index the corpus at ``input_path`` into the folder ``out``; return the run summary."""
    loaded = load_documents(input_path, settings.chunking.max_document_tokens, skip_bad)
    own_llm = llm is None
    llm = llm or ChatLLM(settings)
    try:
        ctx = IndexContext(settings, llm, embedder or Embedder(settings), progress)
        tables, costs = run_stages({"documents": loaded.documents}, ctx)
    finally:
        if own_llm:
            llm.close()
    counts = index_counts(tables)
    summary = IndexSummary(
        Path(out), counts, tables["errors"].to_dict("records"), costs, loaded.skipped
    )
    manifest = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "input": str(input_path),
        "llm_model": settings.llm.model,
        "llm_base_url": settings.llm.base_url or "embedded",
        "embedding_model": ctx.embedder.model_id,
        "settings": settings.to_dict(),
        "summary": summary.to_dict(),
        "usage": total_usage(costs).to_dict(),
    }
    write_index(tables, out, manifest)
    return summary


def index_counts(tables: Tables) -> dict[str, Any]:
    """Return the row counts of an index's tables, as the run summary reports them."""
    communities = tables["communities"]
    return {
        "documents": len(tables["documents"]),
        "text_units": len(tables["text_units"]),
        "corpus_tokens": int(tables["text_units"][S.N_TOKENS].sum()),
        "entities": len(tables["entities"]),
        "relationships": len(tables["relationships"]),
        "communities": len(communities),
        "communities_per_level": {
            int(k): int(v) for k, v in communities[S.LEVEL].value_counts().sort_index().items()
        },
        "community_reports": len(tables["community_reports"]),
        "ungrounded_names_dropped": int((tables["dropped"]["reason"] == NOT_IN_CHUNK).sum()),
        "self_loops_dropped": int((tables["dropped"]["reason"] == SELF_LOOP).sum()),
    }
