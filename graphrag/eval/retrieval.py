"""Retrieval-only evaluation: what each method would show the model, scored with no answer.

Why: evidence recall and recall@k need only a method's context and its ranking, so they can
be measured on many more benchmark questions, and over a much larger corpus, than the model
can answer in a sitting. Naive RAG, PPR and local search over an NLP-mode index make no LLM
call at all; HyDE and multi-query make only their retrieval calls (counted). HippoRAG's
papers report retrieval this way (recall@2 and recall@5 on MuSiQue's full distractor sets).

The scores are those of the answer reports, computed by the same code
(``metrics.EvidenceIndex``): a gold paragraph counts as read when one of its text units is
in the context verbatim, and recall@k looks at the method's first k ranked text units. Global
search and DRIFT read reports, not ranked text units, so they have nothing to score here.
Every method is compared with naive RAG by the paired Wilcoxon test over the same questions,
Holm-corrected over the methods compared (one family per metric), as the cross-corpus summary
does; the page's prose names only the differences that pass.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from graphrag import schemas as S
from graphrag.eval import hops, stats
from graphrag.eval.metrics import EvidenceIndex
from graphrag.eval.questions import load_questions
from graphrag.llm.coroutines import gather_with_progress, run_sync
from graphrag.llm.usage import track_usage
from graphrag.query.base import Method
from graphrag.report.tables import (
    MISSING,
    baseline_tests_table,
    cell,
    md,
    p_text,
    signed,
    table,
    with_ci,
)
from graphrag.settings import QuerySettings, Settings, repo_relative
from graphrag.text import tokens

if TYPE_CHECKING:
    from graphrag.workbench import Workbench

BASELINE = "naive"
RECALL_KS = (2, 5)
SCORES = ("evidence_recall", *(f"recall_at_{k}" for k in RECALL_KS))
NOT_RANKING = ("global", "drift")  # answer from reports: no ranked text units to score
ALPHA = 0.05  # as the answer reports (eval/report.write_report)
RECORDS = "retrieval.parquet"
TESTS = "tests.csv"
RUN = "run.json"
SUMMARY = "summary.md"


class RetrievalEvalError(ValueError):
    """A retrieval evaluation cannot run as asked; the message names the setting."""


async def retrieve_one(method: Method, question: pd.Series) -> dict[str, Any]:
    """Return one record: the context ``method`` would show the model for ``question``."""
    with track_usage() as usage:
        retrieval = await method.aretrieve_ranked(question["question"])
    return {
        "question_id": question["id"],
        "method": method.name,
        "contexts": [i.text for i in retrieval.items],
        "sources": [i.source for i in retrieval.items],
        "ranking": list(retrieval.ranking),
        "context_tokens": sum(tokens.count_tokens(i.text) for i in retrieval.items),
        "llm_calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
    }


async def retrieve_all(
    methods: dict[str, Method], questions: pd.DataFrame, progress: bool
) -> pd.DataFrame:
    """Return the records of every method on every question (question order, then method).
    A retrieval that fails is an error naming the question and the method."""
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
    """Return ``records`` with evidence recall and recall@k per ``RECALL_KS``."""
    support = questions.set_index("id")["support"]
    rows = []
    for record in records.itertuples(index=False):
        gold = list(support[record.question_id])
        rows.append(
            {
                "evidence_recall": evidence.evidence_recall(record.contexts, gold),
                **{
                    f"recall_at_{k}": evidence.recall_at_k(record.ranking, gold, k)
                    for k in RECALL_KS
                },
            }
        )
    return pd.concat([records, pd.DataFrame(rows, index=records.index)], axis=1)


def score_table(records: pd.DataFrame, options: dict[str, int]) -> list[str]:
    """Return the Markdown table of each method's scores (mean [CI] (n)), context and calls."""
    summary = stats.summarize(records, [*SCORES, "context_tokens", "llm_calls"], **options)
    rows = [
        [
            md(row["method"]),
            *(cell(row, metric) for metric in SCORES),
            f"{row['context_tokens_mean']:,.0f}",
            f"{row['llm_calls_mean']:.2f}",
        ]
        for _, row in summary.iterrows()
    ]
    header = ["Method", "Evidence recall", *(f"Recall@{k}" for k in RECALL_KS)]
    return table([*header, "Context tokens", "LLM calls"], rows)


