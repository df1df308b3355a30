"""Global search's map: which report of a batch the points come from, and what one report
per map call changes.

Run: .venv/bin/python -m studies.benchmarks.global_map [--cache data/llm_cache]
     [--compare output/kestrel_bay]

Part 1 (no LLM call, every recorded map call):
Every recorded map call (``map_points``) shows the model a batch of community reports,
shuffled with a fixed seed, so a report's position in the batch says nothing about its
relevance. Each point the model listed is attributed to the report whose words it shares
most (the points rarely cite report numbers), and the points are counted by the position of
that report. A model that read the whole batch would spread its points over the positions
about evenly; the 1.5B model's points pile up on the first report, which is why
``query.global.reports_per_call`` exists. Printed per batch size: calls, points, and each
position's share of the points, then the first position's share against an even 1/size,
over all calls and per question set (``data/*/questions.jsonl``). The shuffle's seed is
fixed, so on the demo's five reports the same report leads every batch; on MuSiQue the
reports chosen differ per question, so there the first report is a different one each time.

Part 2 (``--compare INDEX``, replay; ``--record`` asks the live model for what is missing):
global search on the demo's global questions, one line per arm of ``ARMS`` (Microsoft's map
with ``global_reports_per_call`` 0 or 1 or dynamic community selection; entity facts under
the reports; the extractive map; both, and its variants, with one reduce call; last, the
defaults, whose reduce is drafted under three report orders and merged): keyword hit rate,
LLM calls, prompt and completion tokens and model seconds per answer. An arm with a request
missing from the cache is printed as not recorded on that index.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from graphrag.settings import REPO_ROOT
from studies.recorded import recorded_replies

QUESTIONS = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"

REPORT_START = re.compile(r"\n\n(?=\[\d+\] )")
WORD = re.compile(r"\w+")


def batch_reports(user_message: str) -> list[str]:
    """Return the report texts of one map prompt, in the order the model read them."""
    body = user_message.split("\n\nQuestion: ")[0].removeprefix("Reports:\n")
    return [part for part in REPORT_START.split(body) if part.strip()]


def source_positions(point: str, reports: list[str]) -> list[int]:
    """Return the positions of the reports that share most of the point's words (several on
    a tie: the point is then split evenly between them, so a tie favours no position)."""
    words = {w.lower() for w in WORD.findall(point)}
    shared = [len(words & {w.lower() for w in WORD.findall(r)}) for r in reports]
    return [p for p, n in enumerate(shared) if n == max(shared)]


def position_counts(records: list[dict]) -> dict[int, Counter]:
    """Return {batch size: Counter(position -> points, fractional on ties)} over the
    recorded map calls with at least two reports; replies that do not parse are skipped."""
    counts: dict[int, Counter] = defaultdict(Counter)
    for record in records:
        reports = batch_reports(record["request"]["messages"][-1]["content"])
        if len(reports) < 2:
            continue
        try:
            reply = json.loads(record["response"]["choices"][0]["message"]["content"])
            points = [p["description"] for p in reply["points"]]
        except (KeyError, TypeError, ValueError):
            continue
        for point in points:
            positions = source_positions(point, reports)
            for position in positions:
                counts[len(reports)][position] += 1 / len(positions)
    return dict(counts)


def first_report_line(counts: dict[int, Counter]) -> str:
    """Return the first position's points against what an even spread would give it."""
    first = sum(c[0] for c in counts.values())
    points = sum(sum(c.values()) for c in counts.values())
    even = sum(sum(c.values()) / size for size, c in counts.items())
    if not points:
        return "no map call of 2+ reports"
    return (
        f"first report: {first:.0f} of {points:.0f} points ({first / points:.2f}); "
        f"{first / even:.2f}x what an even spread over the positions gives ({even:.0f})"
    )


