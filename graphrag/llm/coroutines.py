"""Running coroutines from any caller: blocking from sync code, many at once with progress.

Every LLM call is a coroutine (one transport path); these two functions are how the rest of
the workbench runs them: scripts, notebooks (inside Jupyter's running loop) and the stages
that send one call per item.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, even inside Jupyter's running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    result: dict[str, Any] = {}
    # The worker thread runs in a copy of this context, so usage scopes opened by the caller
    # (track_usage) still count the calls made on the worker's loop.
    context = contextvars.copy_context()

    def worker() -> None:
        try:
            result["value"] = context.run(asyncio.run, coro)  # type: ignore[arg-type]
        except BaseException as err:  # noqa: BLE001 - handed back to the caller's thread
            result["error"] = err

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


async def gather_with_progress(
    coros: Iterable[Awaitable[T]], desc: str, disable: bool = False
) -> list[T]:
    """Await all ``coros`` concurrently (the transport bounds live calls) with a progress bar.

    Results come back in input order; exceptions are returned in place, not raised, so one
    failed item never loses the others' finished work.
    """
    coros = list(coros)
    results: list[Any] = [None] * len(coros)

    async def run(i: int, coro: Awaitable[T]) -> None:
        try:
            results[i] = await coro
        except Exception as err:  # noqa: BLE001 - reported by the caller per item
            results[i] = err
        bar.update(1)

    with tqdm(total=len(coros), desc=desc, disable=disable, leave=False) as bar:
        await asyncio.gather(*(run(i, c) for i, c in enumerate(coros)))
    return results
