"""The cross-corpus summary: each report folder's methods, quality against cost, tested vs naive.

``python -m studies.summarize reports/kestrel_bay reports/musique --out reports/SUMMARY.md``
reads what ``write_report`` left in each folder (``records.parquet``; ``run.json`` with the
run's metadata, RAGAS metrics and the index's cost; the judge controls, pairwise verdicts and
per-hop rows when present) and writes one Markdown page (``cross_corpus_page``). Per corpus
and method: the judge-free quality metrics that apply, RAGAS metrics only where the judge
separated real answers from planted controls, pairwise win rates, evidence per hop, cost per
answer, each mean with its 95% CI and n, and the index's cost per 1,000 corpus tokens.

Every quality difference from the baseline (naive RAG) is read from the report's own test
family (``tests.csv``, declared in ``run.json``; ``workbench.eval.significance``), so the report,
this page, the README and the notebooks give one comparison one p. Cost is not quality: its
differences form a second family, declared on the page, of every method against the baseline
on every cost column, Holm over all of them. The prose is generated from these numbers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag.settings import REPO_ROOT
from workbench.eval import judge_validity, pairwise, stats
from workbench.eval.declared import PRIMARY_FIELD
from workbench.eval.hops import HOPS_CSV
from workbench.eval.judge import JUDGE_CALLS
from workbench.eval.runner import index_cost
from workbench.eval.significance import FAMILY_COLUMNS, Family, Saturation, declare_family
from workbench.report.analysis import Analysis, analyse, report_family
from workbench.report.eval_report import RUN_JSON, TESTS_CSV
from workbench.report.headline import headline, restrict, tuned_of
from workbench.report.sections import RUN_FIELDS

BASELINE = "naive"
QUALITY_METRICS = (
    "exact_match",
    "token_f1",
    "evidence_recall",
    "recall_at_5",
    "keyword_hit_rate",
    "gold_entity_reach",
    "grounded_sentences",
)
COST_METRICS = (
    ("llm_calls", "LLM calls"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("model_seconds", "model seconds"),
    ("context_tokens", "context tokens"),  # what the prompt held: a confound of evidence recall
)
PER_THOUSAND = 1000.0


class SummaryError(ValueError):
    """A report folder cannot be summarized; the message names the folder and the file."""


@dataclass
class CorpusReport:
    """One report folder, read back and analysed for the summary."""

    name: str
    folder: Path
    meta: dict[str, Any]
    analysis: Analysis
    quality: list[str]
    left_out: dict[str, str]
    hops: pd.DataFrame | None
    index_cost: dict[str, Any] | None
    tests: pd.DataFrame  # the quality family's tests, then the cost family's
    family: Family  # the report's declared family (quality)
    cost_family: Family
    # further indexes of the same corpus (another index.method), from `summarize --index`
    other_index_costs: list[dict[str, Any]] = field(default_factory=list)
    judgements: pd.DataFrame | None = None  # pairwise.csv: one row per question, pair, criterion

    @property
    def n_questions(self) -> int:
        return int(self.analysis.records["question_id"].nunique())


def family_from_json(declared: dict[str, Any], tests: pd.DataFrame) -> Family:
    """Return the family a report wrote: ``run.json``'s declaration and its ``tests.csv``."""
    return Family(
        baseline=declared["baseline"],
        methods=list(declared["methods"]),
        metrics=list(declared["metrics"]),
        tests=tests.reindex(columns=FAMILY_COLUMNS),  # older reports: no power columns
        saturated={m: Saturation(**s) for m, s in declared["saturated"].items()},
        untested=dict(declared["untested"]),
    )


def _meta_from_summary(path: Path) -> dict[str, Any]:
    """Return the ``## Run`` bullets of a ``summary.md`` written before ``run.json`` existed."""
    if not path.is_file():
        return {}
    keys = {label: key for key, label in RUN_FIELDS}
    meta: dict[str, Any] = {}
    in_run = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_run = line == "## Run"
        match = re.match(r"^- \*\*(.+?):\*\* (.*)$", line) if in_run else None
        if match:
            meta[keys.get(match.group(1), match.group(1))] = match.group(2).strip("`")
    return meta


