"""Is the judge measuring anything? Each RAGAS metric also scores planted controls it must score
lower (``CONTROLS``: a wrong answer, another question's answer or contexts); a metric whose
share of real-above-control pairs has a CI not above 0.5 is "not informative on this judge".
Below ``MIN_PAIRS`` scored pairs there is no verdict either way: a bootstrap over 2 pairs the
judge got right is [1.000, 1.000], which would call it informative on no evidence.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pandas as pd

from graphrag.llm.coroutines import run_sync
from workbench.eval import stats
from workbench.eval.judge import JUDGE_FAILED, NOT_RECORDED, SCORED, Judge, gather_counted
from workbench.eval.questions import QuestionSetError

CONTROLS = {
    "faithfulness": ("wrong_answer", "other_answer", "other_contexts"),
    "answer_relevancy": ("other_answer",),
    "context_recall": ("other_contexts",),
    "context_precision": ("other_contexts",),
    "context_utilization": ("other_contexts",),
}
DEFAULT_PAIRS = 20
INFORMATIVE = "informative"
NOT_INFORMATIVE = "not informative on this judge"
NOT_MEASURED_UNRECORDED = "not measured (not recorded)"
NOT_MEASURED = "not measured"
MIN_PAIRS = 10
TOO_FEW = f"too few pairs to tell (fewer than {MIN_PAIRS} scored)"
PAIR_COLUMNS = ["metric", "control", "question_id", "method", "donor_question_id", "real"]
PAIR_COLUMNS += ["control_score", "status", "error"]


_CITATION = re.compile(r"[\[【][\d,，、\s]+[\]】]")  # as query/base.py's CITATION, no group


class KeptControlsError(QuestionSetError):
    """A kept judge_controls.csv that cannot be read or is not one: an input of the run that
    names its questions, reported as a question set's errors are (one line, no traceback)."""


def shift_digits(text: str) -> str:
    """Return ``text`` with every digit d outside citations like [2] made (d + 3) mod 10."""
    parts = re.split(f"({_CITATION.pattern})", text)
    return "".join(
        part
        if _CITATION.fullmatch(part)
        else re.sub(r"\d", lambda m: str((int(m.group()) + 3) % 10), part)
        for part in parts
    )


def wrong_answer(answer: str, facts: list[str], replacements: list[str]) -> str | None:
    """Return a fluent wrong version of ``answer`` (each of ``facts`` swapped for one of
    ``replacements``, cycling; digits shifted), or None when there is nothing to change."""
    changed = answer
    alternatives = [r for r in replacements if r.strip() and not _numeric(r)] or ["another one"]
    wordy = sorted({f for f in facts if f.strip() and not _numeric(f)}, key=len, reverse=True)
    for i, fact in enumerate(wordy):
        pattern = re.compile(re.escape(fact), re.IGNORECASE)
        changed = pattern.sub(alternatives[i % len(alternatives)], changed)
    changed = shift_digits(changed)
    return changed if changed != answer else None


def _numeric(text: str) -> bool:
    return re.fullmatch(r"[\d.,\s%]+", text) is not None


@dataclass(frozen=True)
class ControlCase:
    """One real answer and the control it is compared with."""

    metric: str
    control: str
    question_id: str
    method: str
    donor_question_id: str
    real: float
    question: str
    reference: str
    answer: str
    contexts: list[str]


def _facts(question: pd.Series) -> list[str]:
    aliases = question.get("aliases", [])
    aliases = list(aliases) if isinstance(aliases, list) else []
    return [question["reference"], *aliases, *question["answer_keywords"]]


def _case(
    metric: str, control: str, record: pd.Series, donor: pd.Series, by_id: pd.DataFrame
) -> ControlCase | None:
    """Return the control case ``control`` of ``record`` with ``donor`` (another question's
    record of the same method), or None when ``wrong_answer`` has nothing to change."""
    question = by_id.loc[record["question_id"]]
    answer, contexts = record["answer"], list(record["contexts"])
    if control == "wrong_answer":
        answer = wrong_answer(answer, _facts(question), _facts(by_id.loc[donor["question_id"]]))
        if answer is None:
            return None
    elif control == "other_answer":
        answer = donor["answer"]
    else:
        contexts = list(donor["contexts"])
    return ControlCase(
        metric=metric,
        control=control,
        question_id=record["question_id"],
        method=record["method"],
        donor_question_id=donor["question_id"],
        real=float(record[metric]),
        question=question["question"],
        reference=question["reference"],
        answer=answer,
        contexts=contexts,
    )


def _kept_cases(
    usable: pd.DataFrame, by_id: pd.DataFrame, metric: str, kept: pd.DataFrame
) -> list[ControlCase]:
    """Rebuild ``kept``'s cases of ``metric`` from this run's records; a case whose answer or
    donor this run lacks is left out (its method was not run, or failed)."""
    rows = usable.set_index(["question_id", "method"], drop=False)
    cases = []
    for row in kept[kept["metric"] == metric].itertuples(index=False):
        record_key, donor_key = (row.question_id, row.method), (row.donor_question_id, row.method)
        if record_key not in rows.index or donor_key not in rows.index:
            continue
        case = _case(metric, row.control, rows.loc[record_key], rows.loc[donor_key], by_id)
        cases += [case] if case is not None else []
    return cases


