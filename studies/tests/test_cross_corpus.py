"""The cross-corpus summary: report folders read back, tested against naive, written as prose."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from graphrag.settings import REPO_ROOT
from studies.cross_corpus import SummaryError, load_report, pooled_pairwise
from studies.cross_corpus_page import corpus_section, render_summary
from studies.cross_corpus_reading import _cost_reading, reading_section
from studies.recorded import recorded_run
from studies.report_reading import smallest_p
from studies.results_pages import write_summary
from studies.summarize import main
from workbench.eval import judge_validity, pairwise, stats
from workbench.eval.hops import HOP_COLUMNS
from workbench.eval.runner import index_cost
from workbench.report import plots as viz
from workbench.report.eval_report import write_report

DEMO = REPO_ROOT / "reports" / "kestrel_bay"
METHODS = ("naive", "ppr", "global")
N = 12
MANIFEST = {
    "settings": {"index": {"method": "llm"}},
    "summary": {
        "counts": {"documents": 4, "corpus_tokens": 2000},
        "stages": {"extract": {"wall_seconds": 1.5}, "embed": {"wall_seconds": 0.5}},
    },
    "usage": {
        "calls": 10,
        "cache_hits": 10,
        "prompt_tokens": 3000,
        "completion_tokens": 1000,
        "model_seconds": 400.0,
    },
}


def bench_records() -> pd.DataFrame:
    """8 two-hop questions where the answer is known: ppr reads every gold paragraph and
    answers right with two LLM calls; naive reads half and is right on 3 of 8; global reads
    none (summaries only) and is right as often as naive, at three calls."""
    rows = []
    for q in range(N):
        for method in METHODS:
            right = {"naive": q < 3, "ppr": True, "global": q >= N - 3}[method]
            rows.append(
                {
                    "question_id": f"q{q}",
                    "question": f"Question {q}?",
                    "type": "multi_hop",
                    "method": method,
                    "answer": "x",
                    "answer_error": None,
                    "contexts": [],
                    "keyword_hit_rate": float(right),
                    "exact_match": float(right),
                    "token_f1": float(right),
                    "evidence_recall": {"naive": 0.5, "ppr": 1.0, "global": 0.0}[method],
                    "recall_at_5": {"naive": 0.5, "ppr": 1.0, "global": math.nan}[method],
                    "llm_calls": {"naive": 1, "ppr": 2, "global": 3}[method],
                    "prompt_tokens": {"naive": 1000, "ppr": 1100, "global": 2500}[method] + q,
                    "completion_tokens": 50 + q,
                    "model_seconds": {"naive": 10.0, "ppr": 12.0, "global": 30.0}[method] + q,
                    "faithfulness": {"naive": 0.5, "ppr": 0.9, "global": 0.4}[method],
                    "faithfulness_calls": 2,
                    "context_recall": 1.0,
                    "context_recall_calls": 1,
                    # saturated: one answer of all has an unsupported sentence
                    "grounded_sentences": 0.5 if (q, method) == (0, "naive") else 1.0,
                }
            )
    return pd.DataFrame(rows)


def bench_hops() -> pd.DataFrame:
    """Naive finds hop 1 only, ppr both hops, global none."""
    rows = [
        {
            "question_id": f"q{q}",
            "method": method,
            "hop": hop,
            "hops": 2,
            "support": f"doc{q}_{hop}",
            "found": float(method == "ppr" or (method == "naive" and hop == 1)),
        }
        for q in range(N)
        for method in METHODS
        for hop in (1, 2)
    ]
    return pd.DataFrame(rows, columns=HOP_COLUMNS)


def bench_controls() -> pd.DataFrame:
    """The judge tells real from planted on faithfulness, not on context recall."""
    rows = []
    for i in range(20):
        for metric, control_score in (("faithfulness", 0.0), ("context_recall", 1.0)):
            rows.append(
                {
                    "metric": metric,
                    "control": "other_contexts",
                    "question_id": f"q{i % N}",
                    "method": "naive",
                    "donor_question_id": f"q{(i + 1) % N}",
                    "real": 1.0,
                    "control_score": control_score,
                    "status": judge_validity.SCORED,
                    "error": None,
                }
            )
    return pd.DataFrame(rows, columns=judge_validity.PAIR_COLUMNS)


JUDGE = {"judge": {"model": "bench-judge", "endpoint": "judge.example:8000", "self_judged": False}}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_report(
        bench_records(),
        tmp_path_factory.mktemp("reports") / "bench",
        ["faithfulness", "context_recall"],
        {"corpus": "data/bench/docs", "n_questions": N, "methods": ", ".join(METHODS)} | JUDGE,
        controls=bench_controls(),
        hops=bench_hops(),
        run_info={"index_cost": index_cost(MANIFEST)},
    )


def test_write_report_keeps_a_machine_readable_run_and_the_hops(bench: Path) -> None:
    run = json.loads((bench / "run.json").read_text())
    assert run["ragas_metrics"] == ["faithfulness", "context_recall"]
    assert run["meta"]["corpus"] == "data/bench/docs" and run["seed"] == stats.DEFAULT_SEED
    assert run["index_cost"]["corpus_tokens"] == 2000
    assert "wall_seconds" not in run["index_cost"]  # volatile: it would change every replay
    assert len(pd.read_csv(bench / "hops.csv")) == N * len(METHODS) * 2
    assert "## Evidence per hop" in (bench / "summary.md").read_text()


def test_each_corpus_names_its_judge(bench: Path) -> None:
    line = "- **Judge:** bench-judge at judge.example:8000, not the answering model"
    assert line in (bench / "summary.md").read_text()
    assert line in corpus_section(load_report(bench), "naive")


def test_only_informative_ragas_metrics_and_applicable_metrics_are_kept(bench: Path) -> None:
    report = load_report(bench)
    assert report.quality == [
        "exact_match",
        "token_f1",
        "evidence_recall",
        "recall_at_5",
        "keyword_hit_rate",
        "grounded_sentences",  # shown, though saturated: listed in the family, not tested
        "faithfulness",
    ]
    assert report.left_out == {"context_recall": judge_validity.NOT_INFORMATIVE}


def test_the_summary_reads_the_report_s_family_and_finds_the_built_in_differences(
    bench: Path,
) -> None:
    report = load_report(bench)
    written = pd.read_csv(bench / "tests.csv")
    pd.testing.assert_frame_equal(report.family.tests, written)  # read, not recomputed
    tests = report.tests.set_index(["metric", "method"])
    # One family: 2 methods x 7 metrics, less recall@5 of global (no ranking) = 13 tests;
    # context recall (judge not informative) and grounded sentences (saturated) are listed.
    assert report.family.n_tests == 13
    assert report.family.untested == {"context_recall": judge_validity.NOT_INFORMATIVE}
    assert list(report.family.saturated) == ["grounded_sentences"]
    assert "grounded_sentences (35 of 36 scores at 1.000)" in report.family.declaration()
    assert "grounded_sentences" not in set(written["metric"])
    # ppr: all 12 questions favour it over naive on evidence recall; Holm over the 13 tests.
    row = tests.loc[("evidence_recall", "ppr")]
    assert row.mean_diff == 0.5 and row.n == N
    assert row.p_value == pytest.approx(smallest_p(N))
    assert row.p_holm == pytest.approx(13 * smallest_p(N)) and row.p_holm < 0.05
    # global answers right as often as naive (3 of 12 each, on different questions).
    assert tests.loc[("exact_match", "global")].mean_diff == 0.0
    # recall@5 does not apply to global: no test, not a "too few pairs".
    assert ("recall_at_5", "global") not in tests.index
    # The whole chain (both hops read) is in the family; the cost is a family of its own.
    assert tests.loc[("all_hops_found", "ppr")].p_holm < 0.05
    assert tests.loc[("llm_calls", "global")].mean_diff == 2.0
    assert tests.loc[("model_seconds", "ppr")].p_holm < 0.05
    for family in (report.family, report.cost_family):
        expected = multipletests(family.tests["p_value"], method="holm")[1]
        assert list(family.tests["p_holm"]) == pytest.approx(list(expected))


def test_summary_prose_claims_only_what_passes(bench: Path) -> None:
    text = render_summary([load_report(bench)])
    headline = text.split("## Headline", 1)[1].split("## Reading", 1)[0]
    assert (
        "| bench | ppr | exact_match | 1.000 [1.000, 1.000] (n=12) ▲ | "
        "1.000 [1.000, 1.000] (n=12) ▲" in headline
    )
    assert "| bench | global | exact_match | 0.250" in headline
    reading = text.split("## Reading", 1)[1].split("\n## ", 1)[0]
    assert "ppr higher than naive on evidence_recall (+0.500 [+0.500, +0.500], n=12" in reading
    assert "global lower than naive on evidence_recall" in reading
    assert "ppr higher than naive on exact_match (+0.750" in reading  # 9 of 12, Holm p 0.027
    assert "global higher than naive on exact_match" not in reading  # right as often
    assert "Not significant: the other " in reading
    assert (
        "Share of hop paragraphs read (hop 1 / hop 2): naive 1.000 / 0.000; ppr 1.000 / 1.000"
        in (reading)
    )
    assert "On the evidence_recall / model-seconds frontier (means, not a test): naive, ppr;" in (
        reading
    )
    assert "RAGAS left out" in reading and "context_recall (not informative" in reading
    # The index cost per 1,000 corpus tokens: 10 calls, 4,000 tokens, 400 s over 2,000 tokens.
    assert "| llm | 4 | 2,000 | 10 (5.0) | 4,000 (2,000.0) | 400.0 (200.0) |" in text
    assert "| context_recall" not in text.split("### Differences from naive", 1)[1]
    # shown in the quality table all the same, with the judge's discrimination beside it
    quality = text.split("### Quality", 1)[1].split("\n### ", 1)[0]
    header = next(line for line in quality.splitlines() if line.startswith("| Method"))
    assert header.endswith("| faithfulness | context_recall |")
    judge_row = next(line for line in quality.splitlines() if "*judge discrimination*" in line)
    assert judge_row.rstrip(" |").endswith("not informative on this judge")


def test_old_reports_without_run_json_are_read_from_their_files(
    bench: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    shutil.copytree(bench, old)
    (old / "run.json").unlink()
    report = load_report(old)
    assert report.meta["corpus"] == "data/bench/docs"
    assert report.analysis.ragas_metrics == ["faithfulness", "context_recall"]
    assert report.left_out == {"context_recall": judge_validity.NOT_INFORMATIVE}
    assert report.index_cost is None
    assert "No index cost stored" in render_summary([report])


def test_missing_records_or_baseline_are_named(bench: Path, tmp_path: Path) -> None:
    with pytest.raises(SummaryError, match="no records.parquet"):
        load_report(tmp_path)
    with pytest.raises(SummaryError, match="baseline method 'hyde'"):
        load_report(bench, baseline="hyde")


def test_the_real_demo_report_summarized_through_the_cli(demo_index, tmp_path: Path) -> None:
    """Real data: the committed demo report. Its cells equal the report's own; the claims are
    exactly the tests that pass Holm, recomputed here from the records."""
    out = tmp_path / "SUMMARY.md"
    assert main([str(DEMO), "--out", str(out)]) == 0
    text = out.read_text()
    own = (DEMO / "summary.md").read_text()
    scores = own.split("## Scores by method", 1)[1]
    header = next(line for line in scores.splitlines() if line.startswith("| Method |"))
    column = header.split(" | ").index("evidence_recall")
    naive = next(line for line in scores.splitlines() if line.startswith("| naive |"))
    evidence_cell = naive.split(" | ")[column]
    records = pd.read_parquet(DEMO / "records.parquet")
    naive_recall = records.loc[records["method"] == "naive", "evidence_recall"].mean()
    assert evidence_cell.startswith(f"{naive_recall:.3f}") and evidence_cell in text
    report = load_report(DEMO)
    table = stats.scores_by_question(records, "evidence_recall")
    family = report.family.tests  # read from the report's tests.csv (its records' tests)
    others = [m for m in report.analysis.methods if m != "naive"]
    p = [stats.paired_test(table[m], table["naive"]).p_value for m in others]
    # a CSV keeps 16 significant digits: the last bit of a p-value may round
    stored = list(family.query("metric == 'evidence_recall'")["p_value"])
    assert stored == pytest.approx(p, rel=1e-12, nan_ok=True)
    keys = zip(family["metric"], family["method"], strict=True)
    adjusted = dict(zip(keys, stats.holm(family["p_value"]), strict=True))
    expected = {m for m in others if adjusted[("evidence_recall", m)] < 0.05}
    tests = family.query("metric == 'evidence_recall'")
    # on the defaults: global (reports, no text units) and cypher (graph rows; most of its
    # answers "not in the graph"); the router, which sends some questions to global, no longer
    # differs since local reads the re-extracted history
    assert set(tests.loc[tests["p_holm"] < 0.05, "method"]) == expected == {"global", "cypher"}
    global_recall = records.loc[records["method"] == "global", "evidence_recall"].mean()
    difference = global_recall - naive_recall
    assert f"global lower than naive on evidence_recall ({difference:+.3f}" in text
    # Nothing claimed for local on evidence recall (Holm p = 0.28).
    assert "local lower than naive on evidence_recall" not in text
    # Context tokens are a cost too, tested against naive and given as a ratio.
    assert "| context_tokens | global |" in text
    tokens = records.groupby("method")["context_tokens"].mean()
    ratio = tokens["hyde"] / tokens["naive"]
    assert f"Context tokens per answer relative to naive: hyde {ratio:.1f}×" in text
    # The index's cost, kept in run.json from the demo index's index.json (recorded calls).
    cost = json.loads((DEMO / "run.json").read_text())["index_cost"]
    stages = demo_index.manifest["summary"]["stages"].values()  # the defaults' demo index
    assert cost["llm_calls"] == sum(stage["calls"] for stage in stages)
    per_1000 = cost["llm_calls"] * 1000 / cost["corpus_tokens"]
    row = f"| llm | {cost['documents']} | {cost['corpus_tokens']:,} | {cost['llm_calls']} "
    assert f"{row}({per_1000:.1f}) |" in text
    # Same reports, same bytes (from the headline on: the command line differs).
    again = write_summary([DEMO], tmp_path / "again.md").read_text()
    assert again.split("## Headline", 1)[1] == text.split("## Headline", 1)[1]


def test_further_indexes_show_their_cost_beside_their_corpus(musique_index, tmp_path) -> None:
    """`summarize --index`: an index of a report's corpus (here MuSiQue's, built again from
    data/musique/docs) adds its cost row to that corpus's table and to no other; a folder that
    is no index, or an index of a corpus no report covers, is refused by name."""
    musique = REPO_ROOT / "reports" / "musique"
    lean = tmp_path / "lean"
    lean.mkdir()
    manifest = {**MANIFEST, "input": str(REPO_ROOT / "data" / "kestrel_bay" / "docs")}
    (lean / "index.json").write_text(json.dumps(manifest), encoding="utf-8")
    out = tmp_path / "SUMMARY.md"
    args = [str(DEMO), str(musique), "--out", str(out)]
    assert main([*args, "--index", str(musique_index.path), str(lean)]) == 0
    demo_part, musique_part = out.read_text().split("\n## musique\n", 1)
    counts = musique_index.manifest["summary"]["counts"]
    nlp_row = f"| nlp | {counts['documents']} | {counts['corpus_tokens']:,} | 0 (0.0) |"
    assert musique_part.count(nlp_row) == 2  # the report's own index and the one passed
    assert nlp_row not in demo_part
    # the made-up manifest: 10 calls over 2,000 tokens, 4,000 tokens spent
    assert "| llm | 4 | 2,000 | 10 (5.0) | 4,000 (2,000.0) | 400.0 (200.0) |" in demo_part

    assert main([*args, "--index", str(tmp_path)]) == 1
    manifest["input"] = "data/elsewhere"
    (lean / "index.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(SummaryError, match="built from 'data/elsewhere', which is no report"):
        write_summary([DEMO], out, index_folders=[lean])


def test_frontier_keeps_the_methods_no_other_is_cheaper_and_better_than() -> None:
    costs = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 2.0, "e": math.nan}
    quality = {"a": 0.2, "b": 0.5, "c": 0.5, "d": 0.4, "e": 0.9}
    # c costs more for the same quality as b; d costs as much as b for less; e has no cost.
    assert stats.frontier(costs, quality) == ["a", "b"]
    assert stats.frontier({"a": 1.0, "b": 1.0}, {"a": 0.3, "b": 0.3}) == ["a", "b"]


def test_frontier_plot_of_the_real_demo_report_joins_the_frontier_methods() -> None:
    records = pd.read_parquet(DEMO / "records.parquet")
    by_method = stats.summarize(records, ["evidence_recall", "recall_at_5"])
    figure = viz.plot_cost_quality_frontier(records, by_method, ["evidence_recall", "recall_at_5"])
    first, second = figure.axes[:2]
    seconds = {
        m: records.loc[records["method"] == m, "model_seconds"].mean()
        for m in records["method"].unique()
    }
    means = by_method.set_index("method")["evidence_recall_mean"].to_dict()
    front = stats.frontier(seconds, means)
    step = next(line for line in first.get_lines() if line.get_linestyle() == "--")
    # the step line runs through the frontier methods, then on to the dearest method's cost
    dearest = max(seconds[m] for m in seconds if m in means)
    assert list(step.get_xdata()) == pytest.approx([seconds[m] for m in front] + [dearest])
    # on the defaults cypher is the cheapest (a short schema prompt; almost no evidence), naive
    # RAG the cheapest with real recall and PPR a hair more evidence recall for more model
    # seconds; local search reads more over the lean graph and its answers were recorded
    # while another recording shared the server (model seconds are the recording's), so it is
    # dominated; global search is never on it
    assert front == ["cypher", "naive", "ppr"] and "global" not in front
    # recall@5 does not apply to global search: named in the title, not drawn.
    assert "not plotted: global" in second.get_title()
    assert "not plotted" not in first.get_title()


def test_index_model_seconds_do_not_depend_on_the_order_calls_finished_in() -> None:
    """The manifest's model seconds are a float sum whose last digits change with the order
    the calls finished in; the report keeps milliseconds, so a replay writes the same bytes."""
    one = index_cost({"usage": {"model_seconds": 0.1 + 0.2 + 0.3}})["model_seconds"]
    other = index_cost({"usage": {"model_seconds": 0.3 + 0.2 + 0.1}})["model_seconds"]
    assert 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1 and one == other == 0.6


def test_a_method_recorded_on_fewer_questions_is_named_with_its_count() -> None:
    """Real data: MuSiQue's hipporag and integrate answers cover the test split only
    (data/musique/recorded_method_limits). The reading names a method answering fewer of the
    headline's questions than the others with its count, instead of implying every method
    answered every question; one recorded on the headline's split is complete there."""
    limits = recorded_run(REPO_ROOT / "data" / "musique").method_limits
    report = load_report(REPO_ROOT / "reports" / "musique")
    (line,) = [x for x in reading_section([report], "naive") if x.startswith("- **musique**")]
    answered = report.analysis.records.groupby("method", sort=False)["question_id"].nunique()
    fewer = answered[answered < report.n_questions]
    named = ", ".join(f"{m} on {n}" for m, n in fewer.items())
    assert (f"; {named} of them)" in line) == bool(len(fewer))
    assert f"({report.n_questions} questions, {len(report.analysis.methods)} methods" in line
    on_test = [m for m, limit in limits.items() if limit == "test"]
    assert on_test and all(answered[m] == report.n_questions for m in on_test)
    # "decomposition on 12" would name a count; "decomposition on recall_at_5" names a metric
    assert not any(re.search(rf"\b{m} on \d", line) for m in on_test)


