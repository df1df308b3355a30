"""studies/benchmarks/index_cost.py's lean figures, computed without a model: the repeat detector
over the demo's recorded extraction replies, and extraction calls with document packing."""

from __future__ import annotations

import re

from conftest import RECORDED_CACHE, REPO_ROOT

from studies.tests.golden import load_benchmark


def index_cost():
    return load_benchmark("index_cost")


def test_the_loop_rule_alone_cuts_tokens_but_no_grounded_entity() -> None:
    lines = index_cost().loop_cut(RECORDED_CACHE).splitlines()
    loops, with_copies = lines[0], lines[1]
    cut = re.search(r"([\d,]+) of ([\d,]+) completion tokens", loops)
    assert int(cut.group(1).replace(",", "")) > 0.25 * int(cut.group(2).replace(",", ""))

    def entities_lost(line: str) -> int:
        return int(re.search(r"grounded records after it: (\d+) entities", line).group(1))

    assert entities_lost(loops) == 0
    assert entities_lost(with_copies) > 0  # why the example-copy stop is opt-in


def test_packing_figures_for_the_demo_and_musique() -> None:
    module = index_cost()
    text = module.packing(
        [REPO_ROOT / "data" / "kestrel_bay" / "docs", REPO_ROOT / "data" / "musique" / "docs"],
        (600,),
    )
    demo, musique = text.splitlines()
    assert "packing off 12 " in demo and "600 tokens 12 " in demo  # ~430-token documents
    assert "packing off 264 " in musique and "600 tokens 58 " in musique
    assert module.LEAN["stop_repeats"] and module.LEAN["pack_documents_tokens"] == 600


def test_wall_seconds_are_shown_for_a_cold_run_only(tmp_path) -> None:
    """The committed live index of the demo (empty cache) prints each stage's wall seconds per
    1,000 corpus tokens, summing to its total; the same manifest with its calls marked as
    cache hits (a replay) prints none, since a look-up says nothing about speed."""
    import json

    module = index_cost()
    record = REPO_ROOT / "studies" / "benchmarks" / "records" / "kestrel_bay_live_lean"
    lines = module.index_cost(record).splitlines()
    assert lines[1].split()[-2:] == ["wall", "s/1k"]
    manifest = json.loads((record / "index.json").read_text())
    stages = manifest["summary"]["stages"]
    scale = 1000 / manifest["summary"]["counts"]["corpus_tokens"]
    total = sum(s["wall_seconds"] for s in stages.values()) * scale
    assert lines[-2].split()[-1] == f"{total:.1f}"
    for stage in stages.values():
        stage["cache_hits"] = stage["calls"]
    (tmp_path / "index.json").write_text(json.dumps(manifest))
    replayed = module.index_cost(tmp_path).splitlines()
    assert "wall" not in replayed[1] and len(replayed[-2].split()) == len(lines[-2].split()) - 1


def test_report_layout_counts_the_recorded_reports_three_ways() -> None:
    """Compact JSON drops only layout and plain lines drop keys and brackets too, so each is
    smaller than the replies as returned, and plain lines keep every finding's text."""
    module = index_cost()
    line = module.report_layout(RECORDED_CACHE)
    returned, compact, plain = (
        int(n.replace(",", ""))
        for n in re.search(
            r"([\d,]+) tokens as returned, ([\d,]+) as compact JSON .* ([\d,]+) as plain lines",
            line,
        ).groups()
    )
    assert plain < compact < returned
    report = {
        "title": "Harrow Shoal",
        "summary": "A seagrass meadow.",
        "rating": 7,
        "rating_explanation": "Contested.",
        "findings": [{"summary": "Found in 2023", "explanation": "By Castellan."}],
    }
    assert module.format_report_lines(report).splitlines() == [
        "# Harrow Shoal",
        "A seagrass meadow.",
        "Rating: 7 - Contested.",
        "- Found in 2023: By Castellan.",
    ]


def test_stop_rules_over_the_committed_cold_runs() -> None:
    """The cold live runs kept with their caches: the first wrote the mirrored-entities loop
    and three reports with copied findings, so today's rules cut it; the sixth ran with both
    rules, as did the seventh, so they cut nothing more; and no run's figure goes up."""
    module = index_cost()
    runs = REPO_ROOT / "studies" / "benchmarks" / "records" / "kestrel_bay_cold"

    def figures(run: str) -> tuple[int, int, int, int]:
        line = module.stop_rules(runs / run, runs / run / "cache")
        found = re.search(
            r"(\d+) record replies end earlier .* (\d+) reports .* ([\d,]+) as run, ([\d,]+) with",
            line,
        )
        return tuple(int(g.replace(",", "")) for g in found.groups())

    first = figures("run1")
    assert first[:2] == (1, 3) and first[3] < first[2]
    sixth = figures("run6")
    assert sixth[:2] == (0, 0) and sixth[3] == sixth[2]
    assert figures("run7")[:2] == (0, 0)
    for run in ("run3", "run4", "run5"):
        ended, reports, before, after = figures(run)
        assert after <= before and (after < before) == (ended + reports > 0)
