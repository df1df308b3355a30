"""The artifacts only some methods read, and which an index build makes: those the configured
methods read, or all (``index --all-artifacts``). Why: fact vectors were 80% of the LLM-free
MuSiQue index's embedding time (docs/benchmarks.md); a method that finds none builds them."""

from __future__ import annotations

import dataclasses

from graphrag.settings import Settings

FACT_EMBEDDINGS = "fact_embeddings"  # relationships.fact_embedding: "source -> target: ..."
# the methods that read each optional artifact (graphrag/query/ppr.py fact_vectors)
READERS: dict[str, frozenset[str]] = {FACT_EMBEDDINGS: frozenset({"ppr", "hipporag", "minirag"})}
OPTIONAL_ARTIFACTS = tuple(READERS)


def configured_methods(settings: Settings) -> set[str]:
    """Return the methods the settings name: ``eval.methods`` and, until none is new, every
    method those name in their own settings (the router's routes, integrate's graph method)."""
    names = set(settings.eval.methods)
    while True:
        named = set()
        for name in names:
            section = settings.query.methods.get(name)
            if dataclasses.is_dataclass(section):
                named |= {v for v in vars(section).values() if isinstance(v, str)}
        if named <= names:
            return names
        names |= named


def artifacts_to_build(settings: Settings, every: bool = False) -> frozenset[str]:
    """Return the optional artifacts an index build makes: all with ``every``, else those a
    configured method reads."""
    if every:
        return frozenset(OPTIONAL_ARTIFACTS)
    methods = configured_methods(settings)
    return frozenset(a for a, readers in READERS.items() if readers & methods)
