"""Per-hop evidence: for multi-hop questions, which hop's gold paragraph each method read.

A benchmark question's ``decomposition`` lists its hops in reasoning order, each with the
paragraph that answers it (``support``). Evidence recall averages over a question's
paragraphs; here each hop is kept apart, so a reader sees *where* a chain breaks: a method
that finds the first hop's paragraph (named in the question) but not the bridge entity's
(named only in another paragraph) misses hop 2, which is what graph methods claim to fix.

A hop counts as found when a text unit of its paragraph was placed verbatim in the answer's
prompt (the same test as ``metrics.EvidenceIndex.evidence_recall``); summaries, map points
and entity descriptions do not count, so global search finds no hop by construction. A
failed answer read nothing and finds no hop. A hop without a support paragraph is NaN.
"""

from __future__ import annotations

import math

import pandas as pd

from graphrag.eval import stats
from graphrag.eval.metrics import EvidenceIndex

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
    """Return one row per (record, hop): whether the method's contexts held that hop's paragraph.

    Columns ``HOP_COLUMNS``; ``hop`` counts from 1, ``hops`` is the question's number of hops,
    ``found`` is 1.0 / 0.0 (NaN for a hop without a support paragraph). Records of questions
    without a decomposition give no rows.
    """
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
            rows.append(
                {
                    "question_id": record.question_id,
                    "method": record.method,
                    "hop": position,
                    "hops": len(steps),
                    "support": support,
                    "found": float(support in read) if support else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=HOP_COLUMNS)


def hop_shares(
    hops: pd.DataFrame, n_resamples: int = stats.DEFAULT_RESAMPLES, seed: int = stats.DEFAULT_SEED
) -> pd.DataFrame:
    """Return, per method and hop position, the share of hops found (``found_mean``, CI, n).

    A ``stats.summarize`` table over ``by=("method", "hop")``, hops in ascending order and
    methods in their order of first appearance.
    """
    rank = {method: i for i, method in enumerate(methods_of(hops))}
    ordered = hops.assign(rank=hops["method"].map(rank)).sort_values(["rank", "hop"], kind="stable")
    table = stats.summarize(
        ordered, ["found"], by=("method", "hop"), n_resamples=n_resamples, seed=seed
    )
    return table.reset_index(drop=True)


def methods_of(hops: pd.DataFrame) -> list[str]:
    return [str(m) for m in pd.unique(hops["method"])]


def found_table(hops: pd.DataFrame) -> pd.DataFrame:
    """Return a question x method table of found/missed marks per hop ("✓✗" = hop 1 found,
    hop 2 missed; "·" for a hop without a support paragraph; "—" where the method did not
    answer the question, e.g. one recorded on the first questions only), questions in record
    order."""
    marks = hops.assign(
        mark=hops["found"].map(
            lambda v: NO_SUPPORT if v is None or math.isnan(v) else FOUND if v else MISSED
        )
    )
    joined = (
        marks.sort_values("hop", kind="stable")
        .groupby(["question_id", "method"], sort=False)["mark"]
        .agg("".join)
        .unstack("method")
    )
    questions = list(pd.unique(hops["question_id"]))
    return joined.reindex(index=questions, columns=methods_of(hops)).fillna(NOT_ANSWERED)


def all_hops_found(hops: pd.DataFrame) -> pd.DataFrame:
    """Return a question x method table: 1.0 when every hop's paragraph was read, else 0.0."""
    complete = hops.groupby(["question_id", "method"], sort=False)["found"].agg(
        lambda s: float((s.dropna() == 1.0).all()) if s.notna().any() else math.nan
    )
    questions = list(pd.unique(hops["question_id"]))
    return complete.unstack("method").reindex(index=questions, columns=methods_of(hops))


def telling_question(hops: pd.DataFrame) -> str:
    """Return the question to show hop by hop: the first on which the methods disagree about a
    hop, else the first with a missed hop, else the first (record order), among the questions
    every method answered when there are any (a method may cover the first questions only)."""
    questions = list(pd.unique(hops["question_id"]))
    methods = hops.groupby("question_id", sort=False)["method"].nunique()
    everyone = [q for q in questions if methods[q] == hops["method"].nunique()]
    questions = everyone or questions
    spread = hops.groupby(["question_id", "hop"], sort=False)["found"].nunique()
    split = set(spread[spread > 1].index.get_level_values("question_id"))
    missed = set(hops.loc[hops["found"] == 0.0, "question_id"])
    for chosen in (split, missed):
        for question in questions:
            if question in chosen:
                return question
    return questions[0]
