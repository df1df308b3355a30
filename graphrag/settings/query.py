"""Settings of the retrieval methods: ``[query]`` and one ``[query.<method>]`` table per method.

A method's own settings are a dataclass in its module, registered here by
``graphrag.query.registry.register`` (this layer cannot import the methods above it) and
reached as ``settings.query.methods["local"]``. Importing ``graphrag`` registers them all.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

# method name -> its settings dataclass (None: a method without settings of its own)
METHOD_SETTINGS: dict[str, type | None] = {}


def add_method_settings(name: str, settings: type | None) -> None:
    """Register method ``name`` and its settings dataclass (``[query.<name>]``)."""
    METHOD_SETTINGS[name] = settings


def _method_defaults() -> dict[str, Any]:
    return {name: cls() for name, cls in METHOD_SETTINGS.items() if cls is not None}


@dataclass
class QuerySettings:
    """What every retrieval method shares: the answer call, the context budget, the chunks."""

    top_k: int = 3
    """Chunks the chunk methods (naive, hyde, multi_query, ppr, bm25) show, under "top_k"."""
    # prompt tokens cost about 25 ms each on 2 CPU cores
    max_context_tokens: int = 3000
    """Context tokens of any budget sized to the model's window, at most."""
    # "budget" compares methods at equal context (Method.answer_budget).
    chunk_context: Literal["top_k", "budget"] = "budget"
    """Chunk methods show "budget": the ranked chunks local search's budget holds, or "top_k"."""
    # "dense" is how every method was measured and recorded; "hybrid": Cormack et al.'s
    # reciprocal rank fusion (k = 60) of that ranking and BM25's (graphrag/query/rankers.py)
    first_stage: Literal["dense", "hybrid"] = "dense"
    """How methods rank text units by the question: "dense" (embedding) or "hybrid" (+ BM25)."""
    # "networkx" is the engine before #59: power iteration to 1e-6, whose last digits order
    # MuSiQue's recorded ppr/hipporag contexts (data/musique/graphrag.toml pins it)
    graph_store: str = "igraph"
    """The graph store methods walk (docs/storage.md): "igraph" (PRPACK PageRank), "networkx"
    or "ladybug" (an embedded graph database)."""
    vector_store: str = "numpy"
    """Where methods rank vectors (docs/storage.md): "numpy", or "lancedb[:<folder or URI>]"."""
    answer_max_tokens: int = 250
    """Tokens of the final answer, at most (paragraphs want about 600)."""
    # "paragraphs" is how the GraphRAG paper compared every method
    answer_style: Literal["sentences", "paragraphs"] = "sentences"
    """Answer form: "sentences" (five at most) or "paragraphs", Microsoft GraphRAG's form."""
    # the demo's and MuSiQue's recorded graph answers predate it: their settings pin it off
    entity_resolution: bool = True
    """Graph methods (local, ppr, drift's local steps) read names of one entity as one."""
    methods: dict[str, Any] = field(
        default_factory=_method_defaults, metadata={"sections": METHOD_SETTINGS}
    )
    """Each method's own settings by method name, the [query.<method>] tables."""

    def changed(self, values: dict[str, Any]) -> QuerySettings:
        """Return a copy with ``values`` set, by the names :meth:`flat` gives (no type check)."""
        methods = {name: dataclasses.replace(section) for name, section in self.methods.items()}
        copy = dataclasses.replace(self, methods=methods)
        for name, value in values.items():
            table, _, key = name.rpartition(".")
            section = copy.methods[table] if table else copy
            if not hasattr(section, key) or key == "methods":
                raise AttributeError(f"no setting query.{name}")
            setattr(section, key, value)
        return copy

    def flat(self) -> dict[str, Any]:
        """Return every setting by its name below ``query``: ``top_k``, ``local.top_entities``."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        shared.pop("methods")
        for name, section in sorted(self.methods.items()):
            shared.update({f"{name}.{k}": v for k, v in dataclasses.asdict(section).items()})
        return shared
