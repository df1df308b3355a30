"""The evaluation report folder: the records, a markdown summary and three plots.

Beside every RAGAS table the summary prints the judge's discrimination on planted controls
(``judge_validity``); a method that failed to answer is counted in every table (judge-free
scores of a failed answer are 0, RAGAS scores NaN and counted as unscored); the optional
head-to-head section holds the pairwise win rates (``pairwise``); for multi-hop sets the
per-hop evidence section shows which hop's paragraph each method read (``hops``).

Everything in the summary is computed from the records frame and ``meta`` (``analysis``);
the sections are in ``sections``, the prose of the "Reading" section in ``reading``, generated
from the same numbers so it cannot drift from them, and the plots in ``plots``. The same
records, metrics and meta give byte-identical ``summary.md``. ``run.json`` keeps what the
summary says about the run in a form a program reads back (e.g. the cross-corpus summary in
``studies/``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphrag.eval import stats
from graphrag.eval.hops import HOPS_CSV
from graphrag.eval.runner import EvalRun
from graphrag.report import plots as viz
from graphrag.report import sections
from graphrag.report.analysis import Analysis, analyse
from graphrag.report.hops import hops_section
from graphrag.report.reading import reading_section
from graphrag.settings import repo_relative

RECORDS_PARQUET = "records.parquet"
RECORDS_CSV = "records.csv"
SUMMARY_MD = "summary.md"
METRICS_BY_METHOD_PNG = "metrics_by_method.png"
METRICS_BY_TYPE_PNG = "metrics_by_type.png"
COST_VS_QUALITY_PNG = "cost_vs_quality.png"
JUDGE_CONTROLS_CSV = "judge_controls.csv"
PAIRWISE_CSV = "pairwise.csv"
RUN_JSON = "run.json"
# Scores computed from embeddings (answer relevancy) carry float noise: the same replayed
# answers scored 1.0 on one machine and 1.0000000000000002 on another. Freshly computed
# vectors also differed by up to 2.2e-7 between two machines' CPUs; replays now read
# recorded vectors (embeddings.recorded_path), which leaves the last bits of the dot
# products. Past the 6th decimal a score is noise, and noise can split an exact tie (a
# saturated 1.0 against another), which a paired test then counts as a difference. Rounded
# to this many decimals before anything is computed or written, equal scores stay equal
# everywhere. Only these scores are rounded: the judge-free metrics are fractions computed
# the same way on every machine, and rounding them would change their paired tests' ties.
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
    folder = write_report(
        run.records,
        out,
        run.metrics,
        run.meta,
        n_resamples=run.n_resamples,
        seed=run.seed,
        controls=run.controls,
        judgements=run.judgements,
        hops=run.hops,
        run_info=run.run_info,
    )
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
    """Write records (parquet, CSV), ``summary.md`` and the plots into ``out``; return ``out``.

    ``metrics`` are the RAGAS metrics of the run; the judge-free metrics present in the records
    are reported alongside them. ``controls`` are the judge's scored control pairs,
    ``judgements`` the pairwise verdicts, ``hops`` the per-hop evidence rows
    (``hops.hop_evidence``); each is also saved as a CSV when given. ``run.json`` holds
    ``meta``, the RAGAS metrics, the statistics' settings and ``run_info`` (e.g. the index's
    cost).
    """
    options = {"alpha": alpha, "n_resamples": n_resamples, "seed": seed}
    records, controls = machine_independent(records, controls)
    analysis = analyse(records, metrics, controls=controls, judgements=judgements, **options)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records.to_parquet(out / RECORDS_PARQUET, index=False)
    _csv_ready(records).to_csv(out / RECORDS_CSV, index=False)
    saved = ((controls, JUDGE_CONTROLS_CSV), (judgements, PAIRWISE_CSV), (hops, HOPS_CSV))
    for frame, name in saved:
        if frame is not None:
            frame.to_csv(out / name, index=False)
    run = {"meta": meta, "ragas_metrics": list(metrics), **options, **(run_info or {})}
    (out / RUN_JSON).write_text(
        json.dumps(run, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    hop_lines = hops_section(hops, n_resamples=n_resamples, seed=seed) if hops is not None else []
    (out / SUMMARY_MD).write_text(
        _render(analysis, meta, hop_lines), encoding="utf-8", newline="\n"
    )
    figures = {
        METRICS_BY_METHOD_PNG: viz.plot_metrics_by_method(analysis.by_method, analysis.metrics),
        METRICS_BY_TYPE_PNG: viz.plot_metrics_by_type(
            analysis.by_type, analysis.metrics, analysis.types
        ),
        COST_VS_QUALITY_PNG: viz.plot_cost_vs_quality(
            records, analysis.by_method, analysis.metrics
        ),
    }
    for name, figure in figures.items():
        figure.savefig(out / name)
    return out


def _render(analysis: Analysis, meta: dict[str, Any], hop_lines: list[str]) -> str:
    parts = [
        ["# Evaluation report"],
        sections.run_section(analysis, meta),
        sections.scores_section(analysis),
        sections.by_type_section(analysis),
        hop_lines,
        sections.failures_section(analysis),
        sections.judge_validity_section(analysis),
        sections.pairwise_section(analysis),
        sections.cost_section(analysis),
        sections.comparisons_section(analysis),
        reading_section(analysis),
    ]
    return "\n\n".join("\n".join(lines) for lines in parts if lines) + "\n"


def machine_independent(
    records: pd.DataFrame, controls: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Return the records and the judge's controls with the scores computed from embeddings
    (``EMBEDDING_SCORED``: a record's metric column, a control row's real and control score)
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
    frame = records.copy()
    for column in frame.columns:
        if frame[column].map(lambda v: isinstance(v, list | tuple | np.ndarray | dict)).any():
            frame[column] = frame[column].map(_json_cell)
    return frame


def _json_cell(value: Any) -> Any:
    if isinstance(value, np.ndarray | tuple):
        value = value.tolist() if isinstance(value, np.ndarray) else list(value)
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value
