"""Batch evaluation: every method answers every question, then is scored (the caller writes
the report: ``report.eval_report.write_evaluation``); a rerun resumes from the recorded cache.
"""

from __future__ import annotations

import asyncio
import math
import random
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.quality import load_gold_graph
from graphrag.index.store import Index
from graphrag.llm import progress as lines_of
from graphrag.llm.cache import CacheMissError
from graphrag.llm.client import ChatLLM, error_summary
from graphrag.llm.coroutines import run_sync
from graphrag.llm.usage import Usage
from graphrag.query.base import Method
from graphrag.query.registry import UnknownMethodError
from graphrag.settings import Settings, endpoint_name, repo_relative
from graphrag.text.embeddings import Embedder
from workbench.eval import judge_validity, pairwise, stats
from workbench.eval.declared import PRIMARY_FIELD, check_names, parse_primary
from workbench.eval.hops import has_decompositions, hop_evidence
from workbench.eval.judge import (
    ANSWER_RELEVANCY_STRICTNESS,
    JUDGE_CALLS,
    NOT_SAMPLED,
    SAMPLED_METRICS,
    Judge,
    gather_counted,
)
from workbench.eval.metrics import (
    JUDGE_FREE_METRICS,
    SHORT_ANSWER_FORMAT,
    EvidenceIndex,
    judge_free_columns,
)
from workbench.eval.questions import (
    DEFAULT_SPLIT,
    TUNED_FIELD,
    MethodLimit,
    QuestionSetError,
    describe_limit,
    limited_to,
    load_questions,
)

# a record's answer fields that a failed answer leaves empty (lists) or zero (counts)
LIST_FIELDS = ("contexts", "sources", "cited", "ranking")
COUNT_FIELDS = ("context_tokens", "llm_calls", "prompt_tokens", "completion_tokens")
ANSWER_STAGE, CONTROLS_STAGE, PAIRWISE_STAGE = "answer and judge", "judge controls", "pairwise"


@dataclass
class EvalRun:
    """What an evaluation computed, for ``report.eval_report.write_evaluation`` to write."""

    records: pd.DataFrame
    metrics: list[str]
    meta: dict[str, Any]
    n_resamples: int
    seed: int
    controls: pd.DataFrame | None = None
    judgements: pd.DataFrame | None = None
    hops: pd.DataFrame | None = None
    run_info: dict[str, Any] = field(default_factory=dict)


def index_cost(manifest: dict[str, Any]) -> dict[str, Any]:
    """Return what building an index cost, from its manifest: the recorded calls, tokens and
    model seconds (a replayed call keeps its recorded seconds)."""
    summary = manifest.get("summary", {})
    counts = summary.get("counts", {})
    usage = manifest.get("usage", {})
    return {
        "method": manifest.get("settings", {}).get("index", {}).get("method", "llm"),
        "documents": counts.get("documents"),
        "corpus_tokens": counts.get("corpus_tokens"),
        "llm_calls": usage.get("calls", 0),
        "cache_hits": usage.get("cache_hits", 0),
        "prompt_tokens": usage.get("prompt_tokens", 0),
        "completion_tokens": usage.get("completion_tokens", 0),
        # rounded: the sum's last digits depend on the order the calls finished in
        "model_seconds": round(usage.get("model_seconds", 0.0), 3),
        # no wall seconds: a replay's would change the committed reports on every run
    }


def interleave_types(questions: pd.DataFrame) -> pd.DataFrame:
    """Return the questions in round-robin order of type, so a partial run covers each."""
    rank = questions.groupby("type", sort=False).cumcount()
    order = sorted(range(len(questions)), key=lambda i: (rank.iloc[i], i))
    return questions.iloc[order].reset_index(drop=True)


def planned_questions(
    index: Index, path: str | Path, types: list[str] | None, limit: int | None
) -> pd.DataFrame:
    """Return the questions an evaluation answers: of ``types``, round-robin by type, the
    first ``limit``; a type the set lacks is an error."""
    questions = load_questions(path, documents=set(index.documents[S.ID]))
    unknown = sorted(set(types or ()) - set(questions["type"]))
    if unknown:
        there = ", ".join(sorted(set(questions["type"])))
        raise QuestionSetError(
            f"{path}: no question of type {', '.join(unknown)} (types there: {there})"
        )
    questions = interleave_types(questions[questions["type"].isin(types)] if types else questions)
    return questions.head(limit) if limit else questions


def judge_sample_ids(questions: pd.DataFrame, size: int, seed: int) -> set[str] | None:
    """Return the ids of the seeded judge sample: ``size`` questions drawn with ``seed`` from
    the ``test`` split when the set has a ``split`` column, else from all; None: no sample
    (``size`` 0, or as many as there are)."""
    pool = questions
    if "split" in questions.columns:
        pool = questions[questions["split"] == "test"]
    ids = sorted(str(i) for i in pool["id"])
    if size <= 0 or (size >= len(ids) and len(pool) == len(questions)):
        return None
    return set(random.Random(f"{seed}:judge_sample").sample(ids, min(size, len(ids))))


