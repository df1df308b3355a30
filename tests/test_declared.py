"""Comparisons declared before a run: the primary hypothesis (tested alone, printed first,
left out of the exploratory family), the quality gate (judged on the CI's lower bound), and
the power printed beside every test and by the dry run."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from conftest import DEMO_DOCS, RECORDED_CACHE
from statsmodels.stats.power import TTestPower

from workbench.cli import main
from workbench.eval import stats
from workbench.eval.declared import (
    PRIMARY_FIELD,
    DeclarationError,
    Gate,
    Primary,
    judge_gate,
    parse_gate,
    parse_primary,
)
from workbench.eval.power import power_lines
from workbench.report.retrieval_report import write_report

QUESTIONS = DEMO_DOCS.parent / "questions.jsonl"


def test_a_primary_hypothesis_reads_as_written() -> None:
    assert parse_primary("hipporag > naive on recall@5") == Primary(
        "hipporag", ">", "naive", "recall_at_5"
    )
    assert parse_primary(" ppr<naive on nDCG@5 ").metric == "ndcg_at_5"
    assert parse_primary("multi_query > naive on MRR").text == "multi_query > naive on mrr"
    assert parse_primary("") is None and parse_primary(None) is None
    # a method with a stage by name, as the registry builds it (reranked variants)
    assert parse_primary("naive+rerank > naive on mrr") == Primary(
        "naive+rerank", ">", "naive", "mrr"
    )


@pytest.mark.parametrize(
    "text",
    [
        "hipporag > naive",
        "hipporag >= naive on recall@5",
        "naive > naive on mrr",
        "x",
        "naive+ > naive on mrr",  # a stage needs its name
    ],
)
def test_a_malformed_primary_hypothesis_is_refused_by_name(text: str) -> None:
    with pytest.raises(
        DeclarationError, match=re.escape(f"primary hypothesis {text!r}: write METHOD >")
    ):
        parse_primary(text)


def test_a_gate_reads_as_written() -> None:
    assert parse_gate("hipporag recall@5 >= naive - 0.02") == Gate(
        "hipporag", "recall_at_5", "naive", 0.02
    )
    assert parse_gate("ppr mrr>=naive-.1").margin == 0.1
    assert parse_gate("hybrid+rerank recall@5 >= hybrid - 0.02").method == "hybrid+rerank"


@pytest.mark.parametrize(
    "text",
    [
        "hipporag recall@5 > naive - 0.02",  # not >=
        "hipporag recall@5 >= naive + 0.02",  # a margin is subtracted
        "hipporag >= naive - 0.02",  # no metric
        "hipporag recall@5 >= naive - x",
        "naive recall@5 >= naive - 0.1",
        "",
    ],
)
def test_a_malformed_gate_is_refused_by_name(text: str) -> None:
    with pytest.raises(DeclarationError, match=re.escape(f"gate {text!r}: write METHOD METRIC")):
        parse_gate(text)


def _records(shift: float, n: int = 40) -> pd.DataFrame:
    """naive and ppr on n test questions; ppr scores ``shift`` above naive, with spread."""
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.8, n)
    noise = rng.normal(0, 0.1, n)
    rows = [
        {"question_id": f"q{i}", "split": "test", "type": "multi_hop", "method": m, "score": s}
        for i in range(n)
        for m, s in (("naive", base[i]), ("ppr", base[i] + shift + noise[i]))
    ]
    return pd.DataFrame(rows).assign(
        recall_at_5=lambda f: f["score"], ranking=[[]] * (2 * n), context_tokens=1, llm_calls=0
    )


def test_the_gate_judges_the_lower_bound_of_the_paired_ci() -> None:
    records = _records(shift=-0.01)
    result = stats.paired_test(
        records[records.method == "ppr"].recall_at_5.to_numpy(),
        records[records.method == "naive"].recall_at_5.to_numpy(),
    )
    assert result.ci_low < -0.02 < result.ci_high  # a mean within 0.02, a CI beyond it
    loose, tight = -result.ci_low + 0.005, -result.ci_low - 0.005
    passed, line = judge_gate(parse_gate(f"ppr recall@5 >= naive - {loose:.4f}"), records)
    assert passed and line.startswith("gate passed: ppr recall_at_5 >= naive") and "\n" not in line
    passed, line = judge_gate(parse_gate(f"ppr recall@5 >= naive - {tight:.4f}"), records)
    assert not passed and line.startswith("gate failed:") and "below" in line
    with pytest.raises(DeclarationError, match="no metric 'mrr'"):
        judge_gate(parse_gate("ppr mrr >= naive - 0.1"), records)
    with pytest.raises(DeclarationError, match="no records of hipporag"):
        judge_gate(parse_gate("hipporag recall@5 >= naive - 0.1"), records)


def test_power_agrees_with_statsmodels_paired_t() -> None:
    for n in (10, 50, 400):
        exact = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8) * 0.3
        assert stats.detectable_difference(0.3, n) == pytest.approx(exact, rel=0.01)
    needed = TTestPower().solve_power(effect_size=0.05 / 0.25, alpha=0.05, power=0.8)
    assert stats.questions_needed(0.25, 0.05) == math.ceil(needed)
    assert math.isnan(stats.detectable_difference(0.0, 50))  # no spread, nothing to scale
    assert math.isnan(stats.detectable_difference(0.3, stats.MIN_PAIRS - 1))


def test_the_primary_is_tested_alone_first_and_left_out_of_the_family(tmp_path) -> None:
    records = _records(shift=0.08)
    options = {"seed": 1, "n_resamples": 500}
    declared = {PRIMARY_FIELD: "ppr > naive on recall@5"}
    tests = write_report(tmp_path / "declared", records, pd.DataFrame(), declared, options)
    text = (tmp_path / "declared" / "summary.md").read_text(encoding="utf-8")
    assert text.split("\n")[2] == "## Primary hypothesis"
    assert "**ppr > naive on recall_at_5**" in text and ": **supported**." in text
    assert "recall_at_5" not in set(tests["metric"])  # tested alone, not in the family
    assert "## Against naive\n\nExploratory" in text

    tests = write_report(tmp_path / "none", records, pd.DataFrame(), {}, options)
    text = (tmp_path / "none" / "summary.md").read_text(encoding="utf-8")
    assert text.split("\n")[2].startswith("**Primary hypothesis:** none was declared")
    row = tests.set_index("metric").loc["recall_at_5"]
    assert row["mdd"] == pytest.approx(stats.detectable_difference(0.1, 40), rel=0.3)
    assert "| Detectable | n for ±0.05 |" in text


def test_the_dry_run_power_from_a_stated_sd_and_from_a_pilot(tmp_path) -> None:
    lines = power_lines(50, paired_sd=0.25)
    assert "50 headline questions" in lines[0]
    assert f"detectable {stats.detectable_difference(0.25, 50):.3f}; needs 199" in lines[1]
    write_report(tmp_path / "pilot", _records(0.0), pd.DataFrame(), {}, {"n_resamples": 100})
    lines = power_lines(200, pilot=tmp_path / "pilot")
    assert any(line.split()[:4] == ["recall_at_5", "ppr", "−", "naive"] for line in lines)
    assert "REPORT_DIR" in power_lines(50)[0]


def _cli(tmp_path, *words: str) -> int:
    config = tmp_path / "settings.toml"
    config.write_text(f'[cache]\nmode = "replay"\npath = "{RECORDED_CACHE}"\n')
    return main(["--config", str(config), *words])


def test_a_malformed_gate_on_the_command_line_names_it(tmp_path, capsys, isolated_cwd) -> None:
    with pytest.raises(SystemExit) as stopped:
        _cli(tmp_path, "retrieval", "--gate", "ppr recall@5 > naive")
    assert stopped.value.code == 2
    assert "gate 'ppr recall@5 > naive'" in capsys.readouterr().err


def test_the_gate_sets_the_exit_status(tmp_path, capsys, demo_index, isolated_cwd) -> None:
    run = ["retrieval", "--index", str(demo_index.path), "--questions", str(QUESTIONS)]
    run += ["--methods", "naive,bm25", "--out", str(tmp_path / "r"), "--quiet"]
    assert _cli(tmp_path, *run, "--gate", "bm25 recall@5 >= naive - 1") == 0
    assert capsys.readouterr().out.strip().endswith("at or above −1")
    lower = pd.read_csv(tmp_path / "r" / "tests.csv").query("metric == 'recall_at_5'").ci_low
    if lower.iloc[0] >= 0:  # bm25 no worse on every resample: the reverse gate must fail
        assert _cli(tmp_path, *run, "--gate", "naive recall@5 >= bm25 - 0") == 1
    else:
        assert _cli(tmp_path, *run, "--gate", "bm25 recall@5 >= naive - 0") == 1
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("gate failed:")
    assert _cli(tmp_path, *run, "--primary", "hipporag > naive on mrr") == 1
    assert "hipporag not among the methods run" in capsys.readouterr().err
    assert _cli(tmp_path, *run, "--primary", "bm25 > naive on recal@5") == 1
    assert "no metric 'recal_at_5' in this run" in capsys.readouterr().err
