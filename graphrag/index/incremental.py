"""Add documents to an index, or delete them, without re-extracting the rest: only new chunks are
extracted, the graph is merged again from each chunk's kept mentions (``mentions/``), and only
changed entities and communities are summarized again. The nlp mode simply runs again."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from graphrag import schemas as S
from graphrag.index.artifacts import FACT_EMBEDDINGS, artifacts_to_build
from graphrag.index.extract.grounding import UNGROUNDED
from graphrag.index.graph.aliases import ALIAS_SELF_LOOP
from graphrag.index.graph.merge import merge_graph_mentions
from graphrag.index.nlp_stages import nlp_extract_stage, nlp_graph_stage
from graphrag.index.pipeline import stages_for
from graphrag.index.reports.lazy import is_lazy
from graphrag.index.run_summary import Tables, index_counts, stage_lines, timed, total_usage
from graphrag.index.stages import (
    IndexContext,
    chunk_stage,
    communities_stage,
    embed_stage,
    extract_stage,
    link_text_units,
    merge_and_summarize,
    write_reports,
)
from graphrag.index.store import Index, load_index, write_index
from graphrag.llm.client import ChatLLM
from graphrag.llm.usage import Usage
from graphrag.settings import Settings
from graphrag.text.documents import load_documents
from graphrag.text.embeddings import Embedder

MENTIONS = "mentions"  # folder in the index holding each chunk's extracted mentions
MENTION_TABLES = ("entity_mentions", "relationship_mentions")


class IncrementalError(ValueError):
    """A document to add is already indexed, or one to delete is not; the message names it."""


@dataclass
class UpdateSummary:
    """What an update changed and what each of its stages cost."""

    out: Path
    added_documents: list[str]
    deleted_documents: list[str]
    new_text_units: int
    removed_text_units: int
    reports_rewritten: int
    reports_kept: int
    method: str = "llm"
    stages: dict[str, dict[str, float]] = field(default_factory=dict)

    def usage(self, exclude: tuple[str, ...] = (MENTIONS,)) -> Usage:
        """Return the summed usage of the update's stages (by default without read-backs)."""
        return total_usage(self.stages, exclude)

    def render(self) -> str:
        added, deleted = self.added_documents or "none", self.deleted_documents or "none"
        lines = [
            f"index ({self.method}) updated in {self.out}: added {added}, deleted {deleted}",
            f"chunks +{self.new_text_units} -{self.removed_text_units}; community reports "
            f"rewritten {self.reports_rewritten}, kept {self.reports_kept}",
        ]
        return "\n".join(lines + stage_lines(self.stages, timings=False))


def read_mentions(index_path: Path, text_unit_ids: set[str]) -> Tables | None:
    """Return the stored mention tables if they cover exactly these text units, else None."""
    folder = Path(index_path) / MENTIONS
    try:
        tables = {n: pd.read_parquet(folder / f"{n}.parquet") for n in MENTION_TABLES}
    except (OSError, ValueError):
        return None
    stored = set(tables["entity_mentions"][S.TEXT_UNIT_ID])
    return tables if stored <= text_unit_ids else None


def _extract(text_units: pd.DataFrame, ctx: IndexContext) -> Tables:
    """Return the mention, errors and dropped tables of ``text_units`` by the LLM."""
    return extract_stage(
        {"errors": pd.DataFrame(columns=S.ERROR_COLUMNS), "text_units": text_units}, ctx
    )


def _graph(mentions: Tables, old: Tables, index: Index, ctx: IndexContext, units: pd.DataFrame):
    """Return (entities, relationships, dropped alias self-loops, errors) merged as a full
    build would; only entities whose descriptions differ from the ``old`` mentions' are new."""
    before, _, _ = merge_graph_mentions(
        old["entity_mentions"], old["relationship_mentions"], index.text_units, ctx.settings.index
    )
    description_of = dict(zip(index.entities[S.ID], index.entities[S.DESCRIPTION], strict=True))
    known = {
        eid: (list(descriptions), description_of[eid])
        for eid, descriptions in zip(before[S.ID], before[S.DESCRIPTIONS], strict=True)
        if eid in description_of
    }
    return merge_and_summarize(
        mentions["entity_mentions"], mentions["relationship_mentions"], units, ctx, known
    )