def summary_lines(
    records: pd.DataFrame,
    tests: pd.DataFrame,
    hop_rows: pd.DataFrame,
    meta: dict[str, Any],
    seed: int = stats.DEFAULT_SEED,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    extra: Sequence[str] = (),
) -> list[str]:
    """Return the lines of the retrieval page: setup, scores with CIs, tests, ``extra``,
    per-hop, reading."""
    options = {"seed": seed, "n_resamples": n_resamples}
    lines = [
        "# Retrieval evaluation",
        "",
        "What each method would place in the answer prompt, scored with no answer call "
        "(`graphrag/eval/retrieval.py`). Evidence recall: the share of a question's gold "
        "paragraphs with a text unit verbatim in the context; recall@k: the share among the "
        "method's first k ranked text units. Mean [95% bootstrap CI] (n = questions).",
        "",
        *(f"- {k}: {md(v)}" for k, v in meta.items()),
        "",
        *score_table(records, options),
        "",
        f"## Against {BASELINE}",
        "",
        "Paired Wilcoxon test over the same questions; Holm's correction over the methods "
        "compared with the baseline, one family per metric.",
        "",
    ]
    lines += baseline_tests_table(tests, BASELINE, ALPHA)
    if extra:
        lines += ["", *extra]
    if not hop_rows.empty:
        section = hops.hops_section(hop_rows, per_question=False, **options)
        lines += ["", *section]
    lines += ["", "## Reading", "", *(f"- {sentence}" for sentence in reading(tests, ALPHA))]
    return lines


def reading(tests: pd.DataFrame, alpha: float) -> list[str]:
    """Return sentences generated from the tests: each difference that passes Holm, then how
    many do not and the nearest of those, with its p before and after correction (a CI that
    excludes zero is not a claim: the paired test with Holm's correction decides)."""
    if tests.empty:
        return [f"No method was compared with {BASELINE}."]
    passed = tests[tests["p_holm"] < alpha]
    sentences = [
        f"{t.method} {'>' if t.mean_diff > 0 else '<'} {BASELINE} on {t.metric} "
        f"({t.method} minus {BASELINE}: {with_ci(t.mean_diff, t.ci_low, t.ci_high, signed)}, "
        f"p {p_text(t.p_value)} before and {p_text(t.p_holm)} after Holm, n={t.n})."
        for t in passed.itertuples(index=False)
    ]
    rest = tests[~(tests["p_holm"] < alpha)]
    if rest.empty:
        return sentences
    nearest = rest.sort_values("p_value", kind="stable").iloc[0]
    lead = (
        f"Not significant: the other {len(rest)}"
        if len(passed)
        else f"No difference from {BASELINE} passes Holm's correction at {alpha} "
        f"({len(rest)} tested)"
    )
    return [
        *sentences,
        f"{lead}; the nearest is {nearest['method']} on {nearest['metric']}, "
        f"{with_ci(nearest['mean_diff'], nearest['ci_low'], nearest['ci_high'], signed)}, "
        f"p {p_text(nearest['p_value'])} before and {p_text(nearest['p_holm'])} after Holm.",
    ]


def changed_query_settings(settings: Settings) -> str:
    """Return the ``query.*`` settings that differ from their defaults ("k = v, ..."): a
    sensitivity run says on its page what it changed."""
    defaults = QuerySettings().flat()
    return ", ".join(
        f"{key} = {value}"
        for key, value in settings.query.flat().items()
        if defaults.get(key) != value
    )


