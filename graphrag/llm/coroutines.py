"""Running coroutines (every LLM call is one): blocking from sync code, many with progress."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from tqdm import tqdm

from graphrag.llm.progress import gathering_stage

T = TypeVar("T")


class TaskCollector(Generic[T]):
    """A list that the code run inside :meth:`collecting` (and the tasks it starts: they copy
    the context, not the list) appends to with :meth:`add`; outside, :meth:`add` does nothing.
    So a caller learns what its own work met, although other tasks run concurrently."""

    def __init__(self, name: str) -> None:
        self._current: contextvars.ContextVar[list[T] | None] = contextvars.ContextVar(
            name, default=None
        )

    @contextmanager
    def collecting(self) -> Iterator[list[T]]:
        """Yield the list that collects what is added inside the block."""
        found: list[T] = []
        token = self._current.set(found)
        try:
            yield found
        finally:
            self._current.reset(token)

    def add(self, item: T) -> None:
        found = self._current.get()
        if found is not None:
            found.append(item)


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, even inside Jupyter's running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    # a thread with its own loop, in a copy of this context so the caller's usage scopes count
    context = contextvars.copy_context()
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(context.run, asyncio.run, coro).result()  # type: ignore[arg-type]


async def gather_with_progress(
    coros: Iterable[Awaitable[T]], desc: str, disable: bool = False
) -> list[T]:
    """Return the results of all ``coros``, awaited concurrently with a progress bar, in input
    order; an exception is returned in place, so one failed item never loses the others.
    Inside a run's stage (graphrag/llm/progress.py) the items count on the stage's line."""
    coros = list(coros)
    stage = gathering_stage()
    step = stage.advance if stage is not None else None

    async def run(coro: Awaitable[T]) -> Any:
        try:
            result = await coro
        except Exception as err:  # noqa: BLE001 - reported by the caller per item
            result = err
        step(1)  # not when cancelled: an interrupted run counts only what it finished
        return result

    if stage is not None:
        stage.expect(len(coros))
        return list(await asyncio.gather(*(run(c) for c in coros)))
    with tqdm(total=len(coros), desc=desc, disable=disable, leave=False) as bar:
        step = bar.update
        return list(await asyncio.gather(*(run(c) for c in coros)))
