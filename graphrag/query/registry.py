"""The retrieval methods by name, so evaluation, notebooks and the CLI treat them alike."""

from __future__ import annotations

from pathlib import Path

from graphrag.config import Settings
from graphrag.embeddings import Embedder
from graphrag.index.store import Index, load_index
from graphrag.llm import ChatLLM, run_sync
from graphrag.query.base import Answer, IndexVectors, Method
from graphrag.query.global_search import GlobalSearch
from graphrag.query.hyde import HyDE
from graphrag.query.local import LocalSearch
from graphrag.query.multi_query import MultiQuery
from graphrag.query.naive import NaiveRAG

METHODS: dict[str, type[Method]] = {
    "naive": NaiveRAG,
    "hyde": HyDE,
    "multi_query": MultiQuery,
    "local": LocalSearch,
    "global": GlobalSearch,
}


def make_methods(
    index: Index | str | Path,
    names: list[str],
    settings: Settings,
    llm: ChatLLM,
    embedder: Embedder | None = None,
) -> dict[str, Method]:
    """Return the named methods over one index, sharing its embedding matrices."""
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    index = index if isinstance(index, Index) else load_index(index)
    embedder = embedder or Embedder(settings)
    vectors = IndexVectors(index)
    return {n: METHODS[n](index, settings, llm, embedder, vectors) for n in names}


def answer_all(
    index: Index | str | Path, question: str, names: list[str], settings: Settings
) -> dict[str, Answer]:
    """Return every named method's answer to one question (their calls run concurrently)."""
    import asyncio

    llm = ChatLLM(settings)
    try:
        methods = make_methods(index, names, settings, llm)

        async def run() -> list[Answer]:
            return await asyncio.gather(*(m.aanswer(question) for m in methods.values()))

        return dict(zip(methods, run_sync(run()), strict=True))
    finally:
        llm.close()
