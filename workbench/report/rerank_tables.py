"""What a rerank stage changed: each ``X+rerank`` of a retrieval report read against its own
first stage ``X`` on the same questions.

The tests of a report are against naive RAG, so ``hybrid+rerank`` is never compared with
``hybrid`` there, and a reranker that keeps the first-stage order scores like its first stage
without saying so. This section counts how often the stage moved anything at all, gives the
paired differences it made (descriptive, with bootstrap intervals; the tests are elsewhere) and
the tokens each read, since a rerank is meant to buy quality at equal context."""

from __future__ import annotations

import pandas as pd

from graphrag.query.registry import split_variant
from workbench.eval import stats
from workbench.report import tables

TOP = 5  # the first units compared, as recall@5 and nDCG@5 count them
DELTAS = {"mrr": "MRR", "recall_at_5": "recall@5", "ndcg_at_5": "nDCG@5"}


def rerank_pairs(methods: list[str]) -> list[tuple[str, str]]:
    """Return (first stage, reranked) for each reranked method whose first stage is present."""
    pairs = []
    for method in methods:
        base, reranked = split_variant(method)
        if reranked and base in methods:
            pairs.append((base, method))
    return pairs


def rerank_row(records: pd.DataFrame, base: str, reranked: str, **options: int) -> list[str]:
    """Return one row of the section: questions both were scored on, how many had their first
    unit / their first five in another order / another set of first five, the paired
    differences, and the mean context and model-prompt tokens of both."""
    both = records[records["method"].isin([base, reranked])]
    wide = both.pivot(index="question_id", columns="method", values="ranking").dropna()
    tops = [(list(r[base])[:TOP], list(r[reranked])[:TOP]) for _, r in wide.iterrows()]
    first = sum(a[:1] != b[:1] for a, b in tops)
    order = sum(a != b for a, b in tops)
    sets = sum(set(a) != set(b) for a, b in tops)
    deltas = []
    for metric in DELTAS:
        if metric not in records:
            deltas.append("—")
            continue
        scores = stats.scores_by_question(both, metric)
        result = stats.paired_test(scores[reranked], scores[base], **options)
        ci = (result.mean_diff, result.ci_low, result.ci_high)
        deltas.append(tables.with_ci(*ci, tables.signed))
    tokens = both.groupby("method")[["context_tokens", "prompt_tokens"]].mean()
    context = [f"{tokens.loc[m, 'context_tokens']:,.0f}" for m in (base, reranked)]
    return [
        tables.md(reranked),
        str(len(wide)),
        f"{first} / {len(wide)}",
        f"{order} / {len(wide)}",
        f"{sets} / {len(wide)}",
        *deltas,
        " / ".join(context),
        f"{tokens.loc[reranked, 'prompt_tokens']:,.0f}",
    ]


def rerank_section(records: pd.DataFrame, **options: int) -> list[str]:
    """Return the ``## What the rerank stage changed`` section (none without a reranked method
    beside its first stage)."""
    pairs = rerank_pairs(stats.methods_in_order(records))
    if not pairs:
        return []
    header = [
        "Reranked",
        "Questions",
        "First unit changed",
        f"First {TOP} reordered",
        f"Set of first {TOP} changed",
        *(f"{name} − first stage" for name in DELTAS.values()),
        "Context tokens (first stage / reranked)",
        "Model prompt tokens (reranked)",
    ]
    rows = [rerank_row(records, base, reranked, **options) for base, reranked in pairs]
    return [
        "## What the rerank stage changed",
        "",
        "Each reranked method against its own first stage on the same questions: how many "
        "questions' first-ranked text unit changed, how many had their first "
        f"{TOP} in another order, and how many another set of first {TOP} (only that can move "
        f"recall@{TOP}); then the paired difference it made, mean [95% bootstrap CI], "
        "descriptive (the tests are against naive, above); then the tokens of the answer "
        "context (the stage reorders within the same budget), and the prompt tokens the "
        "reranked method's retrieval sent the model (the rerank call, and a rewriter's).",
        "",
        *tables.table(header, rows),
    ]
