"""The pages the summary generator writes besides reports/SUMMARY.md: docs/results.md (the
headline, reading and retrieval sections) and the README's short summary, each generated
between two markers of a hand-written page."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from graphrag.settings import REPO_ROOT
from studies.cross_corpus import answer_metric, load_report, significant
from studies.report_prose import retrieval_section
from studies.results_pages import (
    CHUNK_METHODS,
    README_END,
    README_START,
    RESULTS_END,
    RESULTS_START,
    best_graph_method,
    readme_block,
    results_block,
    splice,
    write_summary,
)
from studies.summarize import build_parser
from studies.tests.test_cross_corpus import JUDGE, N, bench_controls, bench_records
from workbench.report.eval_report import write_report


def _summarize_args(script_name: str = "demo.sh"):
    """Return the arguments a script gives `python -m studies.summarize`, parsed by the
    generator's own parser (so the test checks what the main job writes)."""
    script = (REPO_ROOT / "scripts" / script_name).read_text(encoding="utf-8")
    joined = script.replace("\\\n", " ")
    (line,) = [x for x in joined.splitlines() if "-m studies.summarize" in x]
    words = shlex.split(line, comments=True)
    words = [w for w in words if not w.startswith("${")]  # an optional shell array, unset
    return build_parser().parse_args(words[words.index("studies.summarize") + 1 :])


def _block(path: Path, start: str, end: str) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index(start) : text.index(end) + len(end)]


@pytest.fixture(scope="module")
def committed():
    args = _summarize_args()
    reports = [load_report(REPO_ROOT / folder, args.baseline) for folder in args.reports]
    retrieval = [retrieval_section(REPO_ROOT / folder) for folder in args.retrieval or ()]
    return args, reports, retrieval


def test_the_main_job_writes_the_results_page_and_the_readme_summary(committed) -> None:
    """Real data: the committed docs/results.md block and README summary are what the main
    job's summarize command gives on the committed reports (regenerate with that command)."""
    args, reports, retrieval = committed
    assert (args.results, args.readme) == ("docs/results.md", "README.md")
    results = REPO_ROOT / args.results
    assert _block(results, RESULTS_START, RESULTS_END) == results_block(
        reports, args.baseline, retrieval
    )
    readme = REPO_ROOT / args.readme
    assert _block(readme, README_START, README_END) == readme_block(reports, args.baseline)
    # the README carries the short summary only: the full tables live on the results page
    assert RESULTS_START not in readme.read_text(encoding="utf-8")
    assert "| Corpus | Method | Answer metric |" not in readme.read_text(encoding="utf-8")


def test_the_retrieval_study_rewrites_the_same_pages_from_the_same_reports() -> None:
    """scripts/retrieval_study.sh regenerates the summary after its reports: the same
    reports, pages and baseline as the main job (its --index is optional there)."""
    demo, study = _summarize_args(), _summarize_args("retrieval_study.sh")
    for field in ("reports", "retrieval", "out", "results", "readme", "baseline"):
        assert getattr(study, field) == getattr(demo, field), field


def test_what_the_readme_says_of_the_results_holds(committed) -> None:
    """The README's prose next to its summary: no graph method's answers score measurably
    better than naive RAG's on any set, and global search reads no source passage."""
    _, reports, _ = committed
    for report in reports:
        metric = answer_metric(report)
        passed = significant(report)
        better = passed[
            (passed["metric"] == metric)
            & ~passed["method"].isin(CHUNK_METHODS)
            & (passed["mean_diff"] > 0)
        ]
        assert better.empty, report.name
        records = report.analysis.records
        if "global" in report.analysis.methods:
            assert records.loc[records["method"] == "global", "evidence_recall"].max() == 0.0


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bench: ppr answers every question right, naive 3 of 12, global 3 of 12."""
    meta = {"corpus": "data/bench/docs", "n_questions": N, "methods": "naive, ppr, global"}
    return write_report(
        bench_records(),
        tmp_path_factory.mktemp("reports") / "bench",
        ["faithfulness", "context_recall"],
        meta | JUDGE,
        controls=bench_controls(),
    )


def test_the_summary_row_is_the_best_graph_method_against_naive(bench: Path) -> None:
    """ppr is the best graph method; its row carries both means and the report's own test
    against naive; on a tie the method first in the report's order is named; a chunk method
    never is."""
    report = load_report(bench)
    assert answer_metric(report) == "exact_match"
    assert best_graph_method(report, "exact_match") == "ppr"
    test = report.family.tests.query("metric == 'exact_match' and method == 'ppr'").iloc[0]
    block = readme_block([report])
    (row,) = [line for line in block.splitlines() if line.startswith("| bench")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == [
        "bench",
        "exact_match",
        "0.250 [0.000, 0.500] (n=12)",
        "ppr: 1.000 [1.000, 1.000] (n=12)",
    ]
    assert cells[4].startswith(f"+{test['mean_diff']:.3f} [") and cells[4].endswith("(n=12)")
    assert cells[5] == ("<0.001" if test["p_holm"] < 0.001 else f"{test['p_holm']:.3f}")

    by_method = report.analysis.by_method
    is_global = by_method["method"] == "global"
    by_method.loc[is_global, "exact_match_mean"] = 1.0  # a tie with ppr, named second
    report.analysis.methods = ["naive", "global", "ppr"]
    assert best_graph_method(report, "exact_match") == "global"
    report.analysis.methods = ["naive", "ppr", "global"]
    assert best_graph_method(report, "exact_match") == "ppr"
    report.analysis.methods = ["naive", "hyde", "multi_query"]
    assert best_graph_method(report, "exact_match") is None
    assert "| bench" not in readme_block([report])


def test_write_summary_fills_both_pages_and_keeps_their_prose(bench: Path, tmp_path: Path) -> None:
    results = tmp_path / "results.md"
    readme = tmp_path / "README.md"
    results.write_text(f"# Results\n\nprose\n\n{RESULTS_START}\nold\n{RESULTS_END}\n\nafter\n")
    readme.write_text(f"# Tool\n\n{README_START}\nold\n{README_END}\n\nlinks\n")
    write_summary([bench], tmp_path / "SUMMARY.md", results=results, readme=readme)
    report = load_report(bench)
    assert results.read_text() == f"# Results\n\nprose\n\n{results_block([report])}\n\nafter\n"
    assert readme.read_text() == f"# Tool\n\n{readme_block([report])}\n\nlinks\n"
    assert "## Headline" in results_block([report]) and "## Headline" not in readme_block([report])


def test_splice_replaces_only_the_block_and_names_missing_markers() -> None:
    text = f"intro\n{README_START}\nold\n{README_END}\noutro\n"
    assert splice(text, "NEW", README_START, README_END) == "intro\nNEW\noutro\n"
    with pytest.raises(ValueError, match="no generated block"):
        splice("no markers here", "NEW", RESULTS_START, RESULTS_END)
    with pytest.raises(ValueError, match="summary: end"):
        splice(f"{README_END}\n{README_START}\n", "NEW", README_START, README_END)
