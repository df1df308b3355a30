"""The reading our committed reports carry (``studies.report_prose``): generated from the
report's own tables, it names the best mean, claims only the differences Holm keeps over the
family, says how far the rest are and which metrics cannot separate methods; and it is added
to a report folder byte for byte as scripts/demo.sh commits it."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_report import META, RAGAS, informative_controls, section, synthetic_records

from graphrag.settings import REPO_ROOT
from studies.report_prose import (
    add_prose,
    frontier_figure,
    retrieval_reading,
    retrieval_section,
)
from workbench.eval.stats import summarize
from workbench.report.eval_report import write_report

REPORTS = REPO_ROOT / "reports"


def write(records: pd.DataFrame, out: Path, controls: pd.DataFrame | None = None) -> Path:
    """Write the report folder as ``graphrag eval`` does, then add the prose; return it."""
    return add_prose(write_report(records, out, RAGAS, META, controls=controls)).parent


def reading_line(summary: str, metric: str) -> str:
    reading = summary.split("## Reading", 1)[1]
    return next(line for line in reading.splitlines() if line.startswith(f"- **{metric}**:"))


@pytest.fixture
def records() -> pd.DataFrame:
    return synthetic_records()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic report of tests/test_report.py with its prose: the judge is informative
    on faithfulness and answer relevancy, not measured on context recall."""
    controls = informative_controls("faithfulness", "answer_relevancy")
    return write(synthetic_records(), tmp_path_factory.mktemp("eval") / "report", controls)


@pytest.mark.parametrize("name", ["kestrel_bay", "musique_retrieval"])
def test_the_committed_reports_get_their_prose_byte_for_byte(name: str, tmp_path: Path) -> None:
    """What scripts/demo.sh and scripts/retrieval_study.sh do: the prose added to a committed
    folder gives its committed summary.md again, and adding it twice changes nothing."""
    folder = shutil.copytree(REPORTS / name, tmp_path / name)
    committed = (REPORTS / name / "summary.md").read_text(encoding="utf-8")
    assert add_prose(folder).read_text(encoding="utf-8") == committed
    assert add_prose(folder).read_text(encoding="utf-8") == committed


def test_a_folder_that_is_no_report_is_named(tmp_path: Path) -> None:
    from studies.cross_corpus import SummaryError

    with pytest.raises(SummaryError, match="not a report folder"):
        add_prose(tmp_path)


def test_reading_names_the_constructed_best_method_and_only_supported_differences(
    records: pd.DataFrame, report: Path
) -> None:
    summary = (report / "summary.md").read_text(encoding="utf-8")
    faithfulness = reading_line(summary, "faithfulness")
    assert "highest mean: local" in faithfulness
    assert "Supported against naive: local > naive" in faithfulness
    assert "hyde >" not in faithfulness
    assert "3 of 48 answers have no score" in faithfulness

    keyword = reading_line(summary, "keyword_hit_rate")
    assert "highest mean: local 0.875" in keyword
    assert "local > naive" in keyword and "hyde" not in keyword.split("Supported")[1]

    relevancy = reading_line(summary, "answer_relevancy")
    assert "No difference from naive passes Holm" in relevancy
    assert ">" not in relevancy.split(":", 1)[1]
    assert "Not tested (judge verdict: not measured)." in reading_line(summary, "context_recall")

    # The best method named for each metric is the one with the highest mean in the numbers.
    table = summarize(records, [*RAGAS, "keyword_hit_rate", "evidence_recall"])
    for metric in [*RAGAS, "keyword_hit_rate", "evidence_recall"]:
        best = table.loc[table[f"{metric}_mean"].idxmax(), "method"]
        assert f"highest mean: {best} " in reading_line(summary, metric), metric


def test_reading_counts_the_differences_holm_keeps_over_the_family(report: Path) -> None:
    summary = (report / "summary.md").read_text(encoding="utf-8")
    tests = pd.read_csv(report / "tests.csv")
    called = int((tests["p_holm"] < 0.05).sum())
    before_only = int(((tests["p_value"] < 0.05) & (tests["p_holm"] >= 0.05)).sum())
    assert called == 2  # faithfulness and keyword hits: local over naive (hyde under naive
    # on evidence recall passes before the correction only: Holm over 8 tests, not 2)
    assert before_only == 1
    overview = next(line for line in section(summary, "Reading").splitlines() if "Overall" in line)
    assert f"{called} of {len(tests)} tests against naive pass Holm" in overview
    assert f"{before_only} more pass before the correction only" in overview


