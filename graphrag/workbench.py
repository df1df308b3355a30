"""The one front door: a :class:`Workbench` owns the settings, the LLM, the embedder and the
cache; the CLI, the evaluation and the notebooks all go through it.

    from graphrag import Workbench
    with Workbench(cache="replay") as wb:
        wb.index("data/kestrel_bay/docs", "output/kestrel_bay")
        print(wb.query("Who founded the Kestrel Bay Marine Institute?", method="local").text)
        wb.evaluate("data/kestrel_bay/questions.jsonl", out="reports/kestrel_bay", limit=9)

One object, so the LLM client (its cache and concurrency limit) and the embedder (seconds to
load) are built once and shared by indexing, every method and the judge (unless ``[judge]``
names another model: then the judge has a client of its own), and the embedded servers it
may start are stopped once, by :meth:`close`.
"""

from __future__ import annotations

import asyncio
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag.eval.generate_filter import DEFAULT_SEED, GeneratedSet, generate_question_set
from graphrag.eval.retrieval import check_methods, run_retrieval
from graphrag.eval.runner import run_evaluation
from graphrag.index.pipeline import build_index
from graphrag.index.run_summary import IndexSummary
from graphrag.index.store import Index, load_index
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import run_sync
from graphrag.prompts import use_prompt_dir
from graphrag.query.base import Answer, IndexVectors, Method

# importing the registry registers every method's [query.<method>] settings, before any load
from graphrag.query.registry import METHODS, make_methods
from graphrag.report.folder import EvalResult, write_evaluation
from graphrag.report.retrieval import write_report
from graphrag.settings import Settings, judge_settings, load_settings
from graphrag.text.embeddings import Embedder


