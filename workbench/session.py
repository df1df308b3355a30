"""The one front door: a :class:`Workbench` owns the settings, the LLM, the embedder and the
cache; the CLI, the evaluation and the notebooks all go through it.

    from workbench import Workbench
    with Workbench(root="my-project") as wb:     # a folder `graphrag init` wrote
        wb.index()                               # input/ -> output/
        print(wb.query("Who founded the institute?", method="local").text)
        wb.evaluate()                            # questions.jsonl -> reports/

Paths left out are the project's (settings ``[project]``, relative to its root); the
repository itself is the demo project (its ``graphrag.toml``).

One object, so the LLM client (its cache and concurrency limit) and the embedder (seconds to
load) are built once and shared by indexing, every method and the judge (unless ``[judge]``
names another model: then the judge has a client of its own), and the embedded servers it
may start are stopped once, by :meth:`close`.
"""

from __future__ import annotations

import asyncio
import sys
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag.index.pipeline import build_index
from graphrag.index.run_summary import IndexSummary
from graphrag.index.store import Index, load_index
from graphrag.llm import cost
from graphrag.llm.client import ChatLLM
from graphrag.llm.context_check import ContextCheck, check_context
from graphrag.llm.coroutines import run_sync
from graphrag.llm.cost import CostEstimate, ModelSpeed, model_speed
from graphrag.llm.embedding_endpoint import embedded_for_chinese, make_embedder
from graphrag.prompts import use_prompt_dir
from graphrag.query.base import Answer, Method
from graphrag.query.index_stores import IndexStores

# importing the registry registers every method's [query.<method>] settings, before any load
from graphrag.query.registry import METHODS, make_methods
from graphrag.settings import Settings, judge_settings, load_settings
from graphrag.text import lang
from graphrag.text.documents import load_documents
from graphrag.text.embeddings import Embedder
from workbench.eval.dry_run import (
    ESTIMATED_OPTIONS,
    estimate_eval,
    estimate_index,
    eval_stage_parts,
)
from workbench.eval.generate_filter import DEFAULT_SEED, GeneratedSet, generate_question_set
from workbench.eval.retrieval import check_methods, run_retrieval
from workbench.eval.runner import run_evaluation
from workbench.report.eval_report import EvalResult, write_evaluation
from workbench.report.retrieval_report import write_report


def announce(check: ContextCheck | None) -> None:
    """Print a start-up check's one line (to stderr, beside the progress bars)."""
    if check is not None:
        print(check.line, file=sys.stderr, flush=True)


