"""DRIFT's intermediate answers: what the model scored them, and what they hold.

Run: .venv/bin/python -m studies.benchmarks.drift_steps [--index output/kestrel_bay]
     [--questions data/kestrel_bay/questions.jsonl]

Replays DRIFT's steps (primer and follow-ups, every call from the LLM cache; no reduce) on a
question set whose questions carry answer keywords, and prints per depth (0 = the primer,
written from community reports; 1, 2 = follow-ups answered from local search's context):
steps, the scores the model gave them and the mean keyword hit of their answers. Then the
keyword hit of the answer the reduce reads first, under score order alone (ties in the order
asked: Microsoft GraphRAG's and ``DRIFTSearch.ranked_steps``), with follow-ups before the
primer on equal scores, and with the deepest step first on equal scores.

Why it is kept: the 1.5B model gives every step the same score, so the reduce reads the
primer (written from community reports alone) first, although the follow-ups, answered from
local search's context, hit about twice its keywords. Reading the follow-ups first was
tried on the 24 demo questions (its reduce calls were not kept): as many final answers lost
a keyword as gained one, so the order stays Microsoft's. When the intermediate answers
disagree, the 1.5B reduce does not follow the first one it reads.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter

import pandas as pd

from graphrag.settings import REPO_ROOT
from workbench.eval.metrics import keyword_hit_rate
from workbench.eval.questions import load_questions
from workbench.session import Workbench


def step_table(method, questions: pd.DataFrame) -> pd.DataFrame:
    """Return one row per answered step: question, position asked, depth, score, keyword hit."""
    rows = []
    for _, q in questions.iterrows():
        steps, _ = asyncio.run(method.asteps(q["question"]))
        for position, step in enumerate(steps):
            rows.append(
                {
                    "question_id": q["id"],
                    "position": position,
                    "depth": step.depth,
                    "score": step.score,
                    "keyword_hit": keyword_hit_rate(step.answer, list(q["answer_keywords"])),
                    "usable": step.score > 0 and bool(step.answer),
                }
            )
    return pd.DataFrame(rows)


ORDERS = {  # tie-breaks after the score, before the order asked
    "score order (Microsoft's, the method's)": [],
    "equal scores: follow-ups before the primer": ["primer"],
    "equal scores: deepest first": ["shallow"],
}


def first_read(steps: pd.DataFrame, tie_break: list[str]) -> float:
    """Mean keyword hit of the usable step each question's reduce reads first."""
    usable = steps[steps["usable"]].assign(
        neg_score=-steps["score"], primer=steps["depth"] == 0, shallow=-steps["depth"]
    )
    keys = ["question_id", "neg_score", *tie_break, "position"]
    return float(usable.sort_values(keys).groupby("question_id").head(1)["keyword_hit"].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(REPO_ROOT / "output" / "kestrel_bay"))
    parser.add_argument(
        "--questions", default=str(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
    )
    args = parser.parse_args()
    questions = load_questions(args.questions)
    with Workbench(cache="replay") as bench:
        bench.load(args.index)
        steps = step_table(bench.methods(["drift"])["drift"], questions)
    print(f"{len(steps)} steps over {steps['question_id'].nunique()} questions")
    for depth, group in steps.groupby("depth"):
        scores = ", ".join(f"{s}: {n}" for s, n in sorted(Counter(group["score"]).items()))
        print(
            f"  depth {depth}: {len(group)} steps, scores {{{scores}}}, "
            f"keyword hit {group['keyword_hit'].mean():.3f}"
        )
    print("Keyword hit of the step the reduce reads first:")
    for name, tie_break in ORDERS.items():
        print(f"  {first_read(steps, tie_break):.3f}  {name}")


if __name__ == "__main__":
    main()
