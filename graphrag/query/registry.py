"""The retrieval methods by name: each registers itself with ``@register`` and :func:`discover`
finds it; ``<method>+rerank`` adds the rerank stage to any of them (docs/methods.md)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import graphrag.query
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.base import Cost, Method
from graphrag.query.index_stores import IndexStores
from graphrag.query.rerank import SUFFIX, Reranked, planned_rerank_cost
from graphrag.settings import Settings
from graphrag.settings.query import add_method_settings
from graphrag.text.embeddings import Embedder

METHODS: dict[str, type[Method]] = {}  # the defaults: ``all``, evaluation and notebooks run these
OPT_IN_METHODS: dict[str, type[Method]] = {}  # run when asked for (demo answers not all recorded)
ALL_METHODS: dict[str, type[Method]] = {}  # every registered method, defaults first


class UnknownMethodError(ValueError):
    """A method name that is not registered; the message lists the known ones."""


_ORDER: dict[str, float] = {}


def register(
    name: str, settings: type | None = None, opt_in: bool = False, order: float = 100
) -> Callable[[type[Method]], type[Method]]:
    """Register a :class:`Method` as ``name``, with its ``[query.<name>]`` settings."""

    def decorate(cls: type[Method]) -> type[Method]:
        if name in ALL_METHODS and ALL_METHODS[name] is not cls:
            raise ValueError(f"method {name!r} is registered twice")
        cls.name = name
        _ORDER[name] = order
        listing = OPT_IN_METHODS if opt_in else METHODS
        listing[name] = cls
        ranked = sorted(listing.items(), key=lambda m: (_ORDER[m[0]], m[0]))
        listing.clear()
        listing.update(ranked)
        ALL_METHODS.clear()
        ALL_METHODS.update({**METHODS, **OPT_IN_METHODS})
        add_method_settings(name, settings)
        return cls

    return decorate


def discover() -> None:
    """Import every module of ``graphrag.query`` once, so that each ``@register`` runs."""
    prefix = graphrag.query.__name__ + "."
    for module in pkgutil.walk_packages(graphrag.query.__path__, prefix):
        importlib.import_module(module.name)


def method_names(names: list[str], opt_in: list[str]) -> list[str]:
    """Return the method names asked for: ``all`` means the default methods plus ``opt_in``."""
    expanded = [m for n in names for m in ([*METHODS, *opt_in] if n == "all" else [n])]
    return list(dict.fromkeys(expanded))


def split_variant(name: str) -> tuple[str, bool]:
    """Return the registered method a name asks for and whether it adds the rerank stage."""
    return (name.removesuffix(SUFFIX), True) if name.endswith(SUFFIX) else (name, False)


def make_methods(
    index: Index,
    names: list[str],
    settings: Settings,
    llm: ChatLLM,
    embedder: Embedder,
    stores: IndexStores | None = None,
) -> dict[str, Method]:
    """Return the named methods over one index, sharing its embedding matrices."""
    unknown = [n for n in names if split_variant(n)[0] not in ALL_METHODS]
    if unknown:
        known = ", ".join(ALL_METHODS)
        raise UnknownMethodError(
            f"unknown method(s) {', '.join(unknown)}; known: {known} (each also as "
            f"<method>{SUFFIX})"
        )
    stores = stores or IndexStores.of(index, settings.query)
    made = {}
    for name in names:
        base, reranked = split_variant(name)
        method = ALL_METHODS[base](index, settings, llm, embedder, stores)
        made[name] = Reranked(method) if reranked else method
    return made


def planned_cost(name: str, settings: Settings, index: Index, questions: list[str]) -> Cost | None:
    """Return ``Method.planned_cost`` of the method ``name`` asks for, plus its rerank call
    for a ``+rerank`` name; None: unknown name, or a method whose cost is not known so."""
    base, reranked = split_variant(name)
    if base not in ALL_METHODS:
        return None
    planned = ALL_METHODS[base].planned_cost(settings, index, questions)
    if not reranked:
        return planned
    extra = planned_rerank_cost(settings, index, questions)
    return tuple(a + b for a, b in zip(planned or (0.0, 0.0, 0.0), extra, strict=True))


discover()
