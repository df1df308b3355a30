"""The stages of the LLM pipeline, each ``(tables, context) -> tables``, and their shared
context; pipeline.py orders them, nlp_stages.py swaps some, incremental.py reuses them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import pandas as pd

from graphrag import schemas as S
from graphrag.index.artifacts import FACT_EMBEDDINGS
from graphrag.index.extract.nlp import trim_text
from graphrag.index.extract.stage import extract_graph
from graphrag.index.graph import merge
from graphrag.index.graph.communities import communities_table, detect_communities
from graphrag.index.graph.merge import add_degrees, entity_edges, fact_texts, node_degrees
from graphrag.index.reports.write import REPORT_COLUMNS, report_row, write_community_reports
from graphrag.index.run_summary import Tables
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings, Settings
from graphrag.text.documents import chunk_documents
from graphrag.text.embeddings import Embedder

REPORT_FINDINGS = 5  # entities a template report describes, highest degree first


@dataclass
class IndexContext:
    settings: Settings
    llm: ChatLLM
    embedder: Embedder
    progress: bool = True
    # the optional artifacts to build (graphrag/index/artifacts.py); none by default
    artifacts: frozenset[str] = frozenset()


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
    entities, relationships, errors, dropped = extract_graph(
        tables["text_units"], ctx.llm, ctx.settings.index, ctx.progress
    )
    mentions = {"entity_mentions": entities, "relationship_mentions": relationships}
    return {**tables, **mentions, "dropped": dropped, "errors": _errors(tables, errors)}


def merge_and_summarize(
    entity_mentions, relationship_mentions, text_units, ctx: IndexContext, known: dict | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships, alias self-loops, errors): mentions merged, summarized and
    given degrees; an entity whose descriptions equal ``known``'s keeps its description."""
    index = ctx.settings.index
    entities, relationships, loops = merge.merge_graph_mentions(
        entity_mentions, relationship_mentions, text_units, index
    )
    known = known or {}
    same = [
        eid in known and known[eid][0] == list(descriptions)
        for eid, descriptions in zip(entities[S.ID], entities[S.DESCRIPTIONS], strict=True)
    ]
    asked = entities[~pd.Series(same, index=entities.index, dtype=bool)].reset_index(drop=True)
    summarized, errors = merge.summarize_entities(asked, ctx.llm, index, ctx.progress)
    description_of = {eid: known[eid][1] for eid, s in zip(entities[S.ID], same, strict=True) if s}
    description_of.update(zip(summarized[S.ID], summarized[S.DESCRIPTION], strict=True))
    entities = entities.drop(columns=[S.DESCRIPTIONS])
    entities[S.DESCRIPTION] = entities[S.ID].map(description_of)
    relationships, more = merge.summarize_relationships(relationships, ctx.llm, ctx.progress)
    edges = entity_edges(entities, relationships)
    entities, relationships = add_degrees(entities, relationships, node_degrees(entities, edges))
    return entities, relationships, loops, _with_rows(errors, more)


def graph_stage(tables: Tables, ctx: IndexContext) -> Tables:
    """Merge the mentions into the entity graph and link each text unit to what it gave."""
    entities, relationships, loops, errors = merge_and_summarize(
        tables["entity_mentions"], tables["relationship_mentions"], tables["text_units"], ctx
    )
    return {
        **with_graph(tables, entities, relationships),
        "dropped": _with_rows(tables["dropped"], loops),
        "errors": _errors(tables, errors),
    }


def with_graph(tables: Tables, entities: pd.DataFrame, relationships: pd.DataFrame) -> Tables:
    """Return ``tables`` with the graph in place of the mentions, text units linked to it."""
    rest = {k: v for k, v in tables.items() if not k.endswith("_mentions")}
    text_units = link_text_units(tables["text_units"], entities, relationships)
    return {**rest, "entities": entities, "relationships": relationships, "text_units": text_units}


def link_text_units(
    text_units: pd.DataFrame, entities: pd.DataFrame, relationships: pd.DataFrame
) -> pd.DataFrame:
    """Return the text units with the ids of the entities and relationships found in each."""
    text_units = text_units.copy()
    for column, frame in ((S.ENTITY_IDS, entities), (S.RELATIONSHIP_IDS, relationships)):
        owners = frame[[S.ID, S.TEXT_UNIT_IDS]].explode(S.TEXT_UNIT_IDS)
        ids_of = owners.groupby(S.TEXT_UNIT_IDS)[S.ID].apply(list)
        text_units[column] = [ids_of.get(u, []) for u in text_units[S.ID]]
    return text_units


def communities_stage(tables: Tables, ctx: IndexContext) -> Tables:
    index = ctx.settings.index
    edges = entity_edges(tables["entities"], tables["relationships"])
    clusters = detect_communities(edges, index.max_cluster_size)  # its fixed seed
    communities = communities_table(clusters, tables["entities"], tables["relationships"])
    return {**tables, "communities": communities}