def run_retrieval(
    bench: Workbench,
    questions_path: str | Path,
    methods: list[str],
    out: str | Path,
    limit: int | None = None,
    progress: bool = True,
    command: str | None = None,
) -> pd.DataFrame:
    """Score the contexts ``methods`` would build for each question of ``questions_path`` over
    the workbench's loaded index; write ``retrieval.parquet`` (scores, sources, rankings),
    ``tests.csv``, ``hops.csv`` (per-hop evidence), ``run.json`` and ``summary.md`` to ``out``."""
    no_ranking = [m for m in methods if m in NOT_RANKING]
    if no_ranking:
        raise RetrievalEvalError(
            f"--methods: {', '.join(no_ranking)}: answered from community reports, with no "
            "ranked text units to score; a retrieval evaluation scores chunk rankings (naive, "
            "hyde, multi_query, local, ppr)"
        )
    index = bench.index_in_use
    questions = load_questions(questions_path, documents=set(index.documents[S.ID]))
    if limit:
        questions = questions.head(limit)
    chosen = bench.methods(methods)
    records = run_sync(retrieve_all(chosen, questions, progress))
    evidence = EvidenceIndex(index)
    records = score(records, questions, evidence)
    hop_rows = (
        hops.hop_evidence(records, questions, evidence)
        if hops.has_decompositions(questions)
        else pd.DataFrame(columns=hops.HOP_COLUMNS)
    )
    options = {
        "seed": bench.settings.eval.seed,
        "n_resamples": bench.settings.eval.bootstrap_samples,
    }
    meta = {
        "questions": f"{questions_path} ({len(questions)})",
        "index": f"{index.path} ({len(index.documents)} documents, "
        f"{len(index.text_units)} text units, {len(index.entities)} entities)",
        "methods": ", ".join(methods),
        "query settings not at their defaults": changed_query_settings(bench.settings) or "none",
        "generated by": command or MISSING,
    }
    write_report(out, records, hop_rows, meta, options)
    return records


def write_report(
    out: str | Path,
    records: pd.DataFrame,
    hop_rows: pd.DataFrame,
    meta: dict[str, Any],
    options: dict[str, int],
    extra: Sequence[str] = (),
) -> pd.DataFrame:
    """Test every method of ``records`` against naive RAG and write the report folder
    (``retrieval.parquet``, ``tests.csv``, ``hops.csv``, ``run.json``, ``summary.md`` with
    ``extra`` lines before the per-hop section); return the tests."""
    tables = {m: stats.scores_by_question(records, m) for m in SCORES}
    tests = stats.against_baseline(tables, BASELINE, **options)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records.drop(columns=["contexts"], errors="ignore").to_parquet(out / RECORDS, index=False)
    tests.to_csv(out / TESTS, index=False)
    hop_rows.to_csv(out / hops.HOPS_CSV, index=False)
    (out / RUN).write_text(json.dumps({**meta, **options}, indent=1) + "\n", encoding="utf-8")
    lines = summary_lines(records, tests, hop_rows, meta, extra=extra, **options)
    (out / SUMMARY).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tests


@dataclasses.dataclass
class ReportFiles:
    """A retrieval report folder read back: what :func:`write_report` wrote."""

    run: dict[str, Any]
    records: pd.DataFrame
    tests: pd.DataFrame
    hops: pd.DataFrame


def read_report(folder: str | Path) -> ReportFiles:
    """Read a retrieval report folder (question ids as strings, so ids that look like numbers
    still match across files); a folder that is not one is an error naming it."""
    folder = Path(folder)
    try:
        return ReportFiles(
            run=json.loads((folder / RUN).read_text(encoding="utf-8")),
            records=pd.read_parquet(folder / RECORDS),
            tests=pd.read_csv(folder / TESTS),
            hops=pd.read_csv(folder / hops.HOPS_CSV, dtype={"question_id": str}),
        )
    except (OSError, ValueError) as err:
        raise RetrievalEvalError(
            f"{folder} is not a retrieval report (written by `graphrag retrieval`): {err}"
        ) from err


def summary_section(folder: str | Path) -> list[str]:
    """Return the cross-corpus summary's lines for a retrieval report folder (``run.json``,
    ``retrieval.parquet``, ``tests.csv`` as :func:`run_retrieval` wrote them): its setting, the
    score table and the reading, generated from those files."""
    folder = Path(folder)
    report = read_report(folder)
    run, records, tests = report.run, report.records, report.tests
    options = {k: run[k] for k in ("seed", "n_resamples") if k in run}
    return [
        f"## Retrieval only: {folder.name}",
        "",
        "Contexts scored with no answer call (`graphrag retrieval`, "
        f"{repo_relative(folder / SUMMARY)}): "
        f"questions {run['questions']}; index {run['index']}; query settings not at their "
        f"defaults: {run.get('query settings not at their defaults', 'none')}.",
        "",
        *score_table(records, options),
        "",
        *(f"- {sentence}" for sentence in reading(tests, ALPHA)),
    ]
