"""Retrieval-only evaluation: what each method would show the model, scored with no answer call
(evidence recall, recall@k, MRR, nDCG@k with binary relevance), so it runs on far more questions
than the model can answer, as HippoRAG's papers report retrieval. Each method is tested against
naive RAG, Holm-corrected over the methods per metric.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.coroutines import gather_with_progress, run_sync
from graphrag.llm.usage import track_usage
from graphrag.query.base import Method
from graphrag.query.registry import ALL_METHODS
from graphrag.settings import QuerySettings, Settings
from graphrag.text import tokens
from workbench.eval import hops, stats
from workbench.eval.declared import PRIMARY_FIELD, check_names, parse_primary, without_primary
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import DEFAULT_SPLIT, TUNED_FIELD, load_questions

BASELINE = "naive"
RECALL_KS = (2, 5)
NDCG_K = 5
SCORES = ("evidence_recall", *(f"recall_at_{k}" for k in RECALL_KS), "mrr", f"ndcg_at_{NDCG_K}")
SCORE_NAMES = ("Evidence recall", *(f"Recall@{k}" for k in RECALL_KS), "MRR", f"nDCG@{NDCG_K}")
NOT_RANKING = ("global", "drift")  # answer from reports: no ranked text units to score
NOT_GIVEN = "—"  # the command of a run started from Python


class RetrievalEvalError(ValueError):
    """A retrieval evaluation cannot run as asked; the message names the setting."""


async def retrieve_one(method: Method, question: pd.Series) -> dict[str, Any]:
    """Return one record: the context ``method`` would show the model for ``question``."""
    start = time.perf_counter()
    with track_usage() as usage:
        retrieval = await method.aretrieve_ranked(question["question"])
    seconds = time.perf_counter() - start
    return {
        "question_id": question["id"],
        "split": question.get("split", DEFAULT_SPLIT),
        "type": question.get("type"),
        "method": method.name,
        "contexts": [i.text for i in retrieval.items],
        "sources": [i.source for i in retrieval.items],
        "ranking": list(retrieval.ranking),
        "context_tokens": sum(tokens.count_tokens(i.text) for i in retrieval.items),
        "llm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "seconds": seconds,
    }


async def retrieve_all(
    methods: dict[str, Method], questions: pd.DataFrame, progress: bool
) -> pd.DataFrame:
    """Return the records of every method on every question (question order, then method)."""
    pairs = [(q, m) for _, q in questions.iterrows() for m in methods.values()]
    results = await gather_with_progress(
        (retrieve_one(m, q) for q, m in pairs), "retrieve", disable=not progress
    )
    for (question, method), result in zip(pairs, results, strict=True):
        if isinstance(result, Exception):
            raise RetrievalEvalError(
                f"question {question['id']}, method {method.name}: "
                f"{type(result).__name__}: {result}"
            ) from result
    return pd.DataFrame(results)


def score(records: pd.DataFrame, questions: pd.DataFrame, evidence: EvidenceIndex) -> pd.DataFrame:
    """Return ``records`` with evidence recall, recall@k per ``RECALL_KS``, the reciprocal
    rank of the first gold text unit (its mean is MRR) and nDCG@``NDCG_K``."""
    support = questions.set_index("id")["support"]
    rows = []
    for record in records.itertuples(index=False):
        gold = list(support[record.question_id])
        row = {"evidence_recall": evidence.evidence_recall(record.contexts, gold)}
        for k in RECALL_KS:
            row[f"recall_at_{k}"] = evidence.recall_at_k(record.ranking, gold, k)
        row["mrr"] = evidence.reciprocal_rank(list(record.ranking), gold)
        row[f"ndcg_at_{NDCG_K}"] = evidence.ndcg_at_k(list(record.ranking), gold, NDCG_K)
        rows.append(row)
    return pd.concat([records, pd.DataFrame(rows, index=records.index)], axis=1)


def changed_query_settings(settings: Settings) -> str:
    """Return the ``query.*`` settings that differ from their defaults ("k = v, ..."): a
    sensitivity run says on its page what it changed."""
    defaults = QuerySettings().flat()
    return ", ".join(
        f"{key} = {value}"
        for key, value in settings.query.flat().items()
        if defaults.get(key) != value
    )


def check_methods(names: Sequence[str]) -> None:
    """Raise when a method answers from reports, with no ranked text units to score."""
    no_ranking = [m for m in names if m in NOT_RANKING]
    if no_ranking:
        raise RetrievalEvalError(
            f"--methods: {', '.join(no_ranking)}: answered from community reports, with no "
            "ranked text units to score; a retrieval evaluation scores chunk rankings ("
            + ", ".join(m for m in ALL_METHODS if m not in NOT_RANKING)
            + ")"
        )


@dataclasses.dataclass
class RetrievalRun:
    """A retrieval evaluation's scored records, per-hop rows, description and statistics'
    settings, for ``report.retrieval_report.write_report``."""

    records: pd.DataFrame
    hops: pd.DataFrame
    meta: dict[str, Any]
    options: dict[str, int]


def run_retrieval(
    settings: Settings,
    index: Index,
    chosen: dict[str, Method],
    questions_path: str | Path,
    limit: int | None = None,
    progress: bool = True,
    command: str | None = None,
) -> RetrievalRun:
    """Score the contexts the ``chosen`` methods would build over ``index`` for each question
    of ``questions_path`` (evidence recall, recall@k, per-hop evidence); nothing is written."""
    methods = list(chosen)
    check_methods(methods)
    primary = parse_primary(settings.eval.primary)  # a malformed one stops before any call
    check_names("primary hypothesis", primary, methods, list(SCORES))
    known = set(index.documents[S.ID]) | set(index.text_units[S.ID])
    questions = load_questions(questions_path, documents=known)
    if limit:
        questions = questions.head(limit)
    records = run_sync(retrieve_all(chosen, questions, progress))
    evidence = EvidenceIndex(index)
    records = score(records, questions, evidence)
    hop_rows = (
        hops.hop_evidence(records, questions, evidence)
        if hops.has_decompositions(questions)
        else pd.DataFrame(columns=hops.HOP_COLUMNS)
    )
    options = {"seed": settings.eval.seed, "n_resamples": stats.DEFAULT_RESAMPLES}
    meta = {
        "questions": f"{questions_path} ({len(questions)})",
        "index": f"{index.path} ({len(index.documents)} documents, "
        f"{len(index.text_units)} text units, {len(index.entities)} entities)",
        "methods": ", ".join(methods),
        "query settings not at their defaults": changed_query_settings(settings) or "none",
        "generated by": command or NOT_GIVEN,
        **({PRIMARY_FIELD: settings.eval.primary} if settings.eval.primary else {}),
        **({TUNED_FIELD: settings.eval.tuned_on_test} if settings.eval.tuned_on_test else {}),
    }
    return RetrievalRun(records, hop_rows, meta, options)


def baseline_tests(
    records: pd.DataFrame, options: dict[str, int], primary: str | None = None
) -> pd.DataFrame:
    """Return every method of ``records`` tested against naive RAG on each score (paired
    Wilcoxon, Holm-corrected over the methods, one family per metric) but the declared
    ``primary`` comparison, which is tested alone (``eval.declared``)."""
    tables = {m: stats.scores_by_question(records, m) for m in SCORES if m in records}
    return stats.against_baseline(without_primary(tables, primary, BASELINE), BASELINE, **options)
