"""Community reports written when a query first reads them (``index.lazy_reports``), with the
prompts and order indexing would use, so a lazy index answers as an eager one. Why: reports are
most of an index's LLM calls on short documents, and several methods never read one."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterable

import pandas as pd

from graphrag import schemas as S
from graphrag.index.reports.write import awrite_community_reports
from graphrag.index.stages import prose_communities, vectors
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.settings import IndexSettings
from graphrag.text.embeddings import Embedder

_merge = threading.Lock()  # queries of one index may run on several threads' event loops


def built_settings(index: Index) -> IndexSettings:
    """Return the index settings ``index`` was built with (its manifest's)."""
    saved = index.manifest.get("settings", {}).get("index", {})
    known = {f.name for f in dataclasses.fields(IndexSettings)}
    return dataclasses.replace(IndexSettings(), **{k: v for k, v in saved.items() if k in known})


def is_lazy(index: Index) -> bool:
    return bool(index.manifest.get("settings", {}).get("index", {}).get("lazy_reports", False))


def missing_communities(index: Index, wanted: Iterable[int] | None = None) -> list[int]:
    """Return the communities to write so every ``wanted`` one (None: all) and each of its
    sub-communities has a report; a report that already failed (an errors row) is not retried."""
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


def failed_reports(index: Index, wanted: Iterable[int] | None = None) -> list[str]:
    """Return "lazy report of community N: <error>" for each ``wanted`` community (None: all) of a
    lazy index whose report failed (never retried); nothing for an eager index."""
    if not is_lazy(index):
        return []
    errors = index.errors[index.errors[S.STAGE] == "reports"]
    if errors.empty:
        return []
    communities = index.communities
    number = dict(zip(communities[S.ID], communities[S.COMMUNITY].astype(int), strict=True))
    keep = None if wanted is None else {int(c) for c in wanted}
    failed = []
    for item, error in zip(errors[S.ITEM_ID], errors[S.ERROR], strict=True):
        community = number.get(item)
        if community is not None and (keep is None or community in keep):
            failed.append((community, f"lazy report of community {community}: {error}"))
    return [text for _, text in sorted(failed)]


async def aensure_reports(
    index: Index, wanted: Iterable[int] | None, llm: ChatLLM, embedder: Embedder
) -> int:
    """Write the reports ``wanted`` needs into ``index.community_reports`` (replaced, never
    changed in place) and return how many were written; nothing for an eager index."""
    if not is_lazy(index):
        return 0
    todo = missing_communities(index, wanted)
    if not todo:
        return 0
    communities = index.communities
    settings = built_settings(index)
    have = index.community_reports
    known = dict(zip(have[S.COMMUNITY].astype(int), have[S.FULL_CONTENT], strict=True))
    # the children a parent may substitute, exactly as indexing passes them
    hierarchy = communities[prose_communities(communities, settings)]
    wanted_rows = communities[communities[S.COMMUNITY].isin(todo)]
    reports, errors = await awrite_community_reports(
        wanted_rows, index.entities, index.relationships, llm, settings, False, known, hierarchy
    )
    reports[S.FULL_CONTENT_EMBEDDING] = vectors(embedder, list(reports[S.FULL_CONTENT]))
    with _merge:
        current = index.community_reports
        new = reports[~reports[S.COMMUNITY].isin(current[S.COMMUNITY])]
        merged = pd.concat([current, new], ignore_index=True).sort_values(S.COMMUNITY)
        index.community_reports = merged.reset_index(drop=True)
        old_errors = index.errors
        fresh = errors[~errors[S.ITEM_ID].isin(old_errors[S.ITEM_ID])]
        if len(fresh):
            index.errors = pd.concat([old_errors, fresh], ignore_index=True)
    return len(new)