class Workbench:
    """Settings, LLM, embedder and the index in use, wired once.

    ``root``: the project folder (default: ``$GRAPHRAG_ROOT`` or the working directory),
    whose ``graphrag.toml`` is read; ``config``: a TOML file layered over it (a variant);
    ``cache``: ``"on"``, ``"off"`` or ``"replay"`` (replay never calls a model: a prompt that
    was not recorded is an error naming it); ``overrides``: nested settings, as in the TOML;
    ``settings``: a ready Settings tree instead of all of these.
    """

    def __init__(
        self,
        config: str | Path | None = None,
        *,
        root: str | Path | None = None,
        cache: str | None = None,
        overrides: dict[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> None:
        if settings is None:
            merged = dict(overrides or {})
            if cache:
                merged["cache"] = {**merged.get("cache", {}), "mode": cache}
            settings = load_settings(config, overrides=merged, root=root)
        self.settings = settings
        # the user's prompt folder is set for the process (the last Workbench made decides)
        use_prompt_dir(
            settings.resolve_path(settings.prompts.dir) if settings.prompts.dir else None
        )
        self._index: Index | None = None
        self._methods: dict[str, Method] = {}
        self._stores: IndexStores | None = None  # the index's vector and graph stores, built once
        self._language: str | None = None  # the corpus's, for the default embedder's choice

    @cached_property
    def llm(self) -> ChatLLM:
        """The chat client; the embedded server starts only when a request misses the cache.
        An endpoint's context window is checked first (not in replay: llm/context_check.py)."""
        announce(check_context(self.settings, "llm.base_url"))
        return ChatLLM(self.settings)

    @cached_property
    def judge_llm(self) -> ChatLLM:
        """The judge's chat client (settings ``[judge]``): the answering client itself when
        the answering model judges its own answers, else one of its own."""
        settings = judge_settings(self.settings)
        if settings is self.settings:
            return self.llm
        if (settings.llm.base_url, settings.llm.model) != (
            self.settings.llm.base_url,
            self.settings.llm.model,
        ):
            announce(check_context(settings, "judge.base_url"))
        return ChatLLM(settings)

    @cached_property
    def embedder(self) -> Embedder:
        """The settings' embedder; with ``embeddings.model`` left at its default, the one for
        the corpus's language (``embedding_endpoint.CHINESE_MODEL`` for a Chinese one): detected
        when indexing, and read from the index's own manifest when loading it."""
        return make_embedder(self.settings, self._language)

    def _use_language(self, language: str | None) -> None:
        language = language if language == lang.CHINESE else None  # only Chinese is special
        if language != self._language:
            self._language = language
            self.__dict__.pop("embedder", None)
            self._methods, self._stores = {}, None

    def project_path(self, name: str, given: str | Path | None = None) -> Path:
        """``given`` as a path, or else the project's ``[project]`` path ``name``."""
        if given is not None:
            return Path(given)
        return self.settings.resolve_path(getattr(self.settings.project, name))

    @property
    def index_in_use(self) -> Index:
        """The loaded index; the project's own (``project.output``) if none was loaded."""
        if self._index is None:
            if not self.project_path("output").is_dir():
                raise ValueError(
                    f"no index loaded and none at {self.project_path('output')} (setting "
                    "project.output): call Workbench.index() or .load(path)"
                )
            return self.load()
        return self._index

    def index(
        self,
        docs: str | Path | None = None,
        out: str | Path | None = None,
        *,
        progress: bool = True,
        skip_bad: bool = False,
        all_artifacts: bool = False,
    ) -> IndexSummary:
        """Index the corpus at ``docs`` (a folder of .txt/.md, or a .jsonl; default the
        project's input) into ``out`` (default its output) and load it; return the run
        summary (counts, failed items, cost per stage). ``all_artifacts``: also build what
        no configured method reads (graphrag/index/artifacts.py)."""
        docs, out = self.project_path("input", docs), self.project_path("output", out)
        texts = load_documents(docs, self.settings.chunking.max_document_tokens, skip_bad)
        self._use_language(lang.detect_corpus(texts.documents["text"].tolist()))
        expected = None
        if progress:  # the run's ETA: the dry run's seconds
            speed, known = self._run_speed()
            estimate = estimate_index(docs, self.settings, self.llm, speed, skip_bad)
            expected = {s.stage: s.seconds if known else None for s in estimate.stages}
        summary = build_index(
            docs,
            out,
            self.settings,
            self.llm,
            self.embedder,
            progress,
            skip_bad,
            expected,
            all_artifacts,
        )
        self.load(out)
        return summary

    def _run_speed(self) -> tuple[ModelSpeed | None, bool]:
        """Return the model speed a run's ETA uses (never a probe: an endpoint's is unknown
        until the run measures it) and whether the LLM stages' seconds are known."""
        if self.settings.cache.mode == "replay":
            return None, True
        if self.settings.llm.base_url:
            return None, False
        return model_speed(self.settings), True

    def estimate_index(
        self, docs: str | Path | None = None, *, skip_bad: bool = False
    ) -> CostEstimate:
        """Return what indexing ``docs`` (default: the project's input) would cost (calls,
        tokens, time per stage), without calling the model; an endpoint's speed is probed
        with one small request."""
        docs = self.project_path("input", docs)
        return estimate_index(docs, self.settings, self.llm, model_speed(self.settings), skip_bad)

    def estimate_evaluation(
        self,
        questions: str | Path | None = None,
        *,
        methods: list[str] | None = None,
        metrics: list[str] | None = None,
        limit: int | None = None,
        speeds: tuple[ModelSpeed | None, ModelSpeed | None] | None = None,
        **options: Any,
    ) -> CostEstimate:
        """Return what :meth:`evaluate` with these arguments would cost, without calling the
        model; ``speeds``: (answering, judging), by default as in :meth:`estimate_index`."""
        if speeds is None:
            judging = judge_settings(self.settings)
            speed = model_speed(self.settings)
            speeds = speed, speed if judging is self.settings else model_speed(judging)
        return estimate_eval(
            self.settings,
            self.llm,
            self.index_in_use,
            self.project_path("questions", questions),
            list(methods or self.settings.eval.methods),
            self.settings.eval.metrics if metrics is None else metrics,
            *speeds,
            limit=limit,
            **{k: v for k, v in options.items() if k in ESTIMATED_OPTIONS},
        )

    def load(self, path: str | Path | None = None) -> Index:
        """Load the index folder ``path`` (default: the project's) for queries to use."""
        self._index = load_index(self.project_path("output", path))
        self._methods = {}
        self._stores = None
        model = self._index.manifest.get("embedding_model", "")
        self._use_language(lang.CHINESE if embedded_for_chinese(self.settings, model) else None)
        return self._index

    def methods(self, names: list[str] | None = None) -> dict[str, Method]:
        """The named retrieval methods over the loaded index (all by default), built once."""
        names = list(names or METHODS)
        missing = [n for n in names if n not in self._methods]
        if missing:
            self._stores = self._stores or IndexStores.of(self.index_in_use, self.settings.query)
            made = make_methods(
                self.index_in_use, missing, self.settings, self.llm, self.embedder, self._stores
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
        questions: str | Path | None = None,
        *,
        out: str | Path | None = None,
        methods: list[str] | None = None,
        metrics: list[str] | None = None,
        limit: int | None = None,
        progress: bool = True,
        command: str | None = None,
        **options: Any,
    ) -> EvalResult:
        """Score ``methods`` on the question set (default: the project's) with the loaded
        index; write the report to ``out`` (default: the project's reports folder: records,
        summary.md, plots) and return it."""
        questions = self.project_path("questions", questions)
        expected = None
        if progress:  # the progress lines' ETA: the dry run's seconds per stage
            speed, known = self._run_speed()
            judging = judge_settings(self.settings)
            if judging is not self.settings and judging.llm.base_url:
                known = known and judging.cache.mode == "replay"
            estimate = self.estimate_evaluation(
                questions,
                methods=methods,
                metrics=metrics,
                limit=limit,
                speeds=(speed, speed),
                **options,
            )
            expected = {
                stage: sum(s.seconds or 0.0 for s in estimate.stages if s.stage in parts)
                if known
                else None
                for stage, parts in eval_stage_parts(estimate).items()
            }
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
            expected=expected,
            **options,
        )
        return write_evaluation(run, self.project_path("reports", out))

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
        split: str = "test",
    ) -> GeneratedSet:
        """Generate ``count`` candidate questions of each kind from the loaded index, keep those
        that pass the filters (``eval.generate_filter``), tag each with ``split`` (``test``:
        nothing was tuned on them); with ``out``, write the .jsonl and its filter log."""
        generated = generate_question_set(
            self.index_in_use,
            self.llm,
            self.judge_llm,
            self.embedder,
            kinds=kinds,
            count=count,
            seed=seed,
            split=split,
        )
        if out is not None:
            generated.write(out)
        return generated

    def close(self) -> None:
        """Keep this machine's measured speed if the run called the embedded model enough
        (llm/cost.py), and stop the embedded servers this workbench started."""
        if "llm" in self.__dict__:
            cost.save(self.settings)
        if "judge_llm" in self.__dict__ and self.judge_llm is not self.__dict__.get("llm"):
            self.judge_llm.close()
        if "llm" in self.__dict__:  # built
            self.llm.close()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