async def evaluate_pair(
    method: Method,
    judge: Judge,
    question: pd.Series,
    metrics: list[str],
    sampled: bool = True,
) -> dict:
    """Return one record: the method's answer to one question and its judge scores (outside
    the judge sample, ``sampled`` False, the ``SAMPLED_METRICS`` are not judged)."""
    record = {
        "question_id": question["id"],
        "question": question["question"],
        "type": question["type"],
        "split": question.get("split", DEFAULT_SPLIT),
        "method": method.name,
    }
    short = question.get("answer_format") == SHORT_ANSWER_FORMAT
    try:
        answer = await method.aanswer(question["question"], short_answer=short)
    except CacheMissError:
        raise
    except Exception as err:  # noqa: BLE001 - a failed answer is a record, not a crash
        error = error_summary(err)
        record.update(answer="", answer_error=error, failures=[], **{k: [] for k in LIST_FIELDS})
        record.update(dict.fromkeys(COUNT_FIELDS, 0), model_seconds=0.0, model_hosts="")
        for metric in metrics:
            record.update(_judged(metric, math.nan, f"no answer ({error})", Usage()))
        return record
    usage = answer.usage
    # failures: the steps the answer lost (a degraded answer; [] for a complete one)
    record.update(answer=answer.text, answer_error=None, failures=list(answer.failures))
    record.update(
        {k: getattr(answer, k) for k in LIST_FIELDS}, context_tokens=answer.context_tokens
    )
    record.update(llm_calls=usage.calls, prompt_tokens=usage.prompt_tokens)
    record.update(completion_tokens=usage.completion_tokens)
    record.update(model_seconds=round(usage.model_seconds, 3), model_hosts="; ".join(usage.hosts))
    texts = (question["question"], answer.text, answer.contexts, question["reference"])
    judged = [m for m in metrics if sampled or m not in SAMPLED_METRICS]
    results = await asyncio.gather(*(judge.score(m, *texts) for m in judged))
    for metric, result in zip(judged, results, strict=True):
        record.update(_judged(metric, result.value, result.error, result.usage))
    for metric in (m for m in metrics if m not in judged):
        record.update(_judged(metric, math.nan, NOT_SAMPLED, Usage()))
    return record


def _judged(metric: str, value: float, error: str | None, usage: Usage) -> dict:
    """Return a record's columns of one judge metric: value, error, calls, completion tokens."""
    return {metric: value, f"{metric}_error": error, f"{metric}_calls": usage.calls} | {
        f"{metric}_completion_tokens": usage.completion_tokens
    }


