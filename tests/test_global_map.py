"""benchmarks/global_map.py: splitting a map prompt into its reports, attributing a point
to the report it came from (ties split), and the counts over the recorded map calls."""

from __future__ import annotations

import json
import re

from conftest import RECORDED_CACHE, load_benchmark

from graphrag import prompts
from graphrag.llm_cache import ResponseCache


def global_map():
    return load_benchmark("global_map")


REPORTS = [
    "[4] (rank 8) # Storm Corvin\n\nThe storm breached the harbour wall in October.",
    "[0] (rank 7) # Tidewell Aquaculture\n\nTidewell proposed salmon pens at Harrow Shoal.",
    "[3] (rank 6) # Kelp\n\nBluewrack grows kelp at Gull Point.",
]


def record(reports: list[str], points: list[str]) -> dict:
    messages = prompts.global_map("What happened?", "\n\n".join(reports))
    reply = {"points": [{"description": p, "score": 50} for p in points]}
    return {
        "request": {"messages": messages},
        "response": {"choices": [{"message": {"content": json.dumps(reply)}}]},
    }


def test_a_map_prompt_splits_into_its_reports_in_order() -> None:
    module = global_map()
    prompt = prompts.global_map("What happened?", "\n\n".join(REPORTS))[-1]["content"]
    assert module.batch_reports(prompt) == REPORTS


def test_points_go_to_the_report_sharing_most_words_and_ties_are_split() -> None:
    module = global_map()
    assert module.source_positions("Salmon pens were proposed at Harrow Shoal", REPORTS) == [1]
    assert module.source_positions("Kelp grows at Gull Point", REPORTS) == [2]
    assert module.source_positions("Zebras quarrel", REPORTS) == [0, 1, 2]
    counts = module.position_counts(
        [
            record(REPORTS, ["Salmon pens at Harrow Shoal", "Zebras quarrel"]),
            record(REPORTS[:1], ["one report: not counted"]),
            {**record(REPORTS, []), "response": {"choices": [{"message": {"content": "{"}}]}},
        ]
    )
    assert set(counts) == {3}
    assert counts[3][1] == 1 + 1 / 3 and counts[3][0] == counts[3][2] == 1 / 3
    # the first report holds 1/3 of 2 points, where an even spread gives it 2/3
    assert "of 2 points (0.17); 0.50x" in module.first_report_line(counts)
    assert module.first_report_line({}) == "no map call of 2+ reports"


def test_every_recorded_map_prompt_splits_into_as_many_reports_as_it_labels() -> None:
    module = global_map()
    records = ResponseCache(RECORDED_CACHE, mode="replay").records("map_points")
    assert len(records) > 100
    label = re.compile(r"(?m)^\[\d+\] ")
    for rec in records:
        prompt = rec["request"]["messages"][-1]["content"]
        reports = module.batch_reports(prompt)
        assert len(reports) == len(label.findall(prompt.split("\n\nQuestion: ")[0]))
        assert all(label.match(r) for r in reports)
    counts = module.position_counts(records)
    assert sum(sum(c.values()) for c in counts.values()) > 200
