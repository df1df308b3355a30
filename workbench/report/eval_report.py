"""The evaluation report folder (``graphrag eval``): the records, ``summary.md``, ``run.json``,
``tests.csv`` (the test family) and three plots, byte-identical for the same inputs.
``summary_sections`` hands the sections out by name, so ``studies.report_prose`` can add its
generated reading to our committed reports.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphrag.settings import repo_relative
from workbench.eval import judge_validity, stats
from workbench.eval.declared import PRIMARY_FIELD
from workbench.eval.hops import HOPS_CSV
from workbench.eval.runner import EvalRun
from workbench.report import plots as viz
from workbench.report import sections
from workbench.report.analysis import Analysis, analyse, headline_lines
from workbench.report.degraded import degraded_pairs, degraded_section
from workbench.report.headline import (
    all_questions,
    all_questions_section,
    headline,
    primary_lines,
    restrict,
    tuned_of,
)
from workbench.report.hop_tables import hops_section

RECORDS_PARQUET = "records.parquet"
SUMMARY_MD = "summary.md"
RUN_JSON = "run.json"
TESTS_CSV = "tests.csv"  # the test family (analysis.family), read by the summary and notebooks
# Scores computed from embeddings differ between machines in their last bits, which can split
# an exact tie a paired test then counts; rounded before anything is computed, equal scores
# stay equal everywhere. Judge-free metrics are exact fractions and are not rounded.
DECIMALS = 6
EMBEDDING_SCORED = ("answer_relevancy",)


@dataclass
class EvalResult:
    """An evaluation's records and the report folder written from them."""

    out: Path
    records: pd.DataFrame
    summary: str

    def render(self) -> str:
        return f"{self.summary}\n\nreport written to {repo_relative(self.out)}"


def write_evaluation(run: EvalRun, out: str | Path) -> EvalResult:
    """Write the report folder of an evaluation (``runner.run_evaluation``) to ``out``."""
    options = ("n_resamples", "seed", "controls", "judgements", "hops", "run_info")
    options = {name: getattr(run, name) for name in options}
    folder = write_report(run.records, out, run.metrics, run.meta, **options)
    return EvalResult(folder, run.records, (folder / SUMMARY_MD).read_text())


