"""Template community reports: a report in the LLM report's shape, written from the
community's own tables with no LLM call (every community of an ``index.method = "nlp"``
index, and the communities below ``index.min_report_entities`` of an LLM index)."""

from __future__ import annotations

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.nlp import trim_text
from graphrag.index.reports.write import report_row

REPORT_FINDINGS = 5  # entities described in a template report, highest degree first


def template_report_row(
    community: pd.Series,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    edge_kind: str = "co-occurrence ",
) -> dict:
    """Return the community_reports row of a report written from the community's own tables
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
    report = {
        "title": title,
        "summary": summary,
        # rank: share of the graph's relationships inside the community, on the 0-10 scale
        "rating": round(10 * len(inner) / max(len(relationships), 1), 2),
        "rating_explanation": "template report: rank is the community's share of relationships",
        "findings": findings,
    }
    return report_row(community, report, "template")