def _ragas_metrics(records: pd.DataFrame) -> list[str]:
    """Return the RAGAS metrics a records frame was judged on (those with judge-call counts)."""
    return [m for m in JUDGE_CALLS if m in records and f"{m}_calls" in records]


def _optional_csv(path: Path) -> pd.DataFrame | None:
    return pd.read_csv(path) if path.is_file() else None


def _same_path(a: str, b: str) -> bool:
    return (REPO_ROOT / a).resolve() == (REPO_ROOT / b).resolve()


def attach_index_costs(
    reports: Sequence[CorpusReport], index_folders: Sequence[str | Path]
) -> None:
    """Add each index folder's cost (its ``index.json``) to the report of the corpus it was
    built from, so a corpus indexed in both modes shows both costs side by side."""
    for folder in map(Path, index_folders):
        manifest_path = folder / "index.json"
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise SummaryError(
                f"--index {folder}: no readable index.json, not an index folder written by "
                f"`graphrag index` ({err})"
            ) from err
        built_from = str(manifest.get("input", ""))
        matches = [r for r in reports if _same_path(str(r.meta.get("corpus", "")), built_from)]
        if not matches:
            corpora = ", ".join(str(r.meta.get("corpus")) for r in reports)
            raise SummaryError(
                f"--index {folder}: built from {built_from!r}, which is no report's corpus "
                f"({corpora})"
            )
        for report in matches:
            report.other_index_costs.append(index_cost(manifest))


def _stored_index_cost(run: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any] | None:
    """Return the index cost kept in ``run.json``, else read from the index folder if present."""
    if run.get("index_cost"):
        return run["index_cost"]
    manifest = REPO_ROOT / str(meta.get("index", "")) / "index.json"
    if meta.get("index") and manifest.is_file():
        return index_cost(json.loads(manifest.read_text(encoding="utf-8")))
    return None


def load_report(folder: str | Path, baseline: str = BASELINE) -> CorpusReport:
    """Return one report folder read back: its analysis, the metrics worth showing, the tests."""
    folder = Path(folder)
    records_path = folder / "records.parquet"
    if not records_path.is_file():
        raise SummaryError(
            f"{folder} has no records.parquet: is it a report folder written by "
            "`python -m graphrag eval --out …`?"
        )
    # the headline's rows, as the report's own tables: its test questions (else a tuning set)
    run_path = folder / RUN_JSON
    run = json.loads(run_path.read_text(encoding="utf-8")) if run_path.is_file() else {}
    meta = run.get("meta") or _meta_from_summary(folder / "summary.md")
    records, label = headline(pd.read_parquet(records_path), tuned_of(meta))
    ragas = run.get("ragas_metrics", _ragas_metrics(records))
    options = {
        "alpha": float(run.get("alpha", 0.05)),
        "n_resamples": int(run.get("n_resamples", stats.DEFAULT_RESAMPLES)),
        "seed": int(run.get("seed", stats.DEFAULT_SEED)),
    }
    judgements = restrict(_optional_csv(folder / "pairwise.csv"), records)
    hops = restrict(_optional_csv(folder / HOPS_CSV), records)
    hops = hops if hops is not None and not hops.empty else None
    analysis = analyse(
        records,
        ragas,
        controls=_optional_csv(folder / "judge_controls.csv"),
        judgements=judgements,
        hops=hops,
        headline=label,
        primary=meta.get(PRIMARY_FIELD),
        **options,
    )
    if baseline not in analysis.methods:
        raise SummaryError(
            f"{records_path} has no records of the baseline method {baseline!r} "
            f"(methods: {', '.join(analysis.methods)}); pass --baseline"
        )
    left_out = {
        m: d.verdict
        for m, d in analysis.discrimination.items()
        if d.verdict != judge_validity.INFORMATIVE
    }
    informative = [m for m in analysis.ragas_metrics if m not in left_out]
    quality = [m for m in QUALITY_METRICS if m in analysis.metrics] + informative
    family = _family(folder, run, analysis, baseline, hops)
    report = CorpusReport(
        name=folder.name,
        folder=folder,
        meta=meta,
        analysis=analysis,
        quality=quality,
        left_out=left_out,
        hops=hops,
        index_cost=_stored_index_cost(run, meta),
        tests=family.tests,
        family=family,
        cost_family=family,
        judgements=judgements,
    )
    report.cost_family = cost_family(report, baseline)
    report.tests = pd.concat([family.tests, report.cost_family.tests], ignore_index=True)
    return report