def _reports(
    tables: Tables, old_reports: pd.DataFrame, old_communities: pd.DataFrame, ctx: IndexContext
) -> tuple[Tables, int]:
    """Return the tables with community reports, keeping (and counting) those of communities
    whose members (the id) and relationships are unchanged."""
    communities = tables["communities"]
    old = zip(old_communities[S.ID], old_communities[S.RELATIONSHIP_IDS], strict=True)
    old_relationships = {cid: sorted(rids) for cid, rids in old}
    kept_rows, changed = [], []
    for _, community in communities.iterrows():
        old = old_reports[old_reports[S.ID] == community[S.ID]]
        same = len(old) and old_relationships.get(community[S.ID]) == sorted(
            community[S.RELATIONSHIP_IDS]
        )
        if same:
            row = old.iloc[0].to_dict()
            for column in (S.HUMAN_ID, S.COMMUNITY, S.PARENT, S.CHILDREN, S.SIZE):
                row[column] = community[column]
            kept_rows.append(row)
        else:
            changed.append(community[S.ID])
    known = {int(r[S.COMMUNITY]): r[S.FULL_CONTENT] for r in kept_rows}
    written, errors = write_reports(
        communities[communities[S.ID].isin(changed)], tables, ctx, known_reports=known
    )
    reports = pd.concat([pd.DataFrame(kept_rows, columns=written.columns), written])
    reports = reports.sort_values(S.COMMUNITY).reset_index(drop=True)
    errors = pd.concat([tables["errors"], errors], ignore_index=True)
    return {**tables, "community_reports": reports, "errors": errors}, len(kept_rows)


def _unit_order(text_units: pd.DataFrame) -> pd.DataFrame:
    """Return the text units in a fresh build's order (document id, then position)."""
    first_document = text_units[S.DOCUMENT_IDS].map(lambda ids: ids[0])
    start = text_units[S.START_TOKEN]
    order = sorted(
        range(len(text_units)), key=lambda i: (first_document.iloc[i], int(start.iloc[i]))
    )
    return text_units.iloc[order].reset_index(drop=True)


def _ordered(frame: pd.DataFrame, text_units: pd.DataFrame) -> pd.DataFrame:
    position = {u: i for i, u in enumerate(text_units[S.ID])}
    keys = frame[S.TEXT_UNIT_ID].map(position)
    return frame.iloc[keys.argsort(kind="stable")].reset_index(drop=True)


def update_index(
    index_path: str | Path,
    settings: Settings,
    llm: ChatLLM,
    embedder: Embedder,
    add: str | Path | None = None,
    delete: list[str] | tuple[str, ...] = (),
    progress: bool = False,
) -> UpdateSummary:
    """Add the documents at ``add`` and delete the documents ``delete`` (ids) in the index at
    ``index_path``; return what changed and what it cost."""
    path = Path(index_path)
    index = load_index(path)
    documents = index.documents
    # An index is updated with the method it was built with: LLM mentions merged into an
    # nlp graph (or the reverse) would mix two kinds of entity; a lazy index stays lazy.
    built_with = index.manifest.get("settings", {}).get("index", {}).get("method", "llm")
    index_settings = replace(settings.index, method=built_with, lazy_reports=is_lazy(index))
    settings = replace(settings, index=index_settings)
    had = {FACT_EMBEDDINGS} if S.FACT_EMBEDDING in index.relationships else set()
    ctx = IndexContext(settings, llm, embedder, progress, artifacts_to_build(settings) | had)
    costs: dict[str, dict[str, float]] = {}
    if unknown := sorted(set(delete) - set(documents[S.ID])):
        known = ", ".join(sorted(documents[S.ID]))
        raise IncrementalError(f"cannot delete {unknown}: not in index {path} (it has {known})")
    new_documents = pd.DataFrame(columns=documents.columns)
    if add is not None:
        new_documents = load_documents(add, settings.chunking.max_document_tokens).documents
        if again := sorted(set(new_documents[S.ID]) & set(documents[S.ID]) - set(delete)):
            raise IncrementalError(
                f"documents {again} of {add} are already in index {path}; delete them first "
                "(--delete) to replace them"
            )
    chunked = timed(costs, "chunk", lambda: chunk_stage({"documents": new_documents}, ctx))
    units = index.text_units
    removed = units[units[S.DOCUMENT_IDS].map(lambda ids: bool(set(ids) & set(delete)))]
    kept_units = units[list(chunked["text_units"].columns)][~units[S.ID].isin(removed[S.ID])]
    text_units = _unit_order(pd.concat([kept_units, chunked["text_units"]], ignore_index=True))
    kept_documents = documents[~documents[S.ID].isin(delete)]
    documents = pd.concat([kept_documents, chunked["documents"]], ignore_index=True)
    base = {"documents": documents.sort_values(S.ID, ignore_index=True), "text_units": text_units}
    if settings.index.method == "nlp":
        tables, reused = _rebuild_nlp(base, ctx, costs)
    else:
        tables, reused = _update_llm(base, index, path, removed, chunked, ctx, costs)
    tables = timed(costs, "embed", lambda: embed_stage(tables, ctx))
    rewritten = len(tables["community_reports"]) - reused
    added, new_units = sorted(new_documents[S.ID]), len(chunked["text_units"])
    summary = UpdateSummary(
        path, added, sorted(delete), new_units, len(removed), rewritten, reused, built_with, costs
    )
    manifest = {
        **{k: v for k, v in index.manifest.items() if k not in ("tables", "format_version")},
        "artifacts": sorted(ctx.artifacts),
        "summary": {
            **index.manifest.get("summary", {}),
            "counts": index_counts(tables),
            "failed": tables["errors"].to_dict("records"),
        },
        "updates": [
            *index.manifest.get("updates", []),
            {
                "added": summary.added_documents,
                "deleted": summary.deleted_documents,
                "stages": costs,
                "usage": summary.usage().to_dict(),
            },
        ],
    }
    write_index(tables, path, manifest)
    if "entity_mentions" in tables:  # beside the index, for the next update
        (path / MENTIONS).mkdir(exist_ok=True)
        for name in MENTION_TABLES:
            tables[name].to_parquet(path / MENTIONS / f"{name}.parquet", index=False)
    return summary


