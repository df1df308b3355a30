"""Run one LLM call per item of an indexing stage: concurrently, a failure an ``errors`` row
the next run retries (the others' work kept), a replay cache miss stopping the run."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

import pandas as pd

from graphrag import schemas as S
from graphrag.llm.cache import CacheMissError
from graphrag.llm.coroutines import gather_with_progress, run_sync

T = TypeVar("T")


def error_row(stage: str, item_id: Any, error: BaseException | str) -> dict[str, Any]:
    """One row of the index's errors table, naming the error's type when it is an exception."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return {S.STAGE: stage, S.ITEM_ID: item_id, S.ERROR: text}


def error_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=S.ERROR_COLUMNS)


def run_llm_stage(
    stage: str, item_ids: Sequence[Any], calls: Sequence[Awaitable[T]], progress: bool = True
) -> tuple[list[T | None], list[dict[str, Any]]]:
    """Return each item's result (None where it failed) and the error rows of the failures."""
    return run_sync(arun_llm_stage(stage, item_ids, calls, progress))


async def arun_llm_stage(
    stage: str, item_ids: Sequence[Any], calls: Sequence[Awaitable[T]], progress: bool = True
) -> tuple[list[T | None], list[dict[str, Any]]]:
    """:func:`run_llm_stage` for a caller already in a coroutine (lazy reports)."""
    results = await gather_with_progress(calls, stage, not progress)
    kept: list[T | None] = []
    errors: list[dict[str, Any]] = []
    for item_id, result in zip(item_ids, results, strict=True):
        if isinstance(result, CacheMissError):
            raise result
        if isinstance(result, Exception):
            errors.append(error_row(stage, item_id, result))
            kept.append(None)
        else:
            kept.append(result)
    return kept, errors