def _family(
    folder: Path, run: dict[str, Any], analysis: Analysis, baseline: str, hops: pd.DataFrame | None
) -> Family:
    """Return the report's test family as it wrote it (``tests.csv``); a report written before
    it had one gets the same family computed from its records, and another ``baseline`` than
    the report's its own family (the same metrics, tested against that baseline)."""
    declared = run.get("test_family")
    if declared and declared["baseline"] == baseline and (folder / TESTS_CSV).is_file():
        return family_from_json(declared, pd.read_csv(folder / TESTS_CSV))
    if analysis.family.baseline == baseline:
        return analysis.family
    options = {"n_resamples": analysis.n_resamples, "seed": analysis.seed}
    return report_family(
        analysis.records, analysis.metrics, analysis.discrimination, baseline, hops, **options
    )


@dataclass
class PooledPairwise:
    """The pairwise judgements of several question sets over one index, pooled."""

    index: str
    reports: list[str]
    n_questions: int
    win_rates: pd.DataFrame


def pooled_pairwise(reports: Sequence[CorpusReport]) -> list[PooledPairwise]:
    """Return, per index that two or more reports judged pairwise, the win rates over all
    their questions at once: one set's win rates rest on 6 to 18 questions, too few for a
    CI to exclude 0.5 unless nearly every question is won. A question in two sets (the
    demo's global questions are also thematic ones, answered by the same method on the same
    settings, so rated the same) is counted once, from the first report that judged it."""
    by_index: dict[str, list[CorpusReport]] = {}
    for report in reports:
        if report.judgements is not None and not report.judgements.empty:
            by_index.setdefault(str(report.meta.get("index", "")), []).append(report)
    pooled = []
    for index, group in by_index.items():
        if len(group) < 2 or not index:
            continue
        # one judgement: the same question, pair and criterion rated the same (the ratings
        # are the recorded replies to the same answers); a control row names no method, so
        # the ratings tell its answers apart
        keys = ["question_id", "method_a", "method_b", "criterion", "rating_a", "rating_b"]
        kept: list[pd.DataFrame] = []
        seen: set[tuple] = set()
        for report in group:
            frame = report.judgements
            key = pd.Series(list(zip(*(frame[k] for k in keys), strict=True)), index=frame.index)
            kept.append(frame[~key.isin(seen)])
            seen |= set(key)
        judgements = pd.concat(kept, ignore_index=True)
        first = group[0].analysis
        rates = pairwise.win_rates(judgements, n_resamples=first.n_resamples, seed=first.seed)
        pooled.append(
            PooledPairwise(
                index=index,
                reports=[r.name for r in group],
                n_questions=int(judgements["question_id"].nunique()),
                win_rates=rates,
            )
        )
    return pooled


def cost_family(report: CorpusReport, baseline: str = BASELINE) -> Family:
    """Return the cost family: each method against ``baseline`` on every cost column, Holm
    over all of them (``p_value`` NaN when fewer than 5 pairs)."""
    analysis = report.analysis
    records = analysis.records
    tables = {
        column: stats.scores_by_question(records, column)
        for column, _ in COST_METRICS
        if column in records
    }
    return declare_family(tables, baseline, seed=analysis.seed, n_resamples=analysis.n_resamples)


def significant(report: CorpusReport) -> pd.DataFrame:
    """Return the rows of ``report.tests`` whose Holm-corrected p is below the run's alpha."""
    tests = report.tests
    return tests[tests["p_holm"] < report.analysis.alpha]


def method_means(report: CorpusReport, column: str) -> dict[str, float]:
    """Return each method's mean of a records column (NaN where it has none)."""
    records = report.analysis.records
    return {
        m: stats.column_mean(records[records["method"] == m], column)
        for m in report.analysis.methods
    }


def answer_metric(report: CorpusReport) -> str:
    """Return the metric that scores the answer itself: exact match on short-answer sets, else
    the keyword hit rate."""
    return "exact_match" if "exact_match" in report.quality else "keyword_hit_rate"
