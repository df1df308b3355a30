"""What ``graphrag mcp`` answers, as JSON-ready data read through a :class:`Workbench`: an
answer with its contexts, a method's first-stage contexts, an entity, its neighbourhood,
the index's status, the graph's schema and the community reports.

Kept apart from the protocol (``mcp_server``) so each answer is plain data a test or a
notebook can read too; every refusal is a :class:`RequestError` naming the argument.
"""

from __future__ import annotations

import difflib
import os
from itertools import zip_longest
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.store import Index
from graphrag.llm.usage import track_usage
from graphrag.query.base import Answer, ContextItem, Method, collecting_failures
from graphrag.query.cypher import TIMEOUT_S
from graphrag.query.registry import ALL_METHODS, METHODS, OPT_IN_METHODS, UnknownMethodError
from graphrag.stores.cypher_guard import GuardLimits, run_guarded
from graphrag.stores.graph_db import URL, default_graph_db_path
from graphrag.text import tokens
from workbench.session import Workbench

MAX_QUESTION_CHARS = 2000  # a question, not a document: longer text is refused, not truncated
MAX_HOPS = 3  # neighbours: a 4-hop neighbourhood is most of a small graph
MAX_NODES = 200  # neighbours listed at most (the answer says when it stopped)


class RequestError(ValueError):
    """A request the served project cannot answer as asked; the message names the argument."""


