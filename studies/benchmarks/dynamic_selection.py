"""Dynamic community selection: does the relevance rating tell relevant reports from the rest?

Run: .venv/bin/python -m studies.benchmarks.dynamic_selection [--index output/kestrel_bay]
     [--questions data/kestrel_bay/thematic_questions.jsonl] [--record]

Global search's dynamic selection (``query.global_dynamic_selection``) rates reports 0-5
from the root down and maps only those rated at least ``global_dynamic_threshold``. It can
only save tokens and focus the map if the ratings discriminate. This rates every report of
the index for every question (``GlobalSearch.arate``, the same requests the method sends, so
a replay reads them from the LLM cache; ``--record`` asks the live model for the missing
ones, report by report, so one report's ratings share its prompt prefix in the server's
cache) and prints, with the questions' gold support documents as the truth: a report is
*on support* for a question when at least half of the documents its community's text units
come from support the question.

Printed: how the ratings separate on-support reports from the rest (ROC AUC: the chance that
an on-support report rates above an off-support one, ties counted half), for the mean
rating under the digits' probabilities (what the method uses) and for the digit the model
replied (what a greedy rating gives); then, per threshold, the reports dynamic selection
keeps per question and the share of them on support, against mapping the whole-graph level
global search maps without it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.llm.client import expected_grade
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import REPO_ROOT
from graphrag.workbench import Workbench

THRESHOLDS = (1.0, 1.5, 2.0, 2.5, 3.0)


def support_share(index, support: set[str]) -> dict[int, float]:
    """Return {community: share of its documents that are in ``support``}."""
    units = index.text_units.set_index(S.ID)[S.DOCUMENT_IDS]
    shares = {}
    for row in index.communities.itertuples(index=False):
        docs = {d for u in getattr(row, S.TEXT_UNIT_IDS) if u in units.index for d in units[u]}
        shares[int(getattr(row, S.COMMUNITY))] = len(docs & support) / len(docs) if docs else 0.0
    return shares


def auc(scores: list[float], labels: list[bool]) -> float:
    """ROC AUC by pairs: P(on-support score > off-support score), ties half."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


async def rate_all(method, questions: list[dict]) -> pd.DataFrame:
    """Rate every (report, question), report by report (two reports at a time)."""
    from graphrag.query.global_search.search import relevance_request

    text_of = await method.report_texts(method.index.communities[S.COMMUNITY])
    rows = []

    async def one_report(community: int, text: str) -> None:
        for q in questions:
            completion = await method.llm.achat(**relevance_request(q["question"], text))
            rows.append(
                {
                    "community": community,
                    "question_id": q["id"],
                    "expected": expected_grade(completion, prompts.RELEVANCE_SCALE),
                    "replied": float(completion.text.strip()[:1] or "nan"),
                }
            )

    pending = sorted(text_of.items())
    while pending:
        pair, pending = pending[:2], pending[2:]
        await asyncio.gather(*(one_report(c, t) for c, t in pair))
    return pd.DataFrame(rows)


def labelled(method, questions: list[dict], ratings: pd.DataFrame) -> pd.DataFrame:
    """Add the two truths and the embedding baseline to ``ratings``: ``on_support`` (at
    least half of the community's documents support the question), ``has_keyword`` (the
    report, with the entity facts the map shows under it, holds one of the question's
    answer keywords) and ``cosine`` (question against the report's embedding, no LLM)."""
    index = method.index
    reports = index.community_reports
    shown = method.with_facts(reports).set_index(S.COMMUNITY)[S.FULL_CONTENT]
    row_of = {int(c): i for i, c in enumerate(reports[S.COMMUNITY])}
    by_id = {q["id"]: q for q in questions}
    vectors = {q["id"]: method.embedder.embed_one(q["question"]) for q in questions}
    shares = {q["id"]: support_share(index, set(q["support"])) for q in questions}
    on_support, has_keyword, cosine = [], [], []
    for qid, community in zip(ratings["question_id"], ratings["community"], strict=True):
        on_support.append(shares[qid][community] >= 0.5)
        text = shown[community].casefold()
        has_keyword.append(any(k.casefold() in text for k in by_id[qid]["answer_keywords"]))
        cosine.append(float(method.vectors.reports[row_of[community]] @ vectors[qid]))
    return ratings.assign(on_support=on_support, has_keyword=has_keyword, cosine=cosine)