def _rebuild_nlp(base: Tables, ctx: IndexContext, costs: dict) -> tuple[Tables, int]:
    """Run the LLM-free stages again over the kept and new chunks (no LLM call)."""
    tables = timed(costs, "extract", lambda: nlp_extract_stage(base, ctx))
    tables = timed(costs, "graph", lambda: nlp_graph_stage(tables, ctx))
    tables = timed(costs, "communities", lambda: communities_stage(tables, ctx))
    reports_stage = dict(stages_for(ctx.settings))["reports"]  # templates (lazy: small only)
    tables = timed(costs, "reports", lambda: reports_stage(tables, ctx))
    return tables, 0


def _update_llm(
    base: Tables, index: Index, path: Path, removed: pd.DataFrame, chunked: Tables, ctx, costs
) -> tuple[Tables, int]:
    """Extract only the new chunks, merge with the kept mentions, summarize changed entities,
    re-cluster, and rewrite only the reports of changed communities."""
    old_ids = set(index.text_units[S.ID])
    old_mentions = read_mentions(path, old_ids)
    if old_mentions is None:  # an index from build_index: read its extractions back
        old_mentions = timed(costs, MENTIONS, lambda: _extract(index.text_units, ctx))
    new = timed(costs, "extract", lambda: _extract(chunked["text_units"], ctx))
    gone = set(removed[S.ID])
    mentions = {}
    for name in MENTION_TABLES:
        kept = old_mentions[name][~old_mentions[name][S.TEXT_UNIT_ID].isin(gone)]
        mentions[name] = _ordered(
            pd.concat([kept, new[name]], ignore_index=True), base["text_units"]
        )
    entities, relationships, loops, graph_errors = timed(
        costs, "graph", lambda: _graph(mentions, old_mentions, index, ctx, base["text_units"])
    )
    errors = index.errors
    kept_errors = errors[errors[S.STAGE].isin(["extract", "glean"]) & ~errors[S.ITEM_ID].isin(gone)]
    # alias self-loops and ungrounded sentences are found again (``loops``)
    kept_dropped = index.dropped[
        ~index.dropped[S.TEXT_UNIT_ID].isin(gone)
        & ~index.dropped[S.REASON].isin([ALIAS_SELF_LOOP, UNGROUNDED])
    ]
    found_again = [loops] if len(loops) else []
    tables = {
        **base,
        **mentions,
        "entities": entities,
        "relationships": relationships,
        "text_units": link_text_units(base["text_units"], entities, relationships),
        "errors": pd.concat([kept_errors, new["errors"], graph_errors], ignore_index=True),
        "dropped": pd.concat([kept_dropped, new["dropped"], *found_again], ignore_index=True),
    }
    tables = timed(costs, "communities", lambda: communities_stage(tables, ctx))
    old_reports, old_communities = index.community_reports, index.communities
    return timed(costs, "reports", lambda: _reports(tables, old_reports, old_communities, ctx))
