"""Add documents to an index, or delete them, without re-extracting the rest.

An index keeps each chunk's extracted mentions (``mentions/``): an update extracts only new
chunks, merges the graph again from the kept mentions, re-summarizes only entities whose
descriptions changed, and rewrites only reports of changed communities. An index without
``mentions/`` reads its extractions back from the cache once (counted apart as ``mentions``).
``index.method = "nlp"`` reads the whole corpus at once, so it simply runs again (no LLM call).
"""

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
from graphrag.index.store import load_index, write_index
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
        lines = [
            f"index ({self.method}) updated in {self.out}: added "
            f"{self.added_documents or 'none'}, deleted "
            f"{self.deleted_documents or 'none'}",
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
    empty = {"errors": pd.DataFrame(columns=S.ERROR_COLUMNS)}
    return extract_stage({**empty, "text_units": text_units}, ctx)


def _graph(
    mentions: Tables,
    old_mentions: Tables,
    old_entities: pd.DataFrame,
    ctx: IndexContext,
    text_units: pd.DataFrame,
    old_text_units: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships, dropped alias self-loops, errors) merged as a full
    build would; only entities whose descriptions differ from ``old_mentions``' are summarized."""
    before, _, _ = merge_graph_mentions(
        old_mentions["entity_mentions"],
        old_mentions["relationship_mentions"],
        old_text_units,
        ctx.settings.index,
    )
    description_of = dict(zip(old_entities[S.ID], old_entities[S.DESCRIPTION], strict=True))
    known = {
        eid: (list(descriptions), description_of[eid])
        for eid, descriptions in zip(before[S.ID], before[S.DESCRIPTIONS], strict=True)
        if eid in description_of
    }
    return merge_and_summarize(
        mentions["entity_mentions"], mentions["relationship_mentions"], text_units, ctx, known
    )


def _reports(
    tables: Tables, old_reports: pd.DataFrame, old_communities: pd.DataFrame, ctx: IndexContext
) -> tuple[Tables, int]:
    """Return the tables with community reports, keeping (and counting) those of communities
    whose members (the id) and relationships are unchanged."""
    communities = tables["communities"]
    old_relationships = {
        cid: sorted(rids)
        for cid, rids in zip(
            old_communities[S.ID], old_communities[S.RELATIONSHIP_IDS], strict=True
        )
    }
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
    errors_table = pd.concat([tables["errors"], errors], ignore_index=True)
    return {**tables, "community_reports": reports, "errors": errors_table}, len(kept_rows)


def _unit_order(text_units: pd.DataFrame) -> pd.DataFrame:
    """Return the text units in a fresh build's order (document id, then position)."""
    first_document = text_units[S.DOCUMENT_IDS].map(lambda ids: ids[0])
    order = sorted(
        range(len(text_units)),
        key=lambda i: (first_document.iloc[i], int(text_units[S.START_TOKEN].iloc[i])),
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
    # An index is updated with the method it was built with: LLM mentions merged into an
    # nlp graph (or the reverse) would mix two kinds of entity; a lazy index stays lazy.
    built = index.manifest.get("settings", {}).get("index", {})
    built_with = built.get("method", "llm")
    index_settings = replace(settings.index, method=built_with, lazy_reports=is_lazy(index))
    settings = replace(settings, index=index_settings)
    had = {FACT_EMBEDDINGS} if S.FACT_EMBEDDING in index.relationships else set()
    ctx = IndexContext(settings, llm, embedder, progress, artifacts_to_build(settings) | had)
    costs: dict[str, dict[str, float]] = {}
    unknown = sorted(set(delete) - set(index.documents[S.ID]))
    if unknown:
        known = ", ".join(sorted(index.documents[S.ID]))
        raise IncrementalError(f"cannot delete {unknown}: not in index {path} (it has {known})")
    new_documents = pd.DataFrame(columns=index.documents.columns)
    if add is not None:
        loaded = load_documents(add, settings.chunking.max_document_tokens)
        again = sorted(set(loaded.documents[S.ID]) & set(index.documents[S.ID]) - set(delete))
        if again:
            raise IncrementalError(
                f"documents {again} of {add} are already in index {path}; delete them first "
                "(--delete) to replace them"
            )
        new_documents = loaded.documents
    chunked = timed(costs, "chunk", lambda: chunk_stage({"documents": new_documents}, ctx))
    unit_columns = list(chunked["text_units"].columns)
    removed = index.text_units[
        index.text_units[S.DOCUMENT_IDS].map(lambda ids: bool(set(ids) & set(delete)))
    ]
    old_units = index.text_units[unit_columns]
    kept_units = old_units[~old_units[S.ID].isin(removed[S.ID])]
    text_units = _unit_order(pd.concat([kept_units, chunked["text_units"]], ignore_index=True))
    documents = pd.concat(
        [index.documents[~index.documents[S.ID].isin(delete)], chunked["documents"]],
        ignore_index=True,
    ).sort_values(S.ID, ignore_index=True)
    base = {"documents": documents, "text_units": text_units}
    if settings.index.method == "nlp":
        tables, reused = _rebuild_nlp(base, ctx, costs)
    else:
        tables, reused = _update_llm(base, index, path, removed, chunked, ctx, costs)
    tables = timed(costs, "embed", lambda: embed_stage(tables, ctx))
    summary = UpdateSummary(
        path,
        sorted(new_documents[S.ID]),
        sorted(delete),
        len(chunked["text_units"]),
        len(removed),
        len(tables["community_reports"]) - reused,
        reused,
        method=built_with,
        stages=costs,
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
    base: Tables,
    index,  # noqa: ANN001 - graphrag.index.store.Index
    path: Path,
    removed: pd.DataFrame,
    chunked: Tables,
    ctx: IndexContext,
    costs: dict,
) -> tuple[Tables, int]:
    """Extract only the new chunks, merge with the kept mentions, summarize changed entities,
    re-cluster, and rewrite only the reports of changed communities."""
    old_ids = set(index.text_units[S.ID])
    old_mentions = read_mentions(path, old_ids)
    if old_mentions is None:  # an index from build_index: read its extractions back
        old_mentions = timed(costs, MENTIONS, lambda: _extract(index.text_units, ctx))
    new = timed(costs, "extract", lambda: _extract(chunked["text_units"], ctx))
    gone = set(removed[S.ID])
    mentions = {
        name: _ordered(
            pd.concat(
                [old_mentions[name][~old_mentions[name][S.TEXT_UNIT_ID].isin(gone)], new[name]],
                ignore_index=True,
            ),
            base["text_units"],
        )
        for name in MENTION_TABLES
    }
    entities, relationships, loops, graph_errors = timed(
        costs,
        "graph",
        lambda: _graph(
            mentions, old_mentions, index.entities, ctx, base["text_units"], index.text_units
        ),
    )
    kept_errors = index.errors[
        index.errors[S.STAGE].isin(["extract", "glean"]) & ~index.errors[S.ITEM_ID].isin(gone)
    ]
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