def write_report(
    records: pd.DataFrame,
    out: str | Path,
    metrics: list[str],
    meta: dict[str, Any],
    *,
    alpha: float = 0.05,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    controls: pd.DataFrame | None = None,
    judgements: pd.DataFrame | None = None,
    hops: pd.DataFrame | None = None,
    run_info: dict[str, Any] | None = None,
) -> Path:
    """Write records (parquet, CSV), ``summary.md``, ``run.json``, the plots and, when given,
    the CSVs of ``controls``, ``judgements`` and ``hops`` into ``out``; return ``out``.
    ``metrics`` are the run's RAGAS metrics (the judge-free ones present are added). The
    headline sections and the plots read the ``test`` questions only (``headline``)."""
    options = {"alpha": alpha, "n_resamples": n_resamples, "seed": seed}
    records, controls = machine_independent(records, controls)
    rows, label = headline(records, tuned_of(meta))
    analysis = analyse(
        rows,
        metrics,
        controls=controls,
        judgements=restrict(judgements, rows),
        hops=restrict(hops, rows),
        **options,
        headline=label,
        primary=meta.get(PRIMARY_FIELD),
    )
    full = all_questions(analysis, records)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records.to_parquet(out / RECORDS_PARQUET, index=False)
    _csv_ready(records).to_csv(out / "records.csv", index=False)
    saved = {"judge_controls.csv": controls, "pairwise.csv": judgements, HOPS_CSV: hops}
    for name, frame in saved.items():
        if frame is not None:
            frame.to_csv(out / name, index=False)
    analysis.family.tests.to_csv(out / TESTS_CSV, index=False)
    run = {"meta": meta, "ragas_metrics": list(metrics), **options, **(run_info or {})}
    run["test_family"] = {**analysis.family.to_json(), "tests": TESTS_CSV}
    (out / RUN_JSON).write_text(
        json.dumps(run, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    parts = summary_sections(analysis, full, meta, evidence_per_hop(analysis, hops))
    (out / SUMMARY_MD).write_text(render(parts.values()), encoding="utf-8", newline="\n")
    _write_plots(analysis, out)
    return out


def _write_plots(analysis: Analysis, out: Path) -> None:
    """Write the three PNGs (of the headline rows); a metric the judge is not informative on
    says so in its panel, and a figure with nothing to draw is a one-line note (the file list
    never changes)."""
    by_method, scored = analysis.by_method, analysis.metrics
    notes = {
        metric: "judge not informative"
        for metric, measured in analysis.discrimination.items()
        if measured.verdict == judge_validity.NOT_INFORMATIVE
    }
    options = {"n_resamples": analysis.n_resamples, "notes": notes}
    figures = {
        "metrics_by_method.png": viz.plot_metrics_by_method(by_method, scored, **options),
        "metrics_by_type.png": viz.plot_metrics_by_type(
            analysis.by_type, scored, analysis.types, **options
        ),
        "cost_vs_quality.png": viz.plot_cost_vs_quality(
            analysis.records, by_method, scored, **options
        ),
    }
    for name, figure in figures.items():
        figure.savefig(out / name)


def evidence_per_hop(analysis: Analysis, hops: pd.DataFrame | None) -> list[str]:
    """Return the ``Evidence per hop`` section of the headline rows (none without hop rows),
    its per-question table marking degraded answers."""
    if hops is None:
        return []
    rows = analysis.records
    options = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    lines = hops_section(restrict(hops, rows), degraded=degraded_pairs(rows), **options)
    lines[2:2] = headline_lines(analysis) if lines else []
    return lines


def summary_sections(
    analysis: Analysis, full: Analysis, meta: dict[str, Any], hops: list[str]
) -> dict[str, list[str]]:
    """Return the sections of ``summary.md`` by name, in order: the headline sections from
    ``analysis`` (test questions), the run, its failures and costs and the secondary
    all-questions table from ``full``; ``hops``: ``evidence_per_hop``'s lines (an empty
    section is left out by ``render``)."""
    options = {"seed": analysis.seed, "n_resamples": analysis.n_resamples}
    return {
        "title": ["# Evaluation report"],
        "primary": primary_lines(analysis.records, meta, analysis.alpha, options),
        "run": sections.run_section(full, meta),
        "scores": sections.scores_section(analysis),
        "all_questions": all_questions_section(analysis, full),
        "by_type": sections.by_type_section(analysis),
        "hops": hops,
        "failures": sections.failures_section(full),
        "degraded": degraded_section(full),
        "judge_validity": sections.judge_validity_section(analysis),
        "pairwise": sections.pairwise_section(analysis),
        "cost": sections.cost_section(full),
        "tests": sections.comparisons_section(analysis),
    }


def render(parts: Iterable[list[str]]) -> str:
    """Return the Markdown page of ``parts`` (each a section's lines), blank lines between."""
    return "\n\n".join("\n".join(lines) for lines in parts if lines) + "\n"


def machine_independent(
    records: pd.DataFrame, controls: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Return the records and the judge's controls with the ``EMBEDDING_SCORED`` scores
    rounded to ``DECIMALS``."""
    records = records.copy()
    for column in EMBEDDING_SCORED:
        if column in records.columns:
            records[column] = records[column].astype(float).round(DECIMALS)
    if controls is not None:
        controls = controls.copy()
        rows = controls["metric"].isin(EMBEDDING_SCORED)
        for column in ("real", "control_score"):
            controls.loc[rows, column] = controls.loc[rows, column].astype(float).round(DECIMALS)
    return records, controls


def _csv_ready(records: pd.DataFrame) -> pd.DataFrame:
    """Return a copy with list-valued cells JSON-encoded, so the CSV round-trips them."""

    def encoded(value: Any) -> Any:
        if isinstance(value, np.ndarray | tuple):
            value = value.tolist() if isinstance(value, np.ndarray) else list(value)
        if isinstance(value, list | dict):
            return json.dumps(value, ensure_ascii=False, default=str)
        return value

    frame = records.copy()
    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, list | tuple | np.ndarray | dict)).any():
            frame[column] = frame[column].map(encoded)
    return frame
