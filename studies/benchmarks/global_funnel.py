"""Where global search loses the answer's keywords: stage by stage, against naive RAG.

Run: .venv/bin/python -m studies.benchmarks.global_funnel [--index output/kestrel_bay]
     [--questions data/kestrel_bay/thematic_questions.jsonl]
     [--report reports/kestrel_bay_thematic] [--first 8] [--type global]

Replays global search's map on a question set whose questions carry answer keywords (every
call from the LLM cache; a missing one is an error naming the prompt) and prints the mean
keyword hit of what each stage holds:

1. every sentence the extractive map was shown (the chosen reports, with their facts);
2. the sentences it picked;
3. the reduce's input (the picks that fit ``REDUCE_TOKENS`` (global search), in the reduce's
   order) and its first ``--first`` items;
4. the recorded final answer (the report's ``records.parquet``),

beside naive RAG's context and answer in the same report. Then the map's position bias:
of the calls shown more than six sentences, the share whose picks are exactly sentences
1..k (a reader of the question would pick them there by chance only).

Why it is kept: global search's answers hit fewer keywords than naive RAG's on thematic
questions although the map finds them; this shows at which step they go, so a change to
global search can be aimed at that step and measured there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pandas as pd

from graphrag.query.global_search.map_context import numbered_sentences, usable_picks
from graphrag.settings import REPO_ROOT
from workbench.eval.metrics import keyword_hit_rate
from workbench.session import Workbench

SHORT_LIST = 6  # a call shown more sentences than this picking 1..k shows position bias


def first_k(picks: list[int]) -> bool:
    """Whether ``picks`` are exactly the sentences 1..k (k > 0), in any order."""
    return bool(picks) and sorted(picks) == list(range(1, len(picks) + 1))


async def question_funnel(method, question: dict, first: int) -> dict:
    """Return the keyword hit of each stage of global search's map on one question, and its
    map calls' position counts."""
    await method.aensure_reports()
    budget = method.options.batch_tokens
    shown_sentences, picked, calls, biased = [], [], 0, 0
    for batch in method.map_batches(method.level_reports(question["question"])):
        text, numbered = numbered_sentences(batch, budget)
        if not numbered:
            continue
        reply = await method.apick_sentences(question["question"], text)
        picks = [p["n"] for p in usable_picks(reply, len(numbered))]
        shown_sentences += [s for _, s in numbered]
        picked += [numbered[n - 1][1] for n in picks]
        if len(numbered) > SHORT_LIST:
            calls += 1
            biased += first_k(picks)
    items = await method.aretrieve(question["question"])
    keywords = list(question["answer_keywords"])

    def hit(texts: list[str]) -> float:
        return keyword_hit_rate(" ".join(texts), keywords)

    return {
        "question_id": question["id"],
        "shown": hit(shown_sentences),
        "picked": hit(picked),
        "reduce_input": hit([i.text for i in items]),
        f"first_{first}": hit([i.text for i in items[:first]]),
        "reduce_items": len(items),
        "long_calls": calls,
        "first_k_calls": biased,
    }


def with_recorded(
    table: pd.DataFrame, records: pd.DataFrame, questions: list[dict]
) -> pd.DataFrame:
    """Add the keyword hit of the recorded global and naive answers, and of naive's context."""
    keywords = {q["id"]: list(q["answer_keywords"]) for q in questions}
    by_key = {(r.question_id, r.method): r for r in records.itertuples(index=False)}

    def recorded(method: str, field: str) -> list[float]:
        values = []
        for qid in table["question_id"]:
            record = by_key.get((qid, method))
            text = "" if record is None else getattr(record, field)
            text = " ".join(text) if field == "contexts" else str(text or "")
            values.append(keyword_hit_rate(text, keywords[qid]))
        return values

    return table.assign(
        global_answer=recorded("global", "answer"),
        naive_context=recorded("naive", "contexts"),
        naive_answer=recorded("naive", "answer"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=str(REPO_ROOT / "output" / "kestrel_bay"))
    parser.add_argument(
        "--questions", default=str(REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl")
    )
    parser.add_argument(
        "--report", type=Path, default=REPO_ROOT / "reports" / "kestrel_bay_thematic"
    )
    parser.add_argument("--first", type=int, default=8, help="the reduce's first items")
    parser.add_argument("--type", help="only the questions of this type (e.g. global)")
    args = parser.parse_args()
    questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines()]
    questions = [
        q
        for q in questions
        if q.get("answer_keywords") and (args.type is None or q.get("type") == args.type)
    ]
    with Workbench(cache="replay") as bench:
        bench.load(args.index)
        method = bench.methods(["global"])["global"]
        rows = [asyncio.run(question_funnel(method, q, args.first)) for q in questions]
    table = with_recorded(
        pd.DataFrame(rows), pd.read_parquet(args.report / "records.parquet"), questions
    )
    stages = [
        "shown",
        "picked",
        "reduce_input",
        f"first_{args.first}",
        "global_answer",
        "naive_context",
        "naive_answer",
    ]
    print(f"Mean keyword hit by stage ({len(table)} questions):")
    for stage in stages:
        print(f"  {stage:<14} {table[stage].mean():.3f}")
    print(f"Reduce items per question: {table['reduce_items'].mean():.1f}")
    calls, biased = table["long_calls"].sum(), table["first_k_calls"].sum()
    share = biased / calls if calls else float("nan")
    print(
        f"Map calls shown more than {SHORT_LIST} sentences that picked exactly 1..k: "
        f"{biased} of {calls} ({share:.3f})"
    )


if __name__ == "__main__":
    main()
