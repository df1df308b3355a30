"""Per-hop evidence: which hop of a multi-hop question's ``decomposition`` had its gold paragraph
in the method's contexts, showing where a chain breaks (found as ``EvidenceIndex`` reads it).
"""

from __future__ import annotations

import math

import pandas as pd

from workbench.eval import stats
from workbench.eval.metrics import EvidenceIndex

HOPS_CSV = "hops.csv"
HOP_COLUMNS = ["question_id", "method", "hop", "hops", "support", "found"]
FOUND, MISSED, NO_SUPPORT = "✓", "✗", "·"
NOT_ANSWERED = "—"  # a method not asked that question (eval --method-limits)


def has_decompositions(questions: pd.DataFrame) -> bool:
    """Return True when some question lists its hops (a multi-hop benchmark set)."""
    return "decomposition" in questions and bool(questions["decomposition"].map(bool).any())


def hop_evidence(
    records: pd.DataFrame, questions: pd.DataFrame, evidence: EvidenceIndex
) -> pd.DataFrame:
    """Return one row per (record, hop) (``HOP_COLUMNS``, ``hop`` from 1): ``found`` is 1.0
    when the method's contexts held that hop's paragraph, else 0.0 (NaN: no support)."""
    steps_of = {
        q: list(steps)
        for q, steps in zip(questions["id"], questions.get("decomposition", []), strict=False)
        if isinstance(steps, list | tuple) and len(steps)
    }
    rows = []
    for record in records.itertuples(index=False):
        steps = steps_of.get(record.question_id)
        if not steps:
            continue
        supports = [str(step.get("support") or "") for step in steps]
        read = evidence.documents_read(list(record.contexts), [s for s in supports if s])
        for position, support in enumerate(supports, start=1):
            found = float(support in read) if support else math.nan
            rows.append([record.question_id, record.method, position, len(steps), support, found])
    return pd.DataFrame(rows, columns=HOP_COLUMNS)


def hop_shares(
    hops: pd.DataFrame, n_resamples: int = stats.DEFAULT_RESAMPLES, seed: int = stats.DEFAULT_SEED
) -> pd.DataFrame:
    """Return the share of hops found per method and hop position (``stats.summarize``)."""
    rank = {method: i for i, method in enumerate(stats.methods_in_order(hops))}
    ordered = hops.assign(rank=hops["method"].map(rank)).sort_values(["rank", "hop"], kind="stable")
    return stats.summarize(
        ordered, ["found"], by=("method", "hop"), n_resamples=n_resamples, seed=seed
    )


def _question_table(per_pair: pd.Series, hops: pd.DataFrame) -> pd.DataFrame:
    """Return a (question, method) series as a question x method table in first-seen order."""
    questions = list(pd.unique(hops["question_id"]))
    return per_pair.unstack("method").reindex(index=questions, columns=stats.methods_in_order(hops))


def found_table(hops: pd.DataFrame) -> pd.DataFrame:
    """Return a question x method table of marks per hop ("✓✗": hop 1 found, hop 2 missed;
    "·": no support paragraph; "—": the method was not asked that question)."""
    marks = hops.assign(
        mark=hops["found"].map(
            lambda v: NO_SUPPORT if v is None or math.isnan(v) else FOUND if v else MISSED
        )
    )
    joined = (
        marks.sort_values("hop", kind="stable")
        .groupby(["question_id", "method"], sort=False)["mark"]
        .agg("".join)
    )
    return _question_table(joined, hops).fillna(NOT_ANSWERED)


ALL_HOPS = "all_hops_found"  # the test family's name of a whole chain found


def all_hops_found(hops: pd.DataFrame) -> pd.DataFrame:
    """Return a question x method table: 1.0 when every hop's paragraph was read, else 0.0."""
    complete = hops.groupby(["question_id", "method"], sort=False)["found"].agg(
        lambda s: float((s.dropna() == 1.0).all()) if s.notna().any() else math.nan
    )
    return _question_table(complete, hops)