def plain(value: Any) -> Any:
    """Return ``value`` with numpy arrays and scalars (parquet's) as JSON types."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def check_question(question: str) -> str:
    text = question.strip()
    if not text:
        raise RequestError("question: empty; ask a question in words")
    if len(text) > MAX_QUESTION_CHARS:
        raise RequestError(
            f"question: {len(text)} characters, more than {MAX_QUESTION_CHARS}; ask a shorter "
            "question (the documents belong in the index, not in the question)"
        )
    return text


def _count_files(folder: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(folder)) if folder.is_dir() else 0


class ProjectView:
    """The index of one project (``index``: its folder, default the project's output), loaded
    on the first request that needs it; a missing index is an error of that request only, so
    the server keeps running and finds the index once it is built."""

    def __init__(self, bench: Workbench, index: str | Path | None = None) -> None:
        self.bench = bench
        self.index_path = index
        self._index: Index | None = None
        self._graph: nx.Graph | None = None

    @property
    def index(self) -> Index:
        if self._index is None:
            self._index = self.bench.load(self.index_path)
        return self._index

    def method(self, name: str) -> Method:
        """The method ``name`` over the served index (built once, by the workbench)."""
        if name not in ALL_METHODS:
            raise UnknownMethodError(f"method: unknown {name!r}; known: {', '.join(ALL_METHODS)}")
        self.index  # noqa: B018 - a missing index is named before the method is built
        return self.bench.methods([name])[name]

    def contexts(self, items: list[ContextItem]) -> list[dict[str, Any]]:
        """Each context's id (``text_unit:…``, ``report:…``, ``entity:…``; None when the method
        does not name it), text, and for a text unit the documents it was cut from."""
        units = self.index.text_units
        documents = dict(zip(units[S.ID], units[S.DOCUMENT_IDS], strict=True))
        listed = []
        for item in items:
            key = item.source.partition(":")[2] if item.source else ""
            found = {"document_ids": plain(documents[key])} if key in documents else {}
            listed.append({"id": item.source or None, "text": item.text, **found})
        return listed

    async def query(self, method: str, question: str) -> dict[str, Any]:
        """The method's answer: text, contexts with their ids, sources, cited, usage. A
        method whose sources are not its contexts (``cypher``: the text units its rows came
        from, not the rows) leaves the contexts' ids None."""
        question = check_question(question)
        answer: Answer = await self.method(method).aanswer(question)
        ids = answer.sources if len(answer.sources) == len(answer.contexts) else []
        items = [ContextItem(s, t) for s, t in zip_longest(ids, answer.contexts, fillvalue="")]
        return {
            "method": method,
            "question": question,
            "answer": answer.text,
            "contexts": self.contexts(items),
            "sources": answer.sources,
            "cited": answer.cited,
            "usage": answer.usage.to_dict(),
            "seconds": round(answer.seconds, 3),
            "context_tokens": answer.context_tokens,
            "failures": answer.failures,
            **({"route": answer.route} if answer.route else {}),
        }

    async def retrieve(self, method: str, question: str) -> dict[str, Any]:
        """The contexts the method would give its answer call, and its ranked text units, with
        no answer call (as ``graphrag retrieval``; a method that rewrites the question first,
        as hyde, still calls the model for that: ``usage`` says so)."""
        question = check_question(question)
        chosen = self.method(method)
        with track_usage() as usage, collecting_failures() as failures:
            retrieval = await chosen.aretrieve_ranked(question)
        return {
            "method": method,
            "question": question,
            "contexts": self.contexts(retrieval.items),
            "ranking": list(retrieval.ranking),
            "context_tokens": sum(tokens.count_tokens(i.text) for i in retrieval.items),
            "usage": usage.to_dict(),
            "failures": list(dict.fromkeys(failures)),
        }

    def entity_row(self, name: str) -> pd.Series:
        """The entity called ``name`` (by its normalized name, as extraction merges them; or
        its id); an unknown name's error lists the closest titles."""
        entities = self.index.entities
        found = entities[(entities[S.NAME_KEY] == name_key(name)) | (entities[S.ID] == name)]
        if found.empty:
            close = difflib.get_close_matches(name, list(entities[S.TITLE]), n=5, cutoff=0.5)
            hint = f"; closest: {', '.join(close)}" if close else ""
            raise RequestError(f"name: no entity {name!r} in the index{hint}")
        return found.iloc[0]

    def entity(self, name: str) -> dict[str, Any]:
        """The entity row: title, type, description, degree, its text units and documents,
        the communities it belongs to."""
        row = self.entity_row(name)
        units = self.index.text_units.set_index(S.ID)
        unit_ids = [u for u in plain(row[S.TEXT_UNIT_IDS]) if u in units.index]
        communities = self.index.communities
        member = communities[[row[S.ID] in set(ids) for ids in communities[S.ENTITY_IDS]]]
        return {
            "id": row[S.ID],
            "title": row[S.TITLE],
            "type": row[S.TYPE],
            "description": row[S.DESCRIPTION],
            "degree": plain(row[S.DEGREE]),
            "frequency": plain(row.get(S.FREQUENCY, 0)),
            "text_unit_ids": unit_ids,
            "document_ids": sorted(
                {d for u in unit_ids for d in plain(units.at[u, S.DOCUMENT_IDS])}
            ),
            "communities": [
                {"level": plain(c.level), "community": plain(c.community)}
                for c in member.itertuples(index=False)
            ],
        }

    def graph(self) -> nx.Graph:
        """The entity graph, each node's neighbours in the relationships table's order."""
        if self._graph is None:
            edges = self.index.relationships
            self._graph = nx.Graph(list(zip(edges[S.SOURCE_ID], edges[S.TARGET_ID], strict=True)))
        return self._graph

    def neighbors(self, name: str, hops: int = 1) -> dict[str, Any]:
        """The entities within ``hops`` relationships of ``name`` (breadth first, each with its
        distance; at most :data:`MAX_NODES`) and the relationships among them."""
        if not 1 <= hops <= MAX_HOPS:
            raise RequestError(f"hops: {hops}; give 1 to {MAX_HOPS}")
        start = self.entity_row(name)[S.ID]
        graph = self.graph()
        found = {start: 0}
        if start in graph:  # breadth first: each hop's nodes in the table's order
            found |= nx.single_source_shortest_path_length(graph, start, hops)
        distance = dict(list(found.items())[: MAX_NODES + 1])
        truncated = len(distance) < len(found)
        edges = self.index.relationships
        ends = zip(edges[S.SOURCE_ID], edges[S.TARGET_ID], strict=True)
        entities = self.index.entities.set_index(S.ID)
        among = edges[[a in distance and b in distance for a, b in ends]]
        return {
            "entity": entities.at[start, S.TITLE],
            "hops": hops,
            "neighbors": [
                {
                    "id": node,
                    "title": entities.at[node, S.TITLE],
                    "type": entities.at[node, S.TYPE],
                    "degree": plain(entities.at[node, S.DEGREE]),
                    "hops": hop,
                }
                for node, hop in distance.items()
                if hop > 0
            ],
            "relationships": [
                {
                    "source": r[S.SOURCE_ENTITY],
                    "target": r[S.TARGET_ENTITY],
                    "description": r[S.DESCRIPTION],
                    "weight": plain(r[S.WEIGHT]),
                }
                for _, r in among.iterrows()
            ],
            "truncated": truncated,
        }

    def graph_db_target(self) -> str:
        """Where the ``cypher`` method's graph database is: ``[query.cypher] database``, or the
        index's own LadybugDB beside its folder."""
        options = self.bench.settings.query.methods["cypher"]
        return options.database or str(default_graph_db_path(self.index.path))

    def graph_db_exists(self) -> bool:
        target = self.graph_db_target()
        return bool(URL.match(target)) or Path(target).exists()

    def cypher(self, query: str) -> dict[str, Any]:
        """The rows of a read-only Cypher ``query``, run as the ``cypher`` method runs the
        model's: on its database (the index's own is loaded from the index on first use),
        through the same guard (no writes, no procedures but schema look-ups, paths of at most
        3 hops, no cartesian products, its LIMIT clamped), read-only, with its timeout."""
        method: Any = self.method("cypher")  # query.cypher.TextToCypher
        options = method.options
        bounded, rows = run_guarded(
            method.db, query, GuardLimits(max_rows=options.max_rows), TIMEOUT_S
        )
        return {
            "query": bounded,
            "rows": plain(rows),
            "row_count": len(rows),
            "max_rows": options.max_rows,
            "database": method.db.target,
        }

    def status(self) -> dict[str, Any]:
        """The index manifest: what it was built from, its counts, the methods and their
        settings, and what is cached (LLM replies, vectors, artifacts built on use)."""
        index, settings = self.index, self.bench.settings
        manifest = index.manifest
        communities = index.communities
        artifacts = index.path / "artifacts"
        llm_cache = settings.resolve_path(settings.cache.path)
        vectors = settings.resolve_path(settings.embeddings.cache_path)
        return {
            "index": str(index.path),
            "created": manifest.get("created"),
            "input": manifest.get("input"),
            "models": {
                "llm": manifest.get("llm_model"),
                "llm_base_url": manifest.get("llm_base_url"),
                "embedding": manifest.get("embedding_model"),
            },
            "counts": {
                "documents": len(index.documents),
                "text_units": len(index.text_units),
                "entities": len(index.entities),
                "relationships": len(index.relationships),
                "communities": len(communities),
                "communities_per_level": {
                    str(k): int(v)
                    for k, v in communities[S.LEVEL].value_counts().sort_index().items()
                },
                "community_reports": len(index.community_reports),
                "failed_items": len(index.errors),
                "dropped_items": len(index.dropped),
            },
            "index_settings": plain(manifest.get("settings", {}).get("index", {})),
            "methods": {"default": list(METHODS), "opt_in": list(OPT_IN_METHODS)},
            "query_settings": plain(settings.to_dict()["query"]),
            "cached": {
                "llm_replies": {
                    "path": str(llm_cache),
                    "mode": settings.cache.mode,
                    "recorded": _count_files(llm_cache),
                },
                "embeddings": {"path": str(vectors), "exists": vectors.exists()},
                "graph_database": {
                    "target": self.graph_db_target(),
                    "exported": self.graph_db_exists(),
                },
                "artifacts": sorted(p.name for p in artifacts.iterdir())
                if artifacts.is_dir()
                else [],
            },
        }

    def schema(self) -> dict[str, Any]:
        """The graph's shape: entity types and their counts, relationships counted by the
        types of their ends, the columns of each table, and once the graph database exists
        (``graphrag graph export``, or the first ``cypher`` query) its schema, what a Cypher
        query is written against."""
        entities, edges = self.index.entities, self.index.relationships
        type_of = dict(zip(entities[S.ID], entities[S.TYPE], strict=True))
        pairs = pd.Series(
            [
                f"{type_of.get(a, '?')} -> {type_of.get(b, '?')}"
                for a, b in zip(edges[S.SOURCE_ID], edges[S.TARGET_ID], strict=True)
            ],
            dtype=object,
        )
        return {
            "entity_types": {str(k): int(v) for k, v in entities[S.TYPE].value_counts().items()},
            "relationships": len(edges),
            "relationships_by_types": {str(k): int(v) for k, v in pairs.value_counts().items()},
            "columns": {
                name: [c for c in getattr(self.index, name).columns if not c.endswith("embedding")]
                for name in ("entities", "relationships", "text_units", "communities")
            },
            "graph_database": plain(self.method("cypher").db.schema())
            if self.graph_db_exists()
            else f"not exported yet: `graphrag graph export` or a first cypher query writes "
            f"{self.graph_db_target()}",
        }

    def report_list(self) -> list[dict[str, Any]]:
        """Every community report written: its community, level, title, rating and size."""
        reports = self.index.community_reports
        return [
            {
                "community": plain(r[S.COMMUNITY]),
                "level": plain(r[S.LEVEL]),
                "title": r[S.TITLE],
                "rating": plain(r[S.RATING]),
                "size": plain(r.get(S.SIZE, 0)),
            }
            for _, r in reports.iterrows()
        ]

    def report(self, community: int) -> str:
        """The report of ``community`` as markdown (its full content)."""
        reports = self.index.community_reports
        found = reports[reports[S.COMMUNITY] == community]
        if found.empty:
            known = ", ".join(str(c) for c in sorted(reports[S.COMMUNITY]))
            raise RequestError(f"community: no report for {community}; written: {known or 'none'}")
        return str(found.iloc[0][S.FULL_CONTENT])
