"""Comparisons stated before a run: a primary hypothesis ("hipporag > naive on recall@5"), tested
alone and printed first while the family's tests are exploratory; and a CI gate ("hipporag
recall@5 >= naive - 0.02") that passes only when the 95% paired CI's lower bound of
METHOD − BASELINE is at least −MARGIN, not merely its mean.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pandas as pd

from workbench.eval import stats

PRIMARY_FIELD = "primary hypothesis"  # the run's meta field that declares it
PRIMARY_FORM = "METHOD > BASELINE on METRIC (or <), e.g. 'hipporag > naive on recall@5'"
GATE_FORM = "METHOD METRIC >= BASELINE - MARGIN, e.g. 'hipporag recall@5 >= naive - 0.02'"
# a method, or a method with a stage by name ("naive+rerank", query/registry.py)
_NAME = r"[A-Za-z_][\w-]*(?:\+[A-Za-z_][\w-]*)*"
_PRIMARY = re.compile(rf"^\s*({_NAME})\s*([<>])\s*({_NAME})\s+on\s+([\w@-]+)\s*$", re.IGNORECASE)
_GATE = re.compile(rf"^\s*({_NAME})\s+([\w@-]+)\s*>=\s*({_NAME})\s*-\s*(\d+(?:\.\d*)?|\.\d+)\s*$")


class DeclarationError(ValueError):
    """A primary hypothesis or gate is malformed or names what the run has not; the message
    quotes it."""


def metric_name(text: str) -> str:
    """Return the records' column of a metric as a reader writes it: recall@5 → recall_at_5,
    nDCG@5 → ndcg_at_5, MRR → mrr."""
    return text.strip().lower().replace("@", "_at_")


@dataclass(frozen=True)
class Primary:
    method: str
    direction: str  # ">": method above baseline; "<": below
    baseline: str
    metric: str

    @property
    def text(self) -> str:
        return f"{self.method} {self.direction} {self.baseline} on {self.metric}"


@dataclass(frozen=True)
class Gate:
    method: str
    metric: str
    baseline: str
    margin: float

    @property
    def text(self) -> str:
        return f"{self.method} {self.metric} >= {self.baseline} - {self.margin:g}"


def parse_primary(text: str | None) -> Primary | None:
    """Return the primary hypothesis ``text`` declares (None when empty)."""
    if not text or not text.strip():
        return None
    match = _PRIMARY.match(text)
    if not match or match[1] == match[3]:
        raise DeclarationError(f"primary hypothesis {text!r}: write {PRIMARY_FORM}")
    method, direction, baseline, metric = match.groups()
    return Primary(method, direction, baseline, metric_name(metric))


def parse_gate(text: str) -> Gate:
    """Return the gate ``text`` states."""
    match = _GATE.match(text or "")
    if not match or match[1] == match[3]:
        raise DeclarationError(f"gate {text!r}: write {GATE_FORM}")
    method, metric, baseline, margin = match.groups()
    return Gate(method, metric_name(metric), baseline, float(margin))


def check_names(
    what: str, given: Primary | Gate | None, methods: list[str], metrics: list[str]
) -> None:
    """Raise, before any model call, when ``given`` names a method or metric the run lacks."""
    absent = [m for m in (given.method, given.baseline) if m not in methods] if given else []
    if absent:
        raise DeclarationError(
            f"{what} {given.text!r}: {', '.join(absent)} not among the methods run "
            f"({', '.join(methods)})"
        )
    if given and given.metric not in metrics:
        raise DeclarationError(
            f"{what} {given.text!r}: no metric {given.metric!r} in this run ({', '.join(metrics)})"
        )


def paired(
    records: pd.DataFrame, method: str, baseline: str, metric: str, what: str, **options: int
) -> stats.PairedResult:
    """Return the paired test of ``method`` − ``baseline`` on ``metric`` over ``records``; a
    method or metric the records lack is an error naming ``what`` declared it."""
    if metric not in records.columns:
        scores = [c for c in records.columns if pd.api.types.is_float_dtype(records[c])]
        raise DeclarationError(f"{what}: no metric {metric!r} in this run ({', '.join(scores)})")
    table = stats.scores_by_question(records, metric)
    absent = [m for m in (method, baseline) if m not in table.columns]
    if absent:
        raise DeclarationError(
            f"{what}: no records of {', '.join(absent)} (methods: {', '.join(table.columns)})"
        )
    return stats.paired_test(table[method].to_numpy(), table[baseline].to_numpy(), **options)


def without_primary(
    tables: dict[str, pd.DataFrame], primary: str | None, baseline: str
) -> dict[str, pd.DataFrame]:
    """Return ``tables`` (metric -> question x method) without the primary hypothesis's
    method on its metric when it is tested against ``baseline``: it is tested alone."""
    declared = parse_primary(primary)
    if declared and declared.baseline == baseline and declared.metric in tables:
        table = tables[declared.metric].drop(columns=declared.method, errors="ignore")
        tables = {**tables, declared.metric: table}
    return tables


def primary_verdict(primary: Primary, result: stats.PairedResult, alpha: float) -> str:
    """Return "supported", "contradicted" (significant the other way), "not supported" or
    "too few pairs"."""
    if math.isnan(result.p_value):
        return "too few pairs"
    if result.p_value >= alpha:
        return "not supported"
    above = result.mean_diff > 0
    return "supported" if above == (primary.direction == ">") else "contradicted"


def judge_gate(gate: Gate, records: pd.DataFrame, **options: int) -> tuple[bool, str]:
    """Return whether the records pass ``gate`` and the one line that says why."""
    result = paired(
        records, gate.method, gate.baseline, gate.metric, f"gate {gate.text!r}", **options
    )
    diff = f"{gate.method} − {gate.baseline} on {gate.metric}"
    shown = f"{result.mean_diff:+.3f} [{result.ci_low:+.3f}, {result.ci_high:+.3f}] (n={result.n})"
    if math.isnan(result.ci_low):
        return False, f"gate failed: {gate.text}: no question scored for both {diff}"
    passed = result.ci_low >= -gate.margin
    return passed, (
        f"gate {'passed' if passed else 'failed'}: {gate.text}: {diff} = {shown}; the 95% CI's "
        f"lower bound {result.ci_low:+.3f} is {'at or above' if passed else 'below'} "
        f"−{gate.margin:g}"
    )