def question_sets(root: Path) -> dict[str, str]:
    """Return {question text: the data folder whose questions.jsonl holds it}."""
    sets = {}
    for path in sorted(root.glob("*/questions.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                sets.setdefault(json.loads(line)["question"], path.parent.name)
    return sets


# Part 2's settings of global search. Microsoft's map (points written from the reports
# alone): packed batches, one report per map call, and dynamic community selection (reports
# rated from the root down, only the relevant ones mapped, one per call). Then one report per
# call with the entities' facts under each LLM report, the extractive map (picked report
# sentences, read verbatim by the reduce), and both (the map of the defaults); these read the
# points in score order (Microsoft's) and have one reduce call, as they were recorded. Then
# both with equal scores ordered by similarity to the question (global_point_order, removed);
# with the community's relationships under every report (global_report_relations_tokens,
# removed); with the map picking up to 10 sentences a report and a reduce of 2,500 tokens,
# about naive RAG's context (4 picks fill about 900 tokens); and with the map's replies asked for as
# compact JSON (LLM_SETTINGS: llm.json_mode = "llguidance"). Last, the defaults: the
# extractive map with facts, whose reduce drafts under three report orders and one call
# merges the drafts (query.global.reduce_seeds).
# Arms are [query] overrides; global search's own settings are its [query.global] table. The
# three arms whose settings were removed from the core (#45: dynamic selection,
# global_point_order, global_report_relations_tokens) keep their old names and now stop with
# an unknown-setting SettingsError.
SINGLE_REDUCE = {"reduce_seeds": []}
MICROSOFT_MAP = {"map_style": "points", "report_facts_tokens": 0, **SINGLE_REDUCE}
FACTS = {"report_facts_tokens": 200}
EXTRACTIVE_FACTS = {"reports_per_call": 1, "map_style": "sentences", **FACTS, **SINGLE_REDUCE}
ARMS = {
    "packed batches": {"global": {**MICROSOFT_MAP, "reports_per_call": 0}},
    "one report per call": {"global": {**MICROSOFT_MAP, "reports_per_call": 1}},
    "points + entity facts": {"global": {**MICROSOFT_MAP, "reports_per_call": 1, **FACTS}},
    "extractive sentences": {
        "global": {**MICROSOFT_MAP, "reports_per_call": 1, "map_style": "sentences"}
    },
    "extractive sentences + entity facts": {"global": EXTRACTIVE_FACTS},
    "extractive sentences + entity facts + 10 picks a report + 2500-token reduce": {
        "global": EXTRACTIVE_FACTS
    },
    "extractive sentences + entity facts + reduce drafts (the defaults)": {
        "global": {**EXTRACTIVE_FACTS, "reduce_seeds": [1, 2]}
    },
}

# Arms that change a constant of global search (query/global_search/search.py), not a setting.
CONSTANTS = {
    "extractive sentences + entity facts + 10 picks a report + 2500-token reduce": {
        "MAP_MAX_POINTS": 10,
        "REDUCE_TOKENS": 2500,
    },
}


def compare(
    index: Path, questions: Path = QUESTIONS, cache: str = "replay", arms: list[str] | None = None
) -> list[str]:
    """Return one line per arm of ``ARMS`` (or of ``arms``): global search's means over the
    question set's global questions, every call replayed from the recorded cache
    (``cache="on"`` asks the live model for what is missing and records it)."""
    import contextlib
    from unittest import mock

    import numpy as np

    from graphrag.query.global_search import search
    from workbench import Workbench
    from workbench.eval.metrics import keyword_hit_rate
    from workbench.eval.questions import load_questions

    asked = load_questions(questions)
    asked = asked[asked["type"] == "global"]
    from graphrag.llm.client import CacheMissError

    lines = []
    unknown = sorted(set(arms or ()) - set(ARMS))
    if unknown:
        raise SystemExit(f"--arms: no arm named {', '.join(unknown)}; arms: {', '.join(ARMS)}")
    for label, query in ARMS.items():
        if arms and label not in arms:
            continue
        overrides = {"query": query}
        patched = CONSTANTS.get(label)
        constants = mock.patch.multiple(search, **patched) if patched else contextlib.nullcontext()
        with constants, Workbench(cache=cache, overrides=overrides) as wb:
            wb.load(index)
            try:
                answers = [wb.query(q, method="global") for q in asked["question"]]
            except CacheMissError:  # only in replay: this arm was not recorded on this index
                lines.append(f"{label}: not recorded on this index")
                continue
        hits = [
            keyword_hit_rate(a.text, list(k))
            for a, k in zip(answers, asked["answer_keywords"], strict=True)
        ]

        def mean(values: list[float]) -> float:
            return float(np.mean(values))

        lines.append(
            f"{label}: keyword hit {mean(hits):.3f} (n={len(hits)}); per "
            f"answer {mean([a.usage.calls for a in answers]):.1f} calls, "
            f"{mean([a.usage.prompt_tokens for a in answers]):,.0f} prompt + "
            f"{mean([a.usage.completion_tokens for a in answers]):,.0f} completion tokens, "
            f"{mean([a.usage.model_seconds for a in answers]):,.0f} model s"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cache", type=Path, default=REPO_ROOT / "data" / "llm_cache", help="part 1's cache"
    )
    parser.add_argument("--compare", type=Path, metavar="INDEX", help="e.g. output/kestrel_bay")
    parser.add_argument(
        "--questions",
        type=Path,
        default=QUESTIONS,
        help="with --compare: the question file whose global questions are asked, e.g. "
        "data/kestrel_bay/thematic_questions.jsonl",
    )
    parser.add_argument(
        "--arms", help="with --compare: comma list of the arms to run (default: every arm)"
    )
    parser.add_argument(
        "--record", action="store_true", help="part 2: ask the live model for what is missing"
    )
    args = parser.parse_args(argv)
    if args.compare:
        arms = args.arms.split(",") if args.arms else None
        cache = "on" if args.record else "replay"
        print("\n".join(compare(args.compare, args.questions, cache, arms)))
        return
    records = recorded_replies(args.cache, "map_points")
    counts = position_counts(records)
    calls = Counter(len(batch_reports(r["request"]["messages"][-1]["content"])) for r in records)
    print(f"recorded map calls: {len(records)} ({sum(calls[s] for s in counts)} of 2+ reports)")
    print("reports  calls  points  share of points by report position (1 = first)")
    for size in sorted(counts):
        total = sum(counts[size].values())
        shares = " ".join(f"{counts[size][p] / total:.2f}" for p in range(size))
        print(f"{size:>7}  {calls[size]:>5}  {total:>6.0f}  {shares}")
    print(f"all: {first_report_line(counts)}")
    sets = question_sets(REPO_ROOT / "data")
    by_set: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        question = record["request"]["messages"][-1]["content"].split("\n\nQuestion: ")[-1]
        by_set[sets.get(question.strip(), "other")].append(record)
    for name in sorted(by_set):
        print(f"{name}: {first_report_line(position_counts(by_set[name]))}")


if __name__ == "__main__":
    main()
