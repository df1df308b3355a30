"""Community reports written when a query first reads them (``index.lazy_reports``).

Reports are the largest share of an index's LLM calls on short documents (MuSiQue's LLM
index: 86 of 160 calls, 1,031 of 2,637 completion tokens per 1,000 corpus tokens), and naive
RAG, HyDE, multi-query and PPR never read one. A lazy index is built with the free template
reports of communities too small for prose and nothing else; local search, global search and
DRIFT ask :func:`aensure_reports` for the communities they are about to read, and the
missing ones are written then, with the index's own report settings, the same prompts and
the same order (a community after its sub-communities, reading their reports) as indexing
would have used. So a lazy index answers exactly as an eager one, and the content-addressed
LLM cache keeps every report: the next query, or the next process, pays nothing again. The
written reports join the loaded index's ``community_reports`` table (in memory, embedded);
the folder on disk keeps the templates, so its checksums never change under a reader.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable

import pandas as pd

from graphrag import schemas as S
from graphrag.index.reports.write import awrite_community_reports
from graphrag.index.stages import prose_communities
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings
from graphrag.text.embeddings import Embedder

_merge = threading.Lock()  # queries of one index may run on several threads' event loops


def built_settings(index: Index) -> IndexSettings:
    """Return the index settings ``index`` was built with (its manifest's), so reports written
    later match those indexing would have written, whatever the caller's settings are now."""
    saved = index.manifest.get("settings", {}).get("index", {})
    known = {f.name for f in dataclasses.fields(IndexSettings)}
    return dataclasses.replace(IndexSettings(), **{k: v for k, v in saved.items() if k in known})


def is_lazy(index: Index) -> bool:
    return bool(index.manifest.get("settings", {}).get("index", {}).get("lazy_reports", False))


def missing_communities(index: Index, wanted: Iterable[int] | None = None) -> list[int]:
    """Return the communities to write so that every ``wanted`` one (None: all) has a report:
    each wanted community without one, and, below it, every sub-community without one (a
    parent reads its children's reports). Communities whose report already failed in this
    index (an ``errors`` row) are not retried: a failure is reported once, as in indexing."""
    communities = index.communities
    have = set(index.community_reports[S.COMMUNITY].astype(int))
    failed_ids = set(index.errors.loc[index.errors[S.STAGE] == "reports", S.ITEM_ID])
    have |= set(communities.loc[communities[S.ID].isin(failed_ids), S.COMMUNITY].astype(int))
    children = dict(zip(communities[S.COMMUNITY].astype(int), communities[S.CHILDREN], strict=True))
    stack = list(children) if wanted is None else [int(c) for c in wanted]
    todo: set[int] = set()
    while stack:
        community = stack.pop()
        if community in have or community in todo or community not in children:
            continue
        todo.add(community)
        stack += [int(c) for c in children[community]]
    return sorted(todo)


async def aensure_reports(
    index: Index, wanted: Iterable[int] | None, llm: ChatLLM, embedder: Embedder
) -> int:
    """Write the reports ``wanted`` needs (:func:`missing_communities`) into ``index``'s
    ``community_reports`` and return how many were written; nothing for an eager index.

    Two queries asking for the same report at once send one LLM call (the cache lets one
    request per prompt through); the table is replaced, never changed in place, so a reader
    holding the old one is not disturbed.
    """
    if not is_lazy(index):
        return 0
    todo = missing_communities(index, wanted)
    if not todo:
        return 0
    communities = index.communities
    settings = built_settings(index)
    known = dict(
        zip(
            index.community_reports[S.COMMUNITY].astype(int),
            index.community_reports[S.FULL_CONTENT],
            strict=True,
        )
    )
    reports, errors = await awrite_community_reports(
        communities[communities[S.COMMUNITY].isin(todo)],
        index.entities,
        index.relationships,
        llm,
        settings,
        progress=False,
        known_reports=known,
        # the children a parent may substitute, exactly as indexing passes them
        hierarchy=communities[prose_communities(communities, settings)],
    )
    reports[S.FULL_CONTENT_EMBEDDING] = (
        [list(map(float, v)) for v in embedder.embed(list(reports[S.FULL_CONTENT]))]
        if len(reports)
        else []
    )
    with _merge:
        current = index.community_reports
        new = reports[~reports[S.COMMUNITY].isin(current[S.COMMUNITY])]
        index.community_reports = (
            pd.concat([current, new], ignore_index=True)
            .sort_values(S.COMMUNITY)
            .reset_index(drop=True)
        )
        old_errors = index.errors
        fresh = errors[~errors[S.ITEM_ID].isin(old_errors[S.ITEM_ID])]
        if len(fresh):
            index.errors = pd.concat([old_errors, fresh], ignore_index=True)
    return len(new)