def test_model_seconds_from_several_or_unnamed_machines_are_flagged() -> None:
    """The reading's model-seconds ratios say when the answers' calls were not all recorded
    on one named machine (records name it since the cache did; older ones cannot)."""
    report = load_report(DEMO)
    records = report.analysis.records
    one = "CPU A, 2 cores"
    records["model_hosts"] = one
    assert not any("Model seconds are as recorded" in p for p in _cost_reading(report, "naive"))

    records.loc[records["method"] == "local", "model_hosts"] = f"{one}; CPU B, 2 cores"
    records.loc[records["method"] == "hyde", "model_hosts"] = ""  # recorded before hosts
    [said] = [p for p in _cost_reading(report, "naive") if "Model seconds are as recorded" in p]
    hyde = int((records["method"] == "hyde").sum())
    assert f"{hyde} of {len(records)} answers' calls on machines the cache does not name" in said
    assert "calls on 2 named machine(s): CPU A, 2 cores; CPU B, 2 cores" in said

    del records["model_hosts"]  # a report written before the column: all unnamed
    [said] = [p for p in _cost_reading(report, "naive") if "Model seconds are as recorded" in p]
    assert (
        f"{len(records)} of {len(records)} answers' calls" in said and "named machine" not in said
    )


def test_pairwise_judgements_of_sets_on_one_index_are_pooled_once_each() -> None:
    """The demo's four question sets were judged pairwise on one index: pooled, global
    and local against naive rest on all 42 distinct questions (the demo's 6 global
    questions are thematic ones too, judged the same, so counted once), every judgement of
    the four reports is in the pool exactly once, and MuSiQue (no pairwise) adds nothing."""
    names = (
        "kestrel_bay",
        "kestrel_bay_thematic",
        "kestrel_bay_heldout",
        "kestrel_bay_second_heldout",
        "musique",
    )
    reports = [load_report(REPO_ROOT / "reports" / name) for name in names]
    judged = reports[:4]
    (pooled,) = pooled_pairwise(reports)
    assert pooled.reports == list(names[:4]) and pooled.index == "output/kestrel_bay"
    rates = pooled.win_rates.set_index(["method_a", "method_b", "criterion"])
    ids = {q for r in judged for q in r.analysis.records["question_id"] if q[0] in "qths"}
    global_ids = {q for q in ids if not q.startswith("q") or int(q[1:]) >= 19}
    assert rates.loc[("global", "naive", "comprehensiveness"), "n"] == len(global_ids) == 42
    assert rates.loc[("local", "naive", "comprehensiveness"), "n"] == 42
    assert rates.loc[("drift", "naive", "comprehensiveness"), "n"] == 6  # the demo's only
    # the README's prose beside its summary: pooled, global search (with its reduce drafts,
    # the default) wins over naive RAG on comprehensiveness with an interval above 0.5
    assert rates.loc[("global", "naive", "comprehensiveness"), "low"] > 0.5

    keys = ["question_id", "method_a", "method_b", "criterion", "rating_a", "rating_b"]
    union = pd.concat([r.judgements for r in judged]).drop_duplicates(subset=keys)
    control = union[union["method_a"].str.startswith("control")]
    one = control[control["criterion"] == "comprehensiveness"]
    assert rates.loc[
        (one["method_a"].iloc[0], one["method_b"].iloc[0], "comprehensiveness"), "n"
    ] == len(one)
    assert len(one) > max(  # more control pairs than any one set had
        (
            r.judgements["method_a"].str.startswith("control")
            & (r.judgements["criterion"] == "comprehensiveness")
        ).sum()
        for r in judged
    )
    expected = pairwise.win_rates(union).set_index(["method_a", "method_b", "criterion"])
    pd.testing.assert_frame_equal(rates, expected)
    assert "## Head-to-head, question sets pooled" in render_summary(reports)
    assert "question sets pooled" not in render_summary(reports[4:])