def prose_communities(communities: pd.DataFrame, settings: IndexSettings) -> pd.Series:
    """Return which ``communities`` get an LLM report (the others, fewer than
    ``min_report_entities`` entities, get a template)."""
    return communities[S.ENTITY_IDS].map(len) >= settings.min_report_entities


def template_report_row(community: pd.Series, entities, relationships, edge_kind: str) -> dict:
    """Return the community_reports row of a report written from the community's own tables,
    with no LLM call (``edge_kind`` names the relationships: "co-occurrence " in the nlp mode)."""
    members = entities[entities[S.ID].isin(community[S.ENTITY_IDS])]
    members = members.sort_values([S.DEGREE, S.HUMAN_ID], ascending=[False, True])
    inner = relationships[relationships[S.ID].isin(community[S.RELATIONSHIP_IDS])]
    top = list(members[S.TITLE][:3])
    title = ", ".join(top[:-1]) + (" and " if len(top) > 1 else "") + top[-1] if top else "Empty"
    kinds = members[S.TYPE].value_counts()
    summary = (
        f"{len(members)} entities ({', '.join(f'{n} {k}' for k, n in kinds.items())}) "
        f"linked by {len(inner)} {edge_kind}relationships; most connected: {', '.join(top)}."
    )
    findings = [
        {"summary": row[S.TITLE], "explanation": trim_text(row[S.DESCRIPTION], 300)}
        for _, row in members.head(REPORT_FINDINGS).iterrows()
    ]
    report = {
        "title": title,
        "summary": summary,
        # rank: share of the graph's relationships inside the community, on the 0-10 scale
        "rating": round(10 * len(inner) / max(len(relationships), 1), 2),
        "rating_explanation": "template report: rank is the community's share of relationships",
        "findings": findings,
    }
    return report_row(community, report, "template")


def template_reports(communities: pd.DataFrame, tables: Tables, edge_kind: str) -> pd.DataFrame:
    """Return the template reports of ``communities`` (no LLM call), by community number."""
    rows = [
        template_report_row(c, tables["entities"], tables["relationships"], edge_kind)
        for _, c in communities.iterrows()
    ]
    return pd.DataFrame(rows, columns=REPORT_COLUMNS).sort_values(S.COMMUNITY, ignore_index=True)


def write_reports(
    communities: pd.DataFrame, tables: Tables, ctx: IndexContext, known_reports: dict | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (community_reports, errors) of ``communities``: by the LLM, or from a template
    below ``index.min_report_entities`` entities (a parent reads those like any report)."""
    entities, relationships, index = tables["entities"], tables["relationships"], ctx.settings.index
    small = ~prose_communities(communities, index)
    # an nlp graph's relationships are co-occurrences, and its templates say so
    edge_kind = "co-occurrence " if index.method == "nlp" else ""
    templates = template_reports(communities[small], tables, edge_kind)
    if index.lazy_reports:  # the rest are written by the queries that read them
        return templates, pd.DataFrame(columns=S.ERROR_COLUMNS)
    known = dict(known_reports or {})
    known |= dict(zip(templates[S.COMMUNITY], templates[S.FULL_CONTENT], strict=True))
    reports, errors = write_community_reports(
        communities[~small], entities, relationships, ctx.llm, index, ctx.progress, known
    )
    if len(templates):
        reports = pd.concat([reports, templates], ignore_index=True)
        reports = reports.sort_values(S.COMMUNITY).reset_index(drop=True)
    return reports, errors


def reports_stage(tables: Tables, ctx: IndexContext) -> Tables:
    reports, errors = write_reports(tables["communities"], tables, ctx)
    return {**tables, "community_reports": reports, "errors": _errors(tables, errors)}


def vectors(embedder: Embedder, texts: list[str]) -> list[list[float]]:
    """Return the embeddings of ``texts`` as lists of floats (none for no text)."""
    return [list(map(float, v)) for v in embedder.embed(texts)] if texts else []


def embed_stage(tables: Tables, ctx: IndexContext) -> Tables:
    """Embed what query methods match a question against: chunks, entity descriptions and
    community reports; relationships as facts (PPR's seeds) when ``ctx.artifacts`` asks."""
    embed = partial(vectors, ctx.embedder)
    text_units = tables["text_units"].copy()
    text_units[S.TEXT_EMBEDDING] = embed(list(text_units[S.TEXT]))
    entities = tables["entities"].copy()
    entities[S.DESCRIPTION_EMBEDDING] = embed(
        [f"{t}: {d}" for t, d in zip(entities[S.TITLE], entities[S.DESCRIPTION], strict=True)]
    )
    relationships = tables["relationships"].copy()
    if FACT_EMBEDDINGS in ctx.artifacts:
        relationships[S.FACT_EMBEDDING] = embed(fact_texts(relationships))
    reports = tables["community_reports"].copy()
    reports[S.FULL_CONTENT_EMBEDDING] = embed(list(reports[S.FULL_CONTENT]))
    embedded = {"text_units": text_units, "entities": entities, "relationships": relationships}
    return {**tables, **embedded, "community_reports": reports}
