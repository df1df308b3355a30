"""Router: no method wins everywhere (arXiv 2502.11371), so a question is classified as fact,
multi-hop or thematic by its nearest prototype questions (no LLM call) and routed by kind."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from graphrag.llm.usage import track_usage
from graphrag.query import registry
from graphrag.query.base import Answer, ContextItem, Method, Retrieval
from graphrag.settings import SettingsError
from graphrag.text.embeddings import Embedder

KINDS = ("fact", "multi_hop", "thematic")
PROTOTYPE_TOP = 3  # a kind's score: the mean similarity of its 3 closest prototypes

# The question set's ``type`` for each kind (data/*/questions.jsonl say local / multi_hop / global).
QUESTION_SET_TYPE = {"fact": "local", "multi_hop": "multi_hop", "thematic": "global"}

# Hand-written example questions of each kind, about no corpus in particular (no evaluated
# question is among them), as data a reader can check: graphrag/query/router_prototypes.json.
PROTOTYPES: dict[str, tuple[str, ...]] = {
    kind: tuple(questions)
    for kind, questions in json.loads(
        (Path(__file__).parent / "router_prototypes.json").read_text(encoding="utf-8")
    ).items()
}


class PrototypeClassifier:
    """Return a question's kind: the one whose closest prototype questions are most similar."""

    def __init__(self, embedder: Embedder, top: int = PROTOTYPE_TOP) -> None:
        self.embedder = embedder
        self.top = top

    @cached_property
    def _vectors(self) -> dict[str, np.ndarray]:
        return {kind: self.embedder.embed(list(qs)) for kind, qs in PROTOTYPES.items()}

    def scores(self, question: str) -> dict[str, float]:
        vector = self.embedder.embed_one(question)
        return {
            kind: float(np.mean(np.sort(matrix @ vector)[::-1][: self.top]))
            for kind, matrix in self._vectors.items()
        }

    def classify(self, question: str) -> str:
        scores = self.scores(question)
        return max(scores, key=scores.__getitem__)


@dataclass
class RouterSettings:
    """``[query.router]``: which method answers each kind of question."""

    fact_method: str = "local"
    """The method that answers fact questions (any method but router, e.g. "ppr")."""
    multi_hop_method: str = "local"
    """The method that answers multi-hop questions (any method but router, e.g. "ppr")."""
    thematic_method: str = "global"
    """The method that answers thematic questions (any method but router, e.g. "drift")."""

    def validate(self, name: str, methods: Collection[str]) -> None:
        for kind, method in routes(self).items():
            if method == "router" or (methods and method not in methods):
                known = ", ".join(m for m in methods if m != "router")
                raise SettingsError(
                    f"setting {name}.{kind}_method={method!r}: not a method the router can "
                    f"route to; choose one of {known}"
                )


def routes(options: RouterSettings) -> dict[str, str]:
    return {kind: getattr(options, f"{kind}_method") for kind in KINDS}


@registry.register("router", settings=RouterSettings, opt_in=True, order=80)
class Router(Method):
    """Classify the question, then answer it with the method configured for its kind."""

    options: RouterSettings

    def __init__(self, *args: Any, methods: Mapping[str, Method] | None = None, **kw: Any) -> None:
        """``methods``: ready routed-to methods by name."""
        super().__init__(*args, **kw)
        self.options.validate("query.router", list(registry.ALL_METHODS))
        self.routes = routes(self.options)
        self._methods = dict(methods or {})
        self.classifier = PrototypeClassifier(self.embedder)

    def method(self, name: str) -> Method:
        if name not in self._methods:
            wiring = (self.index, self.settings, self.llm, self.embedder, self.stores)
            self._methods[name] = registry.ALL_METHODS[name](*wiring)
        return self._methods[name]

    def routed(self, question: str) -> Method:
        return self.method(self.routes[self.classifier.classify(question)])

    async def aretrieve(self, question: str) -> list[ContextItem]:
        return await self.routed(question).aretrieve(question)

    async def aretrieve_ranked(self, question: str) -> Retrieval:
        return await self.routed(question).aretrieve_ranked(question)

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        """Return the routed method's answer, as the router's, with the route and full cost."""
        started = time.monotonic()
        with track_usage() as usage:
            kind = self.classifier.classify(question)
            chosen = self.method(self.routes[kind])
            answer = await chosen.aanswer(question, short_answer)
        route, seconds = f"{kind} -> {chosen.name}", time.monotonic() - started
        return dataclasses.replace(
            answer, method=self.name, route=route, usage=usage, seconds=seconds
        )
