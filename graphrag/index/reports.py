"""Community reports: one LLM-written JSON report per community, leaves first.

A community's context lists its entities and relationships (highest degree first) within
``report_context_tokens``. A parent whose own list does not fit uses its children's reports
instead, then fills what room is left with its strongest relationships: this is why the
deepest level is written first.
"""

from __future__ import annotations

import pandas as pd

from graphrag import prompts, tokens
from graphrag.config import IndexSettings
from graphrag.index import schemas as S
from graphrag.index.llm_stage import error_table, run_llm_stage
from graphrag.llm import ChatLLM

REPORT_COLUMNS = [
    *S.COMMUNITY_KEY_COLUMNS,
    S.SUMMARY,
    S.FULL_CONTENT,
    S.RATING,
    S.RATING_EXPLANATION,
    S.FINDINGS,
    S.SIZE,
    S.CONTEXT_SOURCE,
]


def _fit(lines: list[str], budget: int) -> tuple[list[str], bool]:
    """Return the leading lines that fit in ``budget`` tokens, and whether all did (a table's
    rows are ranked: packing stops at the first row that does not fit)."""
    kept = tokens.pack(lines, budget, overhead=1, skip=False)
    return [lines[i] for i in kept], len(kept) == len(lines)


def _entity_lines(community: pd.Series, entities: pd.DataFrame) -> list[str]:
    rows = entities[entities[S.ID].isin(community[S.ENTITY_IDS])]
    rows = rows.sort_values([S.DEGREE, S.HUMAN_ID], ascending=[False, True])
    cell = prompts.table_cell  # LLM-written fields must not add columns or rows
    return [
        f"{r[S.HUMAN_ID]}|{cell(r[S.TITLE])}|{cell(r[S.TYPE])}|{cell(r[S.DESCRIPTION])}"
        for _, r in rows.iterrows()
    ]


def _relationship_lines(community: pd.Series, relationships: pd.DataFrame) -> list[str]:
    rows = relationships[relationships[S.ID].isin(community[S.RELATIONSHIP_IDS])]
    rows = rows.sort_values(
        [S.COMBINED_DEGREE, S.WEIGHT, S.HUMAN_ID], ascending=[False, False, True]
    )
    cell = prompts.table_cell
    return [
        f"{r[S.HUMAN_ID]}|{cell(r[S.SOURCE_ENTITY])}|{cell(r[S.TARGET_ENTITY])}|"
        f"{cell(r[S.DESCRIPTION])}"
        for _, r in rows.iterrows()
    ]


def report_text(report: dict) -> str:
    """Return a report as the Markdown that query methods read (``full_content``)."""
    findings = "\n".join(f"- {f['summary']}: {f['explanation']}" for f in report["findings"])
    return f"# {report['title']}\n\n{report['summary']}\n\n{findings}"


def community_context(
    community: pd.Series,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    child_reports: list[str],
    budget: int,
) -> tuple[str, str]:
    """Return (context text, source) for one community within ``budget`` tokens."""
    entity_lines = _entity_lines(community, entities)
    relationship_lines = _relationship_lines(community, relationships)
    raw = [
        "Entities (id|name|type|description)",
        *entity_lines,
        "Relationships (id|source|target|description)",
        *relationship_lines,
    ]
    kept, complete = _fit(raw, budget)
    if complete or not child_reports:
        return "\n".join(kept), "entities"
    reports, _ = _fit(["Reports of its sub-communities", *child_reports], budget * 2 // 3)
    rest = budget - sum(tokens.count_tokens(line) + 1 for line in reports)
    extra, _ = _fit(["Relationships (id|source|target|description)", *relationship_lines], rest)
    return "\n".join(reports + extra), "child_reports"


async def _write_report(llm: ChatLLM, context: str, settings: IndexSettings) -> dict:
    return await llm.ajson(
        prompts.community_report(context),
        prompts.report_schema(settings.report_max_findings),
        name="community_report",
    )


def write_community_reports(
    communities: pd.DataFrame,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    llm: ChatLLM,
    settings: IndexSettings,
    progress: bool = True,
    known_reports: dict[int, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (community_reports, errors): reports per level, deepest level first, each
    level's calls run concurrently. ``known_reports`` ({community: full_content}) are the
    reports of communities not in ``communities`` that a parent may read (incremental
    indexing rewrites only the communities that changed)."""
    done: dict[int, str] = dict(known_reports or {})
    rows, errors = [], []
    for level in sorted(communities[S.LEVEL].unique(), reverse=True):
        batch = communities[communities[S.LEVEL] == level]
        contexts = [
            community_context(
                c,
                entities,
                relationships,
                [done[k] for k in c[S.CHILDREN] if k in done],
                settings.report_context_tokens,
            )
            for _, c in batch.iterrows()
        ]
        results, failed = run_llm_stage(
            "reports",
            list(batch[S.ID]),
            [_write_report(llm, text, settings) for text, _ in contexts],
            progress,
        )
        errors += failed
        for (_, community), (_, source), result in zip(
            batch.iterrows(), contexts, results, strict=True
        ):
            if result is None:
                continue
            full = report_text(result)
            done[int(community[S.COMMUNITY])] = full
            rows.append(
                {
                    S.ID: community[S.ID],
                    S.HUMAN_ID: int(community[S.HUMAN_ID]),
                    S.COMMUNITY: int(community[S.COMMUNITY]),
                    S.LEVEL: int(level),
                    S.PARENT: int(community[S.PARENT]),
                    S.CHILDREN: community[S.CHILDREN],
                    S.TITLE: result["title"],
                    S.SUMMARY: result["summary"],
                    S.FULL_CONTENT: full,
                    S.RATING: float(result["rating"]),
                    S.RATING_EXPLANATION: result["rating_explanation"],
                    S.FINDINGS: result["findings"],
                    S.SIZE: int(community[S.SIZE]),
                    S.CONTEXT_SOURCE: source,
                }
            )
    reports = pd.DataFrame(rows, columns=REPORT_COLUMNS).sort_values(S.COMMUNITY)
    return reports.reset_index(drop=True), error_table(errors)