def selected(method, questions: list[dict], threshold: float | None) -> tuple[list, Usage]:
    """Return the communities the map reads per question (dynamic selection at ``threshold``;
    None: without selection, the whole-graph level) and what rating and map cost in all."""
    method.params.global_dynamic_selection = threshold is not None
    if threshold is not None:
        method.params.global_dynamic_threshold = threshold
    kept = []
    for q in questions:
        if threshold is None:
            chosen = method.level_reports(q["question"])
        else:
            chosen = asyncio.run(method.dynamic_reports(q["question"]))
        kept.append(sorted(int(c) for c in chosen[S.COMMUNITY]))
    with track_usage() as usage:  # the ratings (recorded, counted as made) and the map
        for q in questions:
            asyncio.run(method.amap(q["question"]))
    return kept, usage


def discrimination(method, ratings: pd.DataFrame) -> list[str]:
    """Return the lines on how well each score separates on-support reports from the rest."""
    per_report = ratings.groupby("community")["expected"]
    others = (per_report.transform("sum") - ratings["expected"]) / (
        per_report.transform("count") - 1
    )
    ratings = ratings.assign(centred=ratings["expected"] - others)
    scores = {
        "expected": "the rating as used: mean under the six digits' probabilities",
        "replied": "the digit replied (a greedy rating)",
        "centred": "expected minus the report's mean over the other questions",
        "cosine": "embedding similarity of question and report (no LLM)",
    }
    lines = ["ROC AUC (on support | holds a keyword):"]
    for column, what in scores.items():
        a = auc(list(ratings[column]), list(ratings["on_support"]))
        b = auc(list(ratings[column]), list(ratings["has_keyword"]))
        lines.append(f"  {a:.3f} | {b:.3f}  {what}")
    replied = ratings["replied"].value_counts().sort_index()
    lines.append("  digits replied: " + ", ".join(f"{int(d)}: {n}" for d, n in replied.items()))
    mean_of = per_report.mean()
    kinds = method.index.community_reports.set_index(S.COMMUNITY)[S.CONTEXT_SOURCE]
    template = mean_of[kinds.reindex(mean_of.index) == "template"].mean()
    written = mean_of[kinds.reindex(mean_of.index) != "template"].mean()
    lines.append(
        f"  mean rating of a report over the questions: template reports {template:.2f}, "
        f"LLM-written {written:.2f} (range over reports {mean_of.min():.2f}-{mean_of.max():.2f})"
    )
    return lines


def selection(method, questions: list[dict], ratings: pd.DataFrame) -> list[str]:
    """Return one line per threshold (and without selection): reports mapped per question,
    the share of them on support, and what rating and map cost per question."""
    truth = dict(
        zip(
            zip(ratings["question_id"], ratings["community"], strict=True),
            ratings["on_support"],
            strict=True,
        )
    )
    lines = ["Per question: reports mapped, share of them on support, and rating + map cost"]
    for threshold in (None, *THRESHOLDS):
        kept, usage = selected(method, questions, threshold)
        n = sum(map(len, kept))
        hits = sum(truth[(q["id"], c)] for q, cs in zip(questions, kept, strict=True) for c in cs)
        name = "no selection" if threshold is None else f"threshold {threshold:.1f}"
        per = len(questions)
        lines.append(
            f"  {name}: {n / per:.1f} reports, {hits / n if n else float('nan'):.3f} on support; "
            f"{usage.calls / per:.1f} calls, {usage.prompt_tokens / per:,.0f} prompt + "
            f"{usage.completion_tokens / per:,.0f} completion tokens"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(REPO_ROOT / "output" / "kestrel_bay"))
    parser.add_argument(
        "--questions", default=str(REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl")
    )
    parser.add_argument("--record", action="store_true", help="ask the live model for misses")
    args = parser.parse_args()
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines()]
    questions = [q for q in questions if q.get("support") and q.get("answer_keywords")]
    with Workbench(cache="on" if args.record else "replay") as bench:
        bench.load(args.index)
        method = bench.methods(["global"])["global"]
        ratings = labelled(method, questions, asyncio.run(rate_all(method, questions)))
        print(
            f"{len(ratings)} ratings: {ratings['community'].nunique()} reports x "
            f"{len(questions)} questions; on support {int(ratings['on_support'].sum())}, "
            f"holding an answer keyword {int(ratings['has_keyword'].sum())}"
        )
        print("\n".join(discrimination(method, ratings) + selection(method, questions, ratings)))


if __name__ == "__main__":
    main()