def test_reading_says_how_far_an_unsupported_metric_is_from_a_difference(report: Path) -> None:
    """answer_relevancy is noise: the reading names the test nearest to a difference with its
    p before and after Holm, as the family's table has them."""
    relevancy = reading_line(
        (report / "summary.md").read_text(encoding="utf-8"), "answer_relevancy"
    )
    tests = pd.read_csv(report / "tests.csv").query("metric == 'answer_relevancy'")
    nearest = tests.sort_values("p_value", kind="stable").iloc[0]
    assert f"Nearest: {nearest.method} − naive {nearest.mean_diff:+.3f}" in relevancy
    assert f"p = {nearest.p_value:.3f} before and p = {nearest.p_holm:.3f} after Holm" in relevancy
    # With 16 questions the test's floor (2 / 2**16) is no limit, so it is not mentioned.
    assert "smallest p" not in (report / "summary.md").read_text(encoding="utf-8")


def test_reading_says_when_too_few_questions_can_never_pass_holm(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """On 6 questions a Wilcoxon p is at least 2 / 2**6 = 0.031, 0.125 after Holm over the
    family's 4 tests (keyword hits and evidence recall, hyde and local against naive):
    even local's constructed lead on keyword hits cannot be called, and the reading says why."""
    few = records[records["question_id"].isin([f"q{q:02d}" for q in (2, 3, 6, 7, 10, 11)])]
    out = write(few, tmp_path / "report")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    keyword = reading_line(summary, "keyword_hit_rate")
    assert "No difference from naive passes Holm" in keyword
    assert (
        "With 6 pairs and 4 tests no difference can pass the criterion: the smallest p after "
        "Holm is 0.125." in keyword
    )
    assert (
        "- **Power**: on 6 questions the smallest p the paired test can give is 0.031 (all 6 "
        "differences on one side), 0.125 after Holm over the family's 4 tests" in summary
    )


def test_a_method_asked_fewer_questions_is_not_named_best_by_its_mean(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """A method recorded on the first questions only (eval --method-limits) has a mean over
    other questions than the rest: the reading names the best among those asked all of them."""
    first = list(pd.unique(records["question_id"]))[:5]
    partial = records[(records["method"] != "naive") | records["question_id"].isin(first)].copy()
    partial.loc[partial["method"] == "naive", "keyword_hit_rate"] = 1.0  # best, on 5 only
    out = write(partial, tmp_path / "report")
    keyword = reading_line((out / "summary.md").read_text(encoding="utf-8"), "keyword_hit_rate")
    assert "highest mean: naive" not in keyword
    assert "highest mean" in keyword


def test_a_method_with_few_judgements_recorded_is_not_named_best_by_their_mean(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """A replay that holds only a few of a method's judgements (cache hits on prompts another
    method shared) gives a mean over those few: the reading ranks the methods judged on the
    whole sample and names the partly recorded one apart, with its counts."""
    naive = records["method"] == "naive"
    records.loc[naive, "faithfulness"] = 1.0  # the best mean, on two judgements only
    unrecorded = naive & ~records["question_id"].isin(["q10", "q11"])
    records.loc[unrecorded, "faithfulness"] = math.nan
    records.loc[unrecorded, "faithfulness_error"] = "not recorded"
    out = write(records, tmp_path / "report")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    faithfulness = reading_line(summary, "faithfulness")
    assert "highest mean: naive" not in faithfulness
    assert "highest mean" in faithfulness
    assert "Partly recorded, not ranked: naive (n=2; 14 not recorded)." in faithfulness
    keyword = reading_line(summary, "keyword_hit_rate")
    assert "Partly recorded" not in keyword  # a judge-free metric has nothing to record

    # When no method has every judgement, all are ranked and none is set apart.
    records.loc[records["question_id"] == "q00", "faithfulness"] = math.nan
    records.loc[records["question_id"] == "q00", "faithfulness_error"] = "not recorded"
    out = write(records, tmp_path / "again")
    faithfulness = reading_line((out / "summary.md").read_text(encoding="utf-8"), "faithfulness")
    assert "highest mean: naive 1.000" in faithfulness
    assert "Partly recorded" not in faithfulness


def test_a_saturated_judge_with_informative_controls_is_said_saturated_once(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    """A metric whose judge separates the controls but scores 1.000 almost everywhere is left
    out of the tests as saturated; its reading line says so once, not again as a judge note."""
    records["context_recall"] = 1.0
    controls = informative_controls("context_recall")
    out = write(records, tmp_path / "report", controls)
    recall = reading_line((out / "summary.md").read_text(encoding="utf-8"), "context_recall")
    assert "Saturated (48 of 48 scores at 1.000): listed, not tested." in recall
    assert recall.count("scores at 1.000") == 1
    assert "The judge separated real answers from planted controls" in recall


def test_the_reading_says_what_the_tables_cannot_support(records: pd.DataFrame, tmp_path) -> None:
    """A method without faithfulness scores, a metric without any, a single method, a judge
    that is not informative or saturated, a saturated judge-free metric and unrecorded
    judgements: each is said in the reading, never a best mean over nothing."""
    local = records["method"] == "local"
    unscored = records.copy()
    unscored.loc[local, "faithfulness"] = math.nan
    unscored.loc[local, "faithfulness_error"] = "TimeoutError: judge timed out"
    faithfulness = reading_line(
        (write(unscored, tmp_path / "a") / "summary.md").read_text(), "faithfulness"
    )
    assert "No scores for local." in faithfulness and "highest mean: local" not in faithfulness
    assert "Not tested (judge verdict: not measured)." in faithfulness

    none = records.assign(faithfulness=math.nan)
    summary = (write(none, tmp_path / "b") / "summary.md").read_text()
    assert "no method has any score" in reading_line(summary, "faithfulness")

    alone = write_report(records[local], tmp_path / "c", RAGAS, META)
    summary = add_prose(alone).read_text()
    assert "nothing to compare" in reading_line(summary, "faithfulness")

    judged_one = records.assign(context_recall=1.0)
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
    summary = (write(judged_one, tmp_path / "d", controls) / "summary.md").read_text()
    assert "not evidence either way" in reading_line(summary, "faithfulness")
    recall = reading_line(summary, "context_recall")
    assert "48 of 48 scores at 1.000: the judge is saturated" in recall
    assert "unvalidated" in recall
    assert "- **Judge not informative** on planted controls: faithfulness." in summary

    keyword = records.assign(keyword_hit_rate=1.0)
    summary = (write(keyword, tmp_path / "e") / "summary.md").read_text()
    line = reading_line(summary, "keyword_hit_rate")
    assert "Saturated (48 of 48 scores at 1.000): listed, not tested." in line
    assert "saturated" not in reading_line(summary, "faithfulness")

    unrecorded = records.assign(context_recall=math.nan, context_recall_error="not recorded")
    summary = (write(unrecorded, tmp_path / "f") / "summary.md").read_text()
    recall = reading_line(summary, "context_recall")
    assert recall.startswith("- **context_recall**: not recorded (0 of 48 judged)")


def test_degraded_answers_get_a_reading_line_and_a_table_of_complete_answers(
    records: pd.DataFrame, tmp_path: Path
) -> None:
    records["failures"] = [[] for _ in range(len(records))]
    lost = records.index[(records["method"] == "hyde")][:2]
    for row in lost:
        records.at[row, "failures"] = ["map batch of reports [3]: LLMError: scripted"]
    summary = (write(records, tmp_path / "r") / "summary.md").read_text()
    assert "- **Degraded answers**: 2 of 48 (hyde 2); the means include them" in summary
    complete = section(summary, "Scores by method, complete answers only")
    hyde = next(line for line in complete.splitlines() if line.startswith("| hyde |"))
    assert hyde.split("|")[2].strip() == "14"
    # the package's own report lists them, and has neither of the prose's additions
    alone = write_report(records, tmp_path / "alone", RAGAS, META) / "summary.md"
    text = alone.read_text()
    assert "- hyde: failed 0, degraded 2 of 16 answers" in section(text, "Degraded answers")
    assert "## Reading" not in text and "complete answers only" not in text

    clean = write(synthetic_records(), tmp_path / "clean")
    assert "No answer was degraded" in (clean / "summary.md").read_text()


def test_the_reading_of_a_split_run_is_the_test_questions_reading(tmp_path: Path) -> None:
    dev = {f"q{q:02d}" for q in range(0, 16, 2)}
    records = synthetic_records()
    records["split"] = records["question_id"].map(lambda q: "dev" if q in dev else "test")
    summary = (write(records, tmp_path / "r") / "summary.md").read_text()
    alone = (write(records[records["split"] == "test"], tmp_path / "t") / "summary.md").read_text()
    reading = summary.split("## Reading", 1)[1]
    assert reading.splitlines()[2].startswith("**Headline: the 8 test questions**")
    assert reading == alone.split("## Reading", 1)[1].replace(
        " (no dev question in this run).",
        "; 8 dev questions were used to choose defaults and "
        "are shown separately (Scores by method, all questions).",
    )
    tuning = (write(records.assign(split="dev"), tmp_path / "d") / "summary.md").read_text()
    assert "**Tuning set (dev questions: defaults were chosen on them).**" in section(
        tuning, "Reading"
    )


def _tests(*rows: tuple) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "metric": metric,
                "method": method,
                "n": 100,
                "mean_diff": diff,
                "ci_low": diff - 0.02,
                "ci_high": diff + 0.02,
                "p_value": p,
                "p_holm": p_holm,
            }
            for metric, method, diff, p, p_holm in rows
        ]
    )


def test_the_retrieval_reading_claims_only_what_passes_holm() -> None:
    some = _tests(
        ("recall_at_5", "ppr", 0.05, 0.004, 0.012),
        ("recall_at_5", "local", 0.03, 0.04, 0.08),
    )
    none = _tests(
        ("recall_at_5", "local", 0.03, 0.04, 0.08), ("recall_at_2", "ppr", 0.01, 0.3, 0.6)
    )
    assert retrieval_reading(some, 0.05) == [
        "ppr > naive on recall_at_5 (ppr minus naive: +0.050 [+0.030, +0.070], "
        "p 0.004 before and 0.012 after Holm, n=100).",
        "Not significant: the other 1; the nearest is local on recall_at_5, "
        "+0.030 [+0.010, +0.050], p 0.040 before and 0.080 after Holm.",
    ]
    (sentence,) = retrieval_reading(none, 0.05)
    assert sentence.startswith(
        "No difference from naive passes Holm's correction at 0.05 (2 tested)"
    )
    assert "local on recall_at_5" in sentence and "p 0.040 before and 0.080 after" in sentence


def test_the_cross_corpus_section_of_a_retrieval_report_is_its_table_and_reading() -> None:
    folder = REPORTS / "musique_retrieval"
    section_lines = retrieval_section(folder)
    assert section_lines[0] == "## Retrieval only: musique_retrieval"
    assert sum(line.startswith("| naive | ") for line in section_lines) == 1
    tests = pd.read_csv(folder / "tests.csv")
    assert [line for line in section_lines if line.startswith("- ")] == [
        f"- {sentence}" for sentence in retrieval_reading(tests, 0.05)
    ]


def test_a_retrieval_section_tests_its_declared_primary_first_and_says_when_there_is_none() -> None:
    """Real data: GraphRAG-Bench's report declared hybrid > naive on recall@5 before its test
    split was read; the section prints that test before the table, and the exploratory
    reading leaves it out. MuSiQue's declared none, and its section says so."""
    bench = retrieval_section(REPORTS / "graphrag_bench_retrieval")
    table_at = next(i for i, line in enumerate(bench) if line.startswith("| Method |"))
    primary_at = next(i for i, line in enumerate(bench) if line.startswith("- hybrid − naive"))
    assert bench[4].startswith("**Primary hypothesis.** Declared before the run: **hybrid > naive")
    assert primary_at < table_at
    reading = [line for line in bench[table_at:] if line.startswith("- hybrid > naive on ")]
    assert reading and not any("recall_at_5" in line for line in reading)
    musique = retrieval_section(REPORTS / "musique_retrieval")
    assert musique[4].startswith("**Primary hypothesis:** none was declared")


def test_a_retrieval_section_with_reranked_methods_says_what_the_stage_changed() -> None:
    pilot = retrieval_section(REPORTS / "graphrag_bench_rerank" / "dev_pilot")
    at = pilot.index("### What the rerank stage changed")
    rows = [line.split(" | ")[0] for line in pilot[at:] if line.startswith("| ")][1:]
    assert rows == ["| naive+rerank", "| hybrid+rerank"]
    plain = retrieval_section(REPORTS / "musique_retrieval")
    assert not any("rerank" in line for line in plain)


def test_the_full_size_frontier_plots_every_method_at_its_retrieval_prompt_cost() -> None:
    """Real data: the committed MuSiQue-full retrieval report (notebook 4's full-size
    frontier). Every method is a dot at the prompt tokens its retrieval sends the model on the
    test questions; the methods calling no model sit at 0, and the frontier starts at the best
    of those."""
    folder = REPORTS / "musique_retrieval"
    records = pd.read_parquet(folder / "retrieval.parquet")
    test = records[records["split"] == "test"]
    figure = frontier_figure(folder)
    recall = figure.axes[0]
    assert recall.get_title() == "recall_at_5 vs cost"
    assert recall.get_xlabel().startswith("Mean prompt tokens per question")
    tokens = test.groupby("method")["prompt_tokens"].mean()
    means = test.groupby("method")["recall_at_5"].mean()
    free = tokens[tokens == 0].index
    assert {"naive", "integrate", "hybrid"} <= set(free) and "hipporag" not in free
    step = next(line for line in recall.get_lines() if line.get_linestyle() == "--")
    # the frontier starts at cost 0 with the best method that calls no model
    assert step.get_xdata()[0] == 0 and step.get_ydata()[0] == pytest.approx(means[free].max())
    labels = {text.get_text() for text in recall.texts}
    assert set(test["method"]) <= labels  # all ten methods, none left out