def run_evaluation(
    settings: Settings,
    llm: ChatLLM,
    embedder: Embedder,
    index: Index,
    chosen: dict[str, Method],
    questions_path: str | Path,
    metrics: list[str],
    limit: int | None = None,
    progress: bool = True,
    command: str | None = None,
    judge_controls: int = judge_validity.DEFAULT_PAIRS,
    pairwise_pairs: str | None = None,
    gold_graph: str | Path | None = None,
    pairwise_controls: int = pairwise.DEFAULT_CONTROLS,
    types: list[str] | None = None,
    method_limits: dict[str, MethodLimit] | None = None,
    judge_llm: ChatLLM | None = None,
    judge_sample: int | None = None,
    expected: dict[str, float | None] | None = None,
    keep_controls: str | Path | None = None,
) -> EvalRun:
    """Evaluate the ``chosen`` methods over ``index`` on the question set and return what the
    report is written from. ``judge_controls`` / ``pairwise_controls``: planted control pairs
    per RAGAS metric / for the pairwise judge; ``pairwise_pairs``: "all" or "a:b,c:d";
    ``method_limits``: see questions.py; ``judge_llm``: default ``llm``, the answering
    model judges itself; ``judge_sample``: the seeded judge sample's size (None: the setting
    ``eval.judge_sample``; 0: all); ``expected``: seconds per stage, for the progress ETA;
    ``keep_controls``: an earlier run's judge_controls.csv whose planted cases are kept, so
    adding a method does not redraw (and re-judge) them all."""
    judge_llm = judge_llm or llm
    methods = list(chosen)
    primary = parse_primary(settings.eval.primary)  # a malformed one stops before any call
    check_names("primary hypothesis", primary, methods, [*JUDGE_FREE_METRICS, *metrics])
    judge_controls = judge_controls if metrics else 0
    kept = judge_validity.load_kept(keep_controls) if keep_controls else None
    questions = planned_questions(index, questions_path, types, limit)
    judge = Judge(settings, judge_llm, embedder, metrics)
    method_limits = method_limits or {}
    unknown = sorted(set(method_limits) - set(chosen))
    if unknown:
        raise UnknownMethodError(
            f"method limits name {', '.join(unknown)}, which are not among the methods "
            f"evaluated ({', '.join(chosen)})"
        )
    splits = set(questions["split"].dropna()) if "split" in questions else set()
    missing = sorted({v for v in method_limits.values() if isinstance(v, str) and v not in splits})
    if missing:
        raise QuestionSetError(
            f"{questions_path}: method limits name the split {', '.join(missing)}, which no "
            f"kept question has (splits there: {', '.join(sorted(splits)) or 'none'})"
        )
    size = settings.eval.judge_sample if judge_sample is None else judge_sample
    sample = judge_sample_ids(questions, size, settings.eval.seed)
    in_sample = {str(i) for i in questions["id"]} if sample is None else sample
    jobs = [
        partial(evaluate_pair, method, judge, question, metrics, str(question["id"]) in in_sample)
        for position, (_, question) in enumerate(questions.iterrows())
        for name, method in chosen.items()
        if limited_to(method_limits.get(name), position, question)
    ]
    names = [ANSWER_STAGE, *([CONTROLS_STAGE] if judge_controls else [])]
    names += [PAIRWISE_STAGE] if pairwise_pairs else []
    lines = lines_of.RunProgress(names, expected, progress, unit="answers")
    in_flight = settings.llm.concurrency
    with lines.stage(ANSWER_STAGE, counts_gathers=False):
        records = pd.DataFrame(run_sync(gather_counted(jobs, in_flight)))
    # a control's replay miss is its own (collected per task), at any concurrency
    with lines.stage(CONTROLS_STAGE, "judgements", False) if judge_controls else nullcontext():
        controls = judge_validity.run_controls(
            judge, records, questions, metrics, judge_controls, settings.eval.seed, in_flight, kept
        )
    judgements = None
    if pairwise_pairs:
        pairs = pairwise.parse_pairs(pairwise_pairs, methods)
        judged = questions[questions["type"].isin(pairwise.JUDGED_TYPES)]
        hyde = settings.query.methods["hyde"]
        closed_book = hyde.max_tokens  # every judged method is also rated against it
        with lines.stage(PAIRWISE_STAGE, "judgements", counts_gathers=False):
            one = 1 if settings.cache.mode == "replay" else in_flight  # replay: a pair at a time
            judgements = pairwise.run_pairwise(
                judge_llm, records, judged, pairs, one, pairwise_controls, closed_book, llm
            )
    beside = Path(questions_path).parent / "gold_graph.json"
    gold_path = gold_graph or (beside if beside.is_file() else None)
    gold = load_gold_graph(gold_path) if gold_path else None
    records = judge_free_columns(records, questions, index, gold)
    hops = (
        hop_evidence(records, questions, EvidenceIndex(index))
        if has_decompositions(questions)
        else None
    )
    limits = ", ".join(f"{m}: {describe_limit(n)}" for m, n in method_limits.items())
    sample_meta = {}
    if sample:
        sampled = ", ".join(m for m in metrics if m in SAMPLED_METRICS) or "no metric asked"
        split = "test questions" if "split" in questions.columns else "questions"
        sample_meta["judge sample"] = (
            f"{sampled} on a seeded sample of {len(sample)} of {len(questions)} {split} "
            f"(eval.judge_sample, seed {settings.eval.seed}); the other metrics on all"
        )
    judged_pairs = {"pairwise control pairs": pairwise_controls}
    judged_pairs["pairwise closed-book reference"] = True
    meta = {
        "corpus": repo_relative(index.manifest.get("input", "")),
        "index": repo_relative(index.path),
        "questions file": repo_relative(questions_path),
        "gold graph": repo_relative(gold_path) if gold_path else "none",
        "n_questions": len(questions),
        "methods": ", ".join(methods),
        **({"method limits": limits} if limits else {}),
        "llm_model": settings.llm.model,
        "judge": {
            "model": judge_llm.model,
            "endpoint": endpoint_name(judge_llm.settings.llm.base_url),
            "self_judged": judge_llm is llm,
        },
        "embedding_model": embedder.model_id,
        "cache_mode": settings.cache.mode,
        "ragas_settings": {
            "metrics": ", ".join(metrics),
            "judge calls per answer": ", ".join(f"{m} {JUDGE_CALLS[m]}" for m in metrics),
            **sample_meta,
            "answer_relevancy strictness": ANSWER_RELEVANCY_STRICTNESS,
            "judge temperature": 0.0,
            "judge control pairs per metric": judge_controls,
            **({"judge controls kept from": repo_relative(keep_controls)} if keep_controls else {}),
            **(judged_pairs if pairwise_pairs else {}),
        },
        "generated_by": command or "python -m graphrag eval",
        **({TUNED_FIELD: settings.eval.tuned_on_test} if settings.eval.tuned_on_test else {}),
        **({PRIMARY_FIELD: settings.eval.primary} if settings.eval.primary else {}),
    }
    return EvalRun(
        records,
        metrics,
        meta,
        n_resamples=stats.DEFAULT_RESAMPLES,
        seed=settings.eval.seed,
        controls=controls,
        judgements=judgements,
        hops=hops,
        run_info={"index_cost": index_cost(index.manifest)},
    )
