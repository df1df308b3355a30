"""The pairwise judge against a closed-book answer: does it reward what the corpus says?

Run: .venv/bin/python benchmarks/judge_closed_book.py [--record]
     [--report reports/kestrel_bay_thematic] [--questions data/kestrel_bay/thematic_questions.jsonl]

The pairwise judge's planted control (a question's own answer against the answer to another
question) checks that it reads the answers. It does not check that it prefers an answer
drawn from the corpus to a fluent one drawn from nowhere, and a global-search arm recorded
on the thematic questions (README, "An extractive map and entity facts") won the judgment
with answers that named nothing from the corpus. This rates, on each criterion, a
closed-book answer to every question (HyDE's hypothetical passage: the model's answer with
no corpus text, ``prompts.hypothetical_passage``) with the same calls the judge makes
(``pairwise.rate_answer``), and prints the win rate of each method's recorded answer in the
report against it, with a bootstrap CI, beside the report's own control. Every call
replays from the LLM cache; ``--record`` asks the live model for what is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pandas as pd

from graphrag import prompts
from graphrag.config import REPO_ROOT
from graphrag.eval import pairwise, stats
from graphrag.workbench import Workbench


async def closed_book_ratings(bench: Workbench, questions: list[dict]) -> dict[str, dict]:
    """Return {question id: {criterion: rating}} of the closed-book answer to each question."""
    llm, tokens = bench.llm, bench.settings.query.hyde_max_tokens

    async def one(question: str) -> dict[str, float]:
        passage = await llm.achat(prompts.hypothetical_passage(question), max_tokens=tokens)
        return await pairwise.rate_answer(llm, question, passage.text.strip())

    ratings = await asyncio.gather(*(one(q["question"]) for q in questions))
    return {q["id"]: r for q, r in zip(questions, ratings, strict=True)}


def against_closed_book(report: Path, closed: dict[str, dict]) -> pd.DataFrame:
    """Return the win rate of each method's answer over the closed-book answer, per
    criterion, from the report's recorded ratings (pairwise.csv's rating of each answer)."""
    judged = pd.read_csv(report / "pairwise.csv")
    judged = judged[judged["status"] == pairwise.SCORED]
    ratings = pd.concat(
        [
            judged[["question_id", "method_a", "criterion", "rating_a"]].set_axis(
                ["question_id", "method", "criterion", "rating"], axis=1
            ),
            judged[["question_id", "method_b", "criterion", "rating_b"]].set_axis(
                ["question_id", "method", "criterion", "rating"], axis=1
            ),
        ]
    )
    ratings = ratings[~ratings["method"].str.startswith("control")].drop_duplicates(
        ["question_id", "method", "criterion"]
    )
    ratings = ratings[ratings["question_id"].isin(closed)]
    rows = []
    for (method, criterion), frame in ratings.groupby(["method", "criterion"], sort=False):
        scores = [
            pairwise.score(r, closed[q][criterion])
            for q, r in zip(frame["question_id"], frame["rating"], strict=True)
        ]
        estimate = stats.bootstrap_ci(pd.Series(scores))
        rows.append(
            {
                "answer": method,
                "criterion": criterion,
                "win_rate": estimate.mean,
                "low": estimate.low,
                "high": estimate.high,
                "n": estimate.n,
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--report", type=Path, default=REPO_ROOT / "reports" / "kestrel_bay_thematic"
    )
    parser.add_argument(
        "--questions", default=str(REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl")
    )
    parser.add_argument("--record", action="store_true", help="ask the live model for misses")
    args = parser.parse_args()
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines()]
    with Workbench(cache="on" if args.record else "replay") as bench:
        closed = asyncio.run(closed_book_ratings(bench, questions))
    table = against_closed_book(args.report, closed)
    print(f"Win rate of the recorded answer over a closed-book answer ({len(closed)} questions):")
    for _, row in table.iterrows():
        print(
            f"  {row['answer']:<8} {row['criterion']:<18} {row['win_rate']:.3f} "
            f"[{row['low']:.3f}, {row['high']:.3f}] (n={row['n']})"
        )
    rates = pd.read_csv(args.report / "pairwise.csv")
    control = rates[rates["method_a"] == pairwise.CONTROL_A]
    if len(control):
        print("The report's own control (its own answer over another question's answer):")
        for criterion, frame in control.groupby("criterion", sort=False):
            estimate = stats.bootstrap_ci(frame["score_a"])
            print(
                f"  {criterion:<18} {estimate.mean:.3f} [{estimate.low:.3f}, "
                f"{estimate.high:.3f}] (n={estimate.n})"
            )


if __name__ == "__main__":
    main()
