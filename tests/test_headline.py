"""A report's headline is computed on its test questions only and says so; a run with no test
question is labelled a tuning set; every question stays in a secondary table."""

from __future__ import annotations

import pandas as pd
import pytest
from test_report import META, RAGAS, section, synthetic_records

from workbench.report.eval_report import write_report
from workbench.report.headline import TUNING_SET, headline

DEV = {f"q{q:02d}" for q in range(0, 16, 2)}  # the even questions, both types


def with_split(records: pd.DataFrame, dev: set[str]) -> pd.DataFrame:
    return records.assign(split=records["question_id"].map(lambda q: "dev" if q in dev else "test"))


def test_headline_keeps_the_test_rows_and_counts_both_splits() -> None:
    records = with_split(synthetic_records(), DEV)
    rows, label = headline(records)
    assert set(rows["split"]) == {"test"}
    assert set(rows["question_id"]) == {f"q{q:02d}" for q in range(1, 16, 2)}
    assert len(rows) == 8 * 3  # every method's row of each test question
    assert label.startswith("**Headline: the ") and "test questions**" in label
    assert "8 dev questions were used to choose defaults" in label


def test_a_run_of_dev_questions_only_is_a_tuning_set() -> None:
    records = with_split(synthetic_records(), {f"q{q:02d}" for q in range(16)})
    rows, label = headline(records)
    assert len(rows) == len(records)
    assert TUNING_SET in label.lower() and "All 16 questions" in label


@pytest.mark.parametrize("split", ["test", None])
def test_test_only_records_and_records_without_a_split_are_all_headline(split) -> None:
    records = synthetic_records()
    if split:
        records = records.assign(split=split)
    rows, label = headline(records)
    assert len(rows) == len(records)
    assert label.startswith("**Headline: the ") and "test questions**" in label


def test_the_report_scores_and_tests_the_test_questions_and_keeps_all_in_a_second_table(
    tmp_path,
) -> None:
    records = with_split(synthetic_records(), DEV)
    summary = (write_report(records, tmp_path / "r", RAGAS, META) / "summary.md").read_text()
    alone = (
        write_report(records[records["split"] == "test"], tmp_path / "t", RAGAS, META)
        / "summary.md"
    ).read_text()
    everything = (
        write_report(records.drop(columns="split"), tmp_path / "a", RAGAS, META) / "summary.md"
    ).read_text()

    def tables(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("|")]

    # The headline sections are the report of the test rows alone, number for number ...
    for title in ("Scores by method", "Scores by question type", "Tests against naive"):
        assert tables(section(summary, title)) == tables(section(alone, title)), title
        assert "**Headline: the 8 test questions**" in section(summary, title)
    # ... the all-questions table is the whole run's, and the run, failures and cost sections
    # count every record.
    secondary = section(summary, "Scores by method, all questions")
    assert "8 dev, 8 test" in secondary
    assert tables(secondary) == tables(section(everything, "Scores by method"))
    for title in ("Failures", "Cost per answer"):
        assert tables(section(summary, title)) == tables(section(everything, title)), title
    assert "48 (question, method) rows; 16 questions" in section(summary, "Run")


def test_a_report_of_dev_questions_labels_every_headline_table_a_tuning_set(tmp_path) -> None:
    records = synthetic_records().assign(split="dev")
    summary = (write_report(records, tmp_path / "r", RAGAS, META) / "summary.md").read_text()
    for title in ("Scores by method", "Scores by question type", "Tests against naive"):
        assert "**Tuning set (dev questions: defaults were chosen on them).**" in section(
            summary, title
        ), title
    assert "## Scores by method, all questions" not in summary  # it would repeat the headline


def test_a_setting_chosen_on_the_test_questions_too_is_named_in_the_headline() -> None:
    records = synthetic_records()
    _, label = headline(records, ["query.chunk_context"])
    assert label.startswith("**Headline: the ") and "test questions**" in label
    assert "Tuning-set caveat: `query.chunk_context` was chosen on these test questions" in label
    assert "caveat" not in headline(records)[1]
    _, dev_label = headline(records.assign(split="dev"), ["query.chunk_context"])
    assert "caveat" not in dev_label  # a tuning set already says so of every setting