class Workbench:
    """Settings, LLM, embedder and the index in use, wired once.

    ``config``: a TOML file (default: ``graphrag.toml`` or ``$GRAPHRAG_CONFIG`` if present);
    ``cache``: ``"on"``, ``"off"`` or ``"replay"`` (replay never calls a model: a prompt that
    was not recorded is an error naming it); ``overrides``: nested settings, as in the TOML;
    ``settings``: a ready Settings tree instead of all of these.
    """

    def __init__(
        self,
        config: str | Path | None = None,
        *,
        cache: str | None = None,
        overrides: dict[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> None:
        if settings is None:
            merged = dict(overrides or {})
            if cache:
                merged["cache"] = {**merged.get("cache", {}), "mode": cache}
            settings = load_settings(config, overrides=merged)
        self.settings = settings
        # the user's prompt folder is set for the process (the last Workbench made decides)
        use_prompt_dir(
            settings.resolve_path(settings.prompts.dir) if settings.prompts.dir else None
        )
        self._index: Index | None = None
        self._methods: dict[str, Method] = {}
        self._vectors: IndexVectors | None = None  # the index's embedding matrices, built once

    @cached_property
    def llm(self) -> ChatLLM:
        """The chat client; the embedded server starts only when a request misses the cache."""
        return ChatLLM(self.settings)

    @cached_property
    def judge_llm(self) -> ChatLLM:
        """The judge's chat client (settings ``[judge]``): the answering client itself when
        the answering model judges its own answers, else one of its own."""
        settings = judge_settings(self.settings)
        return self.llm if settings is self.settings else ChatLLM(settings)

    @cached_property
    def embedder(self) -> Embedder:
        return Embedder(self.settings)

    @property
    def index_in_use(self) -> Index:
        if self._index is None:
            raise ValueError("no index loaded: call Workbench.index(docs, out) or .load(path)")
        return self._index

    def index(
        self, docs: str | Path, out: str | Path, *, progress: bool = True, skip_bad: bool = False
    ) -> IndexSummary:
        """Index the corpus at ``docs`` (a folder of .txt/.md, or a .jsonl) into ``out`` and
        load it; return the run summary (counts, failed items, cost per stage)."""
        summary = build_index(
            docs, out, self.settings, self.llm, self.embedder, progress=progress, skip_bad=skip_bad
        )
        self.load(out)
        return summary

    def load(self, path: str | Path) -> Index:
        """Load the index folder ``path`` and make it the one queries use."""
        self._index = load_index(path)
        self._methods = {}
        self._vectors = None
        return self._index

    def methods(self, names: list[str] | None = None) -> dict[str, Method]:
        """The named retrieval methods over the loaded index (all by default), built once."""
        names = list(names or METHODS)
        missing = [n for n in names if n not in self._methods]
        if missing:
            self._vectors = self._vectors or IndexVectors(self.index_in_use)
            made = make_methods(
                self.index_in_use, missing, self.settings, self.llm, self.embedder, self._vectors
            )
            self._methods.update(made)
        return {n: self._methods[n] for n in names}

    def query(self, question: str, method: str = "local") -> Answer:
        """Answer ``question`` with one method: text, contexts, sources, cost and time."""
        return run_sync(self.methods([method])[method].aanswer(question))

    def query_all(self, question: str, methods: list[str] | None = None) -> dict[str, Answer]:
        """Every named method's answer to one question; their calls run concurrently."""
        chosen = self.methods(methods)

        async def run() -> list[Answer]:
            return await asyncio.gather(*(m.aanswer(question) for m in chosen.values()))

        return dict(zip(chosen, run_sync(run()), strict=True))

    def evaluate(
        self,
        questions: str | Path,
        *,
        out: str | Path,
        methods: list[str] | None = None,
        metrics: list[str] | None = None,
        limit: int | None = None,
        progress: bool = True,
        command: str | None = None,
        **options: Any,
    ) -> EvalResult:
        """Score ``methods`` on the question set with the loaded index; write the report to
        ``out`` (records, summary.md, plots) and return it."""
        run = run_evaluation(
            self.settings,
            self.llm,
            self.embedder,
            self.index_in_use,
            self.methods(methods or self.settings.eval.methods),
            questions,
            metrics if metrics is not None else self.settings.eval.metrics,
            limit=limit,
            progress=progress,
            command=command,
            judge_llm=self.judge_llm,
            **options,
        )
        return write_evaluation(run, out)

    def evaluate_retrieval(
        self,
        questions: str | Path,
        *,
        out: str | Path,
        methods: list[str],
        limit: int | None = None,
        progress: bool = True,
        command: str | None = None,
    ) -> pd.DataFrame:
        """Score the contexts ``methods`` would show the model (evidence recall, recall@k),
        with no answer call; write ``out``/summary.md and return the records."""
        check_methods(methods)  # before a report-reading method is built for nothing
        run = run_retrieval(
            self.settings,
            self.index_in_use,
            self.methods(methods),
            questions,
            limit=limit,
            progress=progress,
            command=command,
        )
        write_report(out, run.records, run.hops, run.meta, run.options)
        return run.records

    def generate_questions(
        self,
        out: str | Path | None = None,
        *,
        kinds: list[str] | None = None,
        count: int = 8,
        seed: int = DEFAULT_SEED,
    ) -> GeneratedSet:
        """Generate ``count`` candidate questions of each kind (local, multi_hop, global) from
        the loaded index, keep those that pass the filters (not near duplicates, not answered
        closed-book by the answering model, answered by their support says the judge), tag
        each with a seeded ``split``; with ``out``, write the .jsonl and its filter log."""
        generated = generate_question_set(
            self.index_in_use,
            self.llm,
            self.judge_llm,
            self.embedder,
            kinds=kinds,
            count=count,
            seed=seed,
        )
        if out is not None:
            generated.write(out)
        return generated

    def close(self) -> None:
        """Stop the embedded servers (answerer's, judge's) if this workbench started them."""
        if "judge_llm" in self.__dict__ and self.judge_llm is not self.__dict__.get("llm"):
            self.judge_llm.close()
        if "llm" in self.__dict__:  # built
            self.llm.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