def sample_cases(
    records: pd.DataFrame,
    questions: pd.DataFrame,
    metric: str,
    n_pairs: int = DEFAULT_PAIRS,
    seed: int = stats.DEFAULT_SEED,
    kept: pd.DataFrame | None = None,
) -> list[ControlCase]:
    """Return up to ``n_pairs`` control cases for ``metric``, drawn reproducibly with ``seed``.

    ``kept`` (a ``judge_controls.csv`` of an earlier run) names cases to keep: the draw is
    over every usable answer, so adding a method to a report would otherwise redraw all of
    its controls and every one would have to be judged again. Kept cases come first; only
    the shortfall is drawn, from the cases not kept."""
    by_id = questions.set_index("id")
    usable = records[
        records["answer_error"].isna() & records[metric].notna() & (records["answer"].str.len() > 0)
    ]
    kept_cases = _kept_cases(usable, by_id, metric, kept) if kept is not None else []
    taken = {(c.question_id, c.method, c.control) for c in kept_cases}
    rng = random.Random(f"{seed}:{metric}")
    candidates: list[ControlCase] = []
    for _, record in usable.sort_values(["question_id", "method"]).iterrows():
        donors = usable[
            (usable["method"] == record["method"])
            & (usable["question_id"] != record["question_id"])
        ].sort_values("question_id")
        donors = donors[donors["contexts"].map(len) > 0]
        if donors.empty:
            continue
        donor = donors.iloc[rng.randrange(len(donors))]
        for control in CONTROLS[metric]:
            if (record["question_id"], record["method"], control) in taken:
                continue
            case = _case(metric, control, record, donor, by_id)
            candidates += [case] if case is not None else []
    wanted = max(0, n_pairs - len(kept_cases))
    return kept_cases[:n_pairs] + rng.sample(candidates, min(wanted, len(candidates)))


async def score_case(judge: Judge, case: ControlCase) -> dict:
    """Return the case's row: the real score, the control's, and the control's status."""
    row = {c: getattr(case, c) for c in PAIR_COLUMNS[:6]}
    result = await judge.score(
        case.metric, case.question, case.answer, case.contexts, case.reference
    )
    if result.not_recorded:
        return {**row, "control_score": math.nan, "status": NOT_RECORDED, "error": None}
    status = JUDGE_FAILED if math.isnan(result.value) else SCORED
    return {**row, "control_score": result.value, "status": status, "error": result.error}


@dataclass(frozen=True)
class Discrimination:
    """How often the judge scored the real answer above its control, with a CI and a verdict."""

    metric: str
    value: float
    low: float
    high: float
    n: int
    judge_failed: int
    not_recorded: int
    verdict: str

    def render(self) -> str:
        if self.n == 0:
            return self.verdict
        extra = [f"{self.judge_failed} judge failures"] if self.judge_failed else []
        extra += [f"{self.not_recorded} not recorded"] if self.not_recorded else []
        counts = f"n={self.n} pairs" + (f"; {', '.join(extra)}" if extra else "")
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}] ({counts}): {self.verdict}"


def pair_outcomes(pairs: pd.DataFrame) -> pd.Series:
    """Return 1 / 0.5 / 0 per scored pair: real above, equal to, or below its control."""
    scored = pairs[pairs["status"] == SCORED]
    difference = scored["real"].astype(float) - scored["control_score"].astype(float)
    return difference.map(lambda d: 1.0 if d > 1e-9 else (0.5 if abs(d) <= 1e-9 else 0.0))


def discrimination(
    pairs: pd.DataFrame,
    metric: str,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> Discrimination:
    """Return the judge's discrimination on ``metric`` from its scored control pairs."""
    own = pairs[pairs["metric"] == metric] if len(pairs) else pairs
    outcomes = pair_outcomes(own) if len(own) else pd.Series(dtype=float)
    failed = int((own["status"] == JUDGE_FAILED).sum()) if len(own) else 0
    missing = int((own["status"] == NOT_RECORDED).sum()) if len(own) else 0
    estimate = stats.bootstrap_ci(outcomes, n_resamples=n_resamples, seed=seed)
    if estimate.n == 0:
        verdict = NOT_MEASURED_UNRECORDED if missing else NOT_MEASURED
    elif estimate.n < MIN_PAIRS:
        verdict = TOO_FEW
    else:
        verdict = INFORMATIVE if estimate.low > 0.5 else NOT_INFORMATIVE
    return Discrimination(
        metric, estimate.mean, estimate.low, estimate.high, estimate.n, failed, missing, verdict
    )


def load_kept(path: str | Path) -> pd.DataFrame:
    """Return the control cases a ``judge_controls.csv`` names, for ``kept`` below."""
    try:
        kept = pd.read_csv(path, dtype={"question_id": str, "donor_question_id": str})
    except (OSError, ValueError) as error:
        raise KeptControlsError(f"{path}: cannot read kept judge controls ({error})") from None
    missing = [c for c in PAIR_COLUMNS[:5] if c not in kept.columns]
    if missing:
        raise KeptControlsError(
            f"{path}: kept judge controls lack the columns {', '.join(missing)} "
            "(give a judge_controls.csv an evaluation wrote)"
        )
    unknown = sorted(set(kept["control"]) - {c for cs in CONTROLS.values() for c in cs})
    if unknown:
        raise KeptControlsError(f"{path}: unknown control kinds {', '.join(unknown)}")
    return kept


def run_controls(
    judge: Judge,
    records: pd.DataFrame,
    questions: pd.DataFrame,
    metrics: list[str],
    n_pairs: int,
    seed: int,
    in_flight: int,
    kept: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Return the scored control pairs of every metric (``PAIR_COLUMNS``), keeping ``kept``'s
    cases (see :func:`sample_cases`)."""
    cases = [c for m in metrics for c in sample_cases(records, questions, m, n_pairs, seed, kept)]
    if not cases:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    rows = run_sync(gather_counted([partial(score_case, judge, c) for c in cases], in_flight))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)
