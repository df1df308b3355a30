"""The cross-corpus summary reads a report as its own summary does: the test questions only,
a report of dev questions marked a tuning set."""

from __future__ import annotations

from pathlib import Path

from studies.cross_corpus import load_report
from studies.cross_corpus_page import corpus_section, headline_section
from studies.cross_corpus_reading import reading_section
from studies.tests.test_cross_corpus import N, bench_controls, bench_hops, bench_records
from workbench.report.eval_report import write_report

DEV = {f"q{q}" for q in range(N // 2)}


def _report(folder: Path, dev: set[str]) -> Path:
    records = bench_records()
    records["split"] = records["question_id"].map(lambda q: "dev" if q in dev else "test")
    meta = {"corpus": "data/bench/docs", "n_questions": N, "methods": "naive, ppr, global"}
    return write_report(
        records, folder, ["faithfulness"], meta, controls=bench_controls(), hops=bench_hops()
    )


def test_the_summary_reads_the_test_questions_and_marks_a_tuning_set(tmp_path: Path) -> None:
    mixed = load_report(_report(tmp_path / "mixed", DEV))
    assert set(mixed.analysis.records["question_id"]) == {f"q{q}" for q in range(N // 2, N)}
    assert set(mixed.hops["question_id"]) == set(mixed.analysis.records["question_id"])
    assert mixed.n_questions == N // 2
    assert f"- **Headline: the {N // 2} test questions**" in "\n".join(
        corpus_section(mixed, "naive")
    )
    tuning = load_report(_report(tmp_path / "tuning", {f"q{q}" for q in range(N)}))
    assert tuning.n_questions == N
    lines = headline_section([mixed, tuning], "naive")
    rows = [line for line in lines if line.startswith("| ")][1:]
    assert {row.split(" | ")[0] for row in rows} == {"| mixed", "| tuning (tuning set)"}
    assert "one marked (tuning set) has dev questions only" in "\n".join(lines)
    reading = "\n".join(reading_section([mixed, tuning], "naive"))
    assert f"**mixed** ({N // 2} questions, " in reading
    assert f"**tuning** ({N} questions (tuning set), " in reading
    # With no tuning set among them the page says nothing about one.
    assert "tuning set" not in "\n".join(headline_section([mixed], "naive"))
