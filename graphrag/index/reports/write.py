"""Community reports: one LLM-written JSON report per community, deepest level first, so a
parent's context (as Microsoft GraphRAG builds it) can start from its children's reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.llm_stage import arun_llm_stage, error_table
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import run_sync
from graphrag.settings import IndexSettings
from graphrag.text import lang, tokens

_CONTENT = [S.SUMMARY, S.FULL_CONTENT, S.RATING, S.RATING_EXPLANATION, S.FINDINGS]
REPORT_COLUMNS = [*S.COMMUNITY_KEY_COLUMNS, *_CONTENT, S.SIZE, S.CONTEXT_SOURCE]
CHILD_REPORT_HEADER = "Reports of its sub-communities"
CHILD_SUMMARY_HEADER = "Summaries of its sub-communities (id|title|summary)"
REPORT_MAX_TOKENS = 1200  # completion cap of a report

REPORT_SCHEMA_NAME = "community_report"  # names the JSON schema of a report request


def report_text(report: dict) -> str:
    """Return a report as the Markdown that query methods read (``full_content``)."""
    findings = "\n".join(f"- {f['summary']}: {f['explanation']}" for f in report["findings"])
    return f"# {report['title']}\n\n{report['summary']}\n\n{findings}"


def report_row(community: pd.Series, report: dict, source: str) -> dict:
    """Return the community_reports row of ``report`` (in the LLM reply's shape)."""
    ints = {c: int(community[c]) for c in (S.HUMAN_ID, S.COMMUNITY, S.LEVEL, S.PARENT)}
    return {
        S.ID: community[S.ID],
        **ints,
        S.CHILDREN: community[S.CHILDREN],
        S.TITLE: report["title"],
        S.SUMMARY: report["summary"],
        S.FULL_CONTENT: report_text(report),
        S.RATING: float(report["rating"]),
        S.RATING_EXPLANATION: report["rating_explanation"],
        S.FINDINGS: report["findings"],
        S.SIZE: int(community[S.SIZE]),
        S.CONTEXT_SOURCE: source,
    }


@dataclass
class ChildCommunity:
    """A sub-community as its parent's context sees it (``report`` None when it has none)."""

    community: int
    entity_ids: list[str]
    report: str | None


def report_title_and_summary(full_content: str) -> tuple[str, str]:
    """Return (title, summary) of a report's ``full_content`` (as :func:`report_text` wrote it)."""
    head, _, rest = full_content.partition("\n\n")
    return head.removeprefix("# "), rest.partition("\n\n")[0]


def community_context(
    community: pd.Series, entities, relationships, children: list[ChildCommunity], budget: int
) -> tuple[str, str]:
    """Return (context, source) of a community within ``budget``: reports of substituted children,
    summaries of the other written ones, then entities and relationships; while it overflows,
    the largest written child's lines give way to its report."""
    cell = prompts.table_cell  # LLM-written fields must not add columns or rows
    members = entities[entities[S.ID].isin(community[S.ENTITY_IDS])]
    members = members.sort_values([S.DEGREE, S.HUMAN_ID], ascending=[False, True])
    entity_line = {
        r[S.ID]: f"{r[S.HUMAN_ID]}|{cell(r[S.TITLE])}|{cell(r[S.TYPE])}|{cell(r[S.DESCRIPTION])}"
        for _, r in members.iterrows()
    }
    entity_order = list(entity_line)  # highest degree first
    inner = relationships[relationships[S.ID].isin(community[S.RELATIONSHIP_IDS])]
    order = [S.COMBINED_DEGREE, S.WEIGHT, S.HUMAN_ID]
    inner = inner.sort_values(order, ascending=[False, False, True])
    rel_ends = list(zip(inner[S.SOURCE_ID], inner[S.TARGET_ID], strict=True))
    rel_lines = [
        f"{r[S.HUMAN_ID]}|{cell(r[S.SOURCE_ENTITY])}|{cell(r[S.TARGET_ENTITY])}|"
        f"{cell(r[S.DESCRIPTION])}"
        for _, r in inner.iterrows()
    ]
    written = [c for c in children if c.report]

    def own_lines(child: ChildCommunity) -> list[str]:
        inside = set(child.entity_ids)
        return [entity_line[e] for e in entity_order if e in inside] + [
            line
            for line, (a, b) in zip(rel_lines, rel_ends, strict=True)
            if a in inside and b in inside
        ]

    by_size = sorted(
        written, key=lambda c: (-sum(tokens.count_tokens(x) for x in own_lines(c)), c.community)
    )
    for substituted in range(len(by_size) + 1):
        swapped = by_size[:substituted]
        gone = {e for c in swapped for e in c.entity_ids}
        lines = []
        if swapped:
            lines += [CHILD_REPORT_HEADER, *(c.report for c in swapped)]
        rest = [c for c in written if c not in swapped]
        if rest:
            lines.append(CHILD_SUMMARY_HEADER)
            for c in rest:
                title, summary = report_title_and_summary(c.report)
                lines.append(f"{c.community}|{cell(title)}|{cell(summary)}")
        lines += ["Entities (id|name|type|description)"]
        lines += [entity_line[e] for e in entity_order if e not in gone]
        lines += ["Relationships (id|source|target|description)"]
        lines += [
            line
            for line, (a, b) in zip(rel_lines, rel_ends, strict=True)
            if not (a in gone and b in gone)
        ]
        kept = tokens.pack(lines, budget, overhead=1, skip=False)  # leading lines that fit
        if len(kept) == len(lines):
            break
    if not written:
        source = "entities"
    elif not swapped:
        source = "child_summaries"
    else:
        source = "child_reports" if len(swapped) == len(written) else "mixed"
    return "\n".join(lines[i] for i in kept), source


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def tidy_text(text: str, cap: int) -> str:
    """Return ``text`` without repeated sentences and, when it met its ``cap`` (a loop
    guard), cut back to its last whole sentence (else word)."""
    sentences = list(dict.fromkeys(s.strip() for s in _SENTENCE_END.split(text.strip()) if s))
    tidy = " ".join(sentences)
    if len(text) < cap:
        return tidy
    whole = [s for s in sentences if s.endswith((".", "!", "?"))]
    if whole:
        return " ".join(whole)
    return tidy.rsplit(" ", 1)[0] if " " in tidy else tidy


def tidy_report(report: dict) -> dict:
    """Return a report with every string tidied and without repeated findings."""
    caps = prompts.REPORT_CAPS
    first: dict[str, dict] = {}
    for finding in report["findings"]:
        first.setdefault(finding["summary"].strip(), finding)
    findings = list(first.values())
    return {
        **report,
        "title": tidy_text(report["title"], caps["title"]),
        "summary": tidy_text(report["summary"], caps["summary"]),
        "rating_explanation": tidy_text(report["rating_explanation"], caps["rating_explanation"]),
        "findings": [
            {
                "summary": tidy_text(f["summary"], caps["finding_summary"]),
                "explanation": tidy_text(f["explanation"], caps["finding_explanation"]),
            }
            for f in findings
        ],
    }


async def _write_report(llm: ChatLLM, context: str, settings: IndexSettings) -> dict:
    findings, sentences = settings.report_max_findings, settings.report_explanation_sentences
    messages = prompts.community_report(
        context, findings, explanation_sentences=sentences, language=lang.detect(context)
    )
    schema = prompts.report_schema(findings)
    report = await llm.ajson(
        messages, schema, name=REPORT_SCHEMA_NAME, max_tokens=REPORT_MAX_TOKENS
    )
    return tidy_report(report)


def write_community_reports(*args: Any, **kwargs: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`awrite_community_reports` run to completion, for the indexing stages."""
    return run_sync(awrite_community_reports(*args, **kwargs))


async def awrite_community_reports(
    communities: pd.DataFrame,
    entities: pd.DataFrame,
    relationships: pd.DataFrame,
    llm: ChatLLM,
    settings: IndexSettings,
    progress: bool = True,
    known_reports: dict[int, str] | None = None,
    hierarchy: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (community_reports, errors), deepest level first, each level concurrently;
    ``known_reports`` a parent may read, ``hierarchy`` the children's entities (incremental
    runs)."""
    done: dict[int, str] = dict(known_reports or {})
    lookup = communities if hierarchy is None else hierarchy
    entity_ids = dict(zip(lookup[S.COMMUNITY], lookup[S.ENTITY_IDS], strict=True))
    rows, errors = [], []
    for level in sorted(communities[S.LEVEL].unique(), reverse=True):
        batch = communities[communities[S.LEVEL] == level]
        contexts = []
        for _, c in batch.iterrows():
            # a child outside ``lookup`` (incremental runs) is summarized, never substituted
            children = [
                ChildCommunity(int(k), list(entity_ids.get(k, [])), done.get(k))
                for k in c[S.CHILDREN]
            ]
            budget = settings.report_context_tokens
            contexts.append(community_context(c, entities, relationships, children, budget))
        calls = [_write_report(llm, text, settings) for text, _ in contexts]
        results, failed = await arun_llm_stage("reports", list(batch[S.ID]), calls, progress)
        errors += failed
        for (_, community), (_, source), result in zip(
            batch.iterrows(), contexts, results, strict=True
        ):
            if result is None:
                continue
            rows.append(report_row(community, result, source))
            done[int(community[S.COMMUNITY])] = rows[-1][S.FULL_CONTENT]
    reports = pd.DataFrame(rows, columns=REPORT_COLUMNS).sort_values(S.COMMUNITY)
    return reports.reset_index(drop=True), error_table(errors)
