"""The stages of ``index.method = "nlp"``: extraction, graph and reports with no LLM call.

Chunking, communities and embeddings are the LLM pipeline's own stages, so the index has the
same tables and every query method reads it unchanged. Community reports are templates
written from the community's entities and the sentences that name them, not LLM prose: an
nlp index costs 0 LLM tokens to build, and the query methods' own calls are the only ones.
(Lazy LLM reports, written when a query first needs one, are left for a later change: every
query method reads ``community_reports`` as a ready table today.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.nlp import extract_graph_nlp, keep_frequent, pmi_weights, trim_text
from graphrag.index.graph.merge import add_degrees, build_graph, merge_entities, merge_relationships
from graphrag.index.reports.write import REPORT_COLUMNS, report_text

if TYPE_CHECKING:
    from graphrag.index.pipeline import IndexContext, Tables

REPORT_FINDINGS = 5  # entities described in a template report, highest degree first


def nlp_extract_stage(tables: Tables, ctx: IndexContext) -> Tables:
    settings = ctx.settings.index
    entity_mentions, relationship_mentions, errors, dropped = extract_graph_nlp(
        tables["text_units"], settings
    )
    entity_mentions, relationship_mentions = keep_frequent(
        entity_mentions, relationship_mentions, settings.nlp_min_chunks
    )
    relationship_mentions = pmi_weights(
        relationship_mentions,
        entity_mentions,
        len(tables["text_units"]),
        settings.nlp_top_edges_per_entity,
    )
    return {
        **tables,
        "entity_mentions": entity_mentions,
        "relationship_mentions": relationship_mentions,
        "dropped": dropped,
        "errors": errors,
    }


def nlp_graph(
    entity_mentions: pd.DataFrame, relationship_mentions: pd.DataFrame, description_chars: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships): merged mentions, descriptions joined and trimmed."""
    entities = merge_entities(entity_mentions)
    relationships = merge_relationships(relationship_mentions, entities)
    entities[S.DESCRIPTION] = [
        trim_text(" ".join(d), description_chars) for d in entities["descriptions"]
    ]
    entities = entities.drop(columns=["descriptions"])
    return add_degrees(entities, relationships, build_graph(entities, relationships))


def nlp_graph_stage(tables: Tables, ctx: IndexContext) -> Tables:
    from graphrag.index.pipeline import link_text_units

    entities, relationships = nlp_graph(
        tables["entity_mentions"],
        tables["relationship_mentions"],
        2 * ctx.settings.index.nlp_description_chars,
    )
    rest = {k: v for k, v in tables.items() if not k.endswith("_mentions")}
    return {
        **rest,
        "entities": entities,
        "relationships": relationships,
        "text_units": link_text_units(tables["text_units"], entities, relationships),
    }


def template_report(
    community: pd.Series,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    edge_kind: str = "co-occurrence ",
) -> dict:
    """Return a report in the LLM report's shape, written from the community's own tables
    (``edge_kind`` names the relationships: co-occurrence ones in the nlp mode)."""
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
    return {
        "title": title,
        "summary": summary,
        # rank: share of the graph's relationships inside the community, on the 0-10 scale
        "rating": round(10 * len(inner) / max(len(relationships), 1), 2),
        "rating_explanation": "template report: rank is the community's share of relationships",
        "findings": findings,
    }


def template_report_row(
    community: pd.Series,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    edge_kind: str = "co-occurrence ",
) -> dict:
    """Return the community_reports row of a community's template report."""
    report = template_report(community, entities, relationships, edge_kind)
    return {
        S.ID: community[S.ID],
        S.HUMAN_ID: int(community[S.HUMAN_ID]),
        S.COMMUNITY: int(community[S.COMMUNITY]),
        S.LEVEL: int(community[S.LEVEL]),
        S.PARENT: int(community[S.PARENT]),
        S.CHILDREN: community[S.CHILDREN],
        S.TITLE: report["title"],
        S.SUMMARY: report["summary"],
        S.FULL_CONTENT: report_text(report),
        S.RANK: float(report["rating"]),
        S.RATING_EXPLANATION: report["rating_explanation"],
        S.FINDINGS: report["findings"],
        S.SIZE: int(community[S.SIZE]),
        S.CONTEXT_SOURCE: "template",
    }


def template_reports_stage(tables: Tables, ctx: IndexContext) -> Tables:
    rows = [
        template_report_row(community, tables["entities"], tables["relationships"])
        for _, community in tables["communities"].iterrows()
    ]
    reports = pd.DataFrame(rows, columns=REPORT_COLUMNS).sort_values(S.COMMUNITY)
    return {**tables, "community_reports": reports.reset_index(drop=True)}
