"""The retrieval methods by name, so evaluation, notebooks and the CLI treat them alike."""

from __future__ import annotations

from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.base import IndexVectors, Method
from graphrag.query.drift import DRIFTSearch
from graphrag.query.global_search.search import GlobalSearch
from graphrag.query.hyde import HyDE
from graphrag.query.local import LocalSearch
from graphrag.query.multi_query import MultiQuery
from graphrag.query.naive import NaiveRAG
from graphrag.query.ppr import PPRRetrieval
from graphrag.query.router import Router
from graphrag.settings import Settings
from graphrag.text.embeddings import Embedder

METHODS: dict[str, type[Method]] = {
    "naive": NaiveRAG,
    "hyde": HyDE,
    "multi_query": MultiQuery,
    "local": LocalSearch,
    "global": GlobalSearch,
}

# Methods whose demo answers are not recorded yet: named explicitly (``--method drift``), or
# added by ``eval.opt_in_methods`` / ``--opt-in``, so that the default runs (``all``, the
# evaluation, the notebooks) keep replaying from the committed cache.
OPT_IN_METHODS: dict[str, type[Method]] = {
    "drift": DRIFTSearch,
    "ppr": PPRRetrieval,
    "router": Router,  # routes to local / global, whose demo answers are recorded
}

ALL_METHODS: dict[str, type[Method]] = {**METHODS, **OPT_IN_METHODS}


def method_names(names: list[str], opt_in: list[str]) -> list[str]:
    """Return the method names asked for: ``all`` means the default methods plus ``opt_in``."""
    expanded = [m for n in names for m in ([*METHODS, *opt_in] if n == "all" else [n])]
    return list(dict.fromkeys(expanded))


class UnknownMethodError(ValueError):
    """A method name that is not registered; the message lists the known ones."""


def make_methods(
    index: Index,
    names: list[str],
    settings: Settings,
    llm: ChatLLM,
    embedder: Embedder,
    vectors: IndexVectors | None = None,
) -> dict[str, Method]:
    """Return the named methods over one index, sharing its embedding matrices."""
    unknown = [n for n in names if n not in ALL_METHODS]
    if unknown:
        known = ", ".join(ALL_METHODS)
        raise UnknownMethodError(f"unknown method(s) {', '.join(unknown)}; known: {known}")
    vectors = vectors or IndexVectors(index)
    return {n: ALL_METHODS[n](index, settings, llm, embedder, vectors) for n in names}
