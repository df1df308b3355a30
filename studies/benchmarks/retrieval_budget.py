"""Is local search's evidence recall the graph's doing, or only its larger context budget?

Run: .venv/bin/python -m studies.benchmarks.retrieval_budget [--config data/musique/graphrag.toml]
     [--index output/musique_nlp] [--questions data/musique/questions.jsonl] [--limit 30]

Local search fills a context of up to ``query.max_context_tokens`` (3,000) while naive
RAG and PPR read ``query.top_k`` chunks (a few hundred tokens on MuSiQue's short paragraphs).
This benchmark builds, per question and with no LLM call, the context each method would show
the model (local's entities, relationships, report and text units; naive's and PPR's
chunks), then the same two chunk rankings packed to *local's own token count for that
question* ("at local's budget"), and prints per method the mean evidence recall (the share of
gold supporting paragraphs held verbatim by the context, as the reports compute it) and the
mean context tokens, then local's paired difference with each at equal budget, and PPR's with
naive when both fill local's budget (bootstrap CI and Wilcoxon p, workbench.eval.stats).
These are retrieval figures, not answers: the reports' evidence recall is computed from the
recorded answers' contexts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from graphrag.llm.client import run_sync
from graphrag.query.base import Method, fit_items, items_tokens
from graphrag.text import tokens
from workbench import Workbench
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import load_questions
from workbench.eval.stats import bootstrap_ci, paired_test


def chunks_within(method: Method, rows: list[int], budget: int) -> list[str]:
    """Return the texts of the ranked chunks ``rows`` that fit ``budget``, packed as every
    context is (``fit_items``: a chunk that does not fit is skipped)."""
    return [i.text for i in fit_items(method.text_unit_items(rows), budget)]


def contexts_per_question(bench: Workbench, questions: pd.DataFrame) -> pd.DataFrame:
    methods = bench.methods(["naive", "ppr", "local"])
    naive, ppr, local = methods["naive"], methods["ppr"], methods["local"]
    rows = []
    for _, q in questions.iterrows():
        question = q["question"]
        local_items = run_sync(local.aretrieve(question))
        local_context = [i.text for i in local_items]
        budget = items_tokens(local_items)
        dense = naive.text_unit_ranking(
            naive.embedder.embed_one(question), len(bench.index_in_use.text_units)
        )
        by_ppr = ppr.ranking(question)
        top_k = naive.params.top_k
        contexts = {
            "naive": naive.text_unit_items(dense[:top_k]),
            "ppr": ppr.text_unit_items(by_ppr[:top_k]),
        }
        contexts = {name: [i.text for i in items] for name, items in contexts.items()}
        contexts["local"] = local_context
        contexts["naive at local's budget"] = chunks_within(naive, dense, budget)
        contexts["ppr at local's budget"] = chunks_within(ppr, by_ppr, budget)
        for name, texts in contexts.items():
            rows.append(
                {
                    "question_id": q["id"],
                    "method": name,
                    "context_tokens": sum(tokens.count_tokens(t) for t in texts),
                    "texts": texts,
                    "support": list(q["support"]),
                }
            )
    return pd.DataFrame(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="data/musique/graphrag.toml")
    parser.add_argument("--index", default="output/musique_nlp")
    parser.add_argument("--questions", default="data/musique/questions.jsonl")
    parser.add_argument("--limit", type=int, default=30)
    args = parser.parse_args()
    if not Path(args.index, "text_units.parquet").is_file():
        parser.error(
            f"no index at {args.index}: build it with "
            f"`python -m graphrag --config {args.config} index --input data/musique/docs "
            f"--out {args.index}`"
        )
    questions = load_questions(args.questions).head(args.limit)
    with Workbench(args.config, cache="replay") as bench:
        bench.load(args.index)
        frame = contexts_per_question(bench, questions)
        evidence = EvidenceIndex(bench.index_in_use)
    frame["evidence_recall"] = [
        evidence.evidence_recall(t, s)
        for t, s in zip(frame["texts"], frame["support"], strict=True)
    ]
    print(f"{len(questions)} questions of {args.questions}, index {args.index} (no LLM call)\n")
    print("| context | evidence recall | context tokens |\n|---|---|---|")
    for name, group in frame.groupby("method", sort=False):
        recall = bootstrap_ci(group["evidence_recall"])
        print(
            f"| {name} | {recall.mean:.3f} [{recall.low:.3f}, {recall.high:.3f}] (n={recall.n}) "
            f"| {group['context_tokens'].mean():,.0f} |"
        )
    wide = frame.pivot(index="question_id", columns="method", values="evidence_recall")
    print("\nlocal minus each, per question (paired):\n")
    print("| against | mean difference [95% CI] | Wilcoxon p | n |\n|---|---|---|---|")
    for other in ["naive", "naive at local's budget", "ppr", "ppr at local's budget"]:
        result = paired_test(wide["local"], wide[other])
        print(
            f"| {other} | {result.mean_diff:+.3f} [{result.ci_low:+.3f}, {result.ci_high:+.3f}] "
            f"| {result.p_value:.3f} | {result.n} |"
        )
    result = paired_test(wide["ppr at local's budget"], wide["naive at local's budget"])
    print(
        f"\nPPR minus naive, both at local's budget: {result.mean_diff:+.3f} "
        f"[{result.ci_low:+.3f}, {result.ci_high:+.3f}], Wilcoxon p {result.p_value:.3f}, "
        f"n {result.n}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
