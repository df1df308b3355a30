"""What a run can detect, said before it starts (``graphrag eval --dry-run``): for the planned
number of headline questions, the smallest paired difference each comparison would detect at
``stats.POWER`` and ``stats.ALPHA``, and the questions a stated difference needs, from a pilot
report's per-question spread or from a stated standard deviation of the paired differences.
The reports print the same two numbers beside every test (``stats.detectable_difference``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.eval import stats
from workbench.eval.judge import JUDGE_CALLS
from workbench.eval.metrics import JUDGE_FREE_METRICS
from workbench.eval.retrieval import SCORES
from workbench.eval.significance import baseline_of

PILOT_RECORDS = ("records.parquet", "retrieval.parquet")  # an answer or a retrieval report
SCORE_COLUMNS = (*SCORES, *JUDGE_FREE_METRICS, *JUDGE_CALLS)


class PowerPlanError(ValueError):
    """A pilot or a stated spread cannot be used; the message names it."""


def headline_questions(questions: pd.DataFrame) -> int:
    """Return how many questions a report's headline will rest on: the test ones, if any."""
    splits = questions.get("split", pd.Series("test", index=questions.index))
    return int((splits == "test").sum()) or len(questions)


def pilot_spreads(folder: str | Path) -> pd.DataFrame:
    """Return (metric, method, baseline, n, sd) of every paired comparison against the
    baseline in a previous report's records (its test questions, when it has any)."""
    folder = Path(folder)
    found = [folder / name for name in PILOT_RECORDS if (folder / name).is_file()]
    if not found:
        raise PowerPlanError(
            f"--pilot {folder}: no {' or '.join(PILOT_RECORDS)} (a report folder written by "
            "`graphrag eval` or `graphrag retrieval`)"
        )
    records = pd.read_parquet(found[0])
    if "split" in records and (records["split"] == "test").any():
        records = records[records["split"] == "test"]
    baseline = baseline_of(stats.methods_in_order(records))
    rows = []
    for metric in dict.fromkeys(c for c in SCORE_COLUMNS if c in records.columns):
        table = stats.scores_by_question(records, metric)
        for method in (m for m in table.columns if m != baseline):
            differences = (table[method] - table[baseline]).dropna().to_numpy()
            if differences.size > 1 and np.std(differences, ddof=1) > 0:
                sd = float(np.std(differences, ddof=1))
                rows.append((metric, method, baseline, differences.size, sd))
    return pd.DataFrame(rows, columns=["metric", "method", "baseline", "n", "sd"])


def power_lines(
    n: int,
    pilot: str | Path | None = None,
    paired_sd: float | None = None,
    detect: float = stats.DETECT,
    methods: Sequence[str] = (),
) -> list[str]:
    """Return the dry run's power section for a run whose headline rests on ``n`` questions
    (a pilot's comparisons of the run's ``methods`` only, when it has any)."""
    head = (
        f"power ({stats.POWER:.0%}, α = {stats.ALPHA}, two-sided paired test) on the run's "
        f"{n} headline questions; questions needed to detect ±{detect:g}:"
    )
    if paired_sd is not None:
        if not paired_sd > 0:
            raise PowerPlanError(f"--paired-sd {paired_sd}: must be a positive number")
        mdd = stats.detectable_difference(paired_sd, n)
        needed = stats.questions_needed(paired_sd, detect)
        return [head, f"  paired sd {paired_sd:g}: detectable {mdd:.3f}; needs {needed:,.0f}"]
    if pilot is None:
        return [
            f"power: give --pilot REPORT_DIR (a previous report of these methods) or "
            f"--paired-sd SD for the smallest difference {n} headline questions can detect"
        ]
    spreads = pilot_spreads(pilot)
    if spreads["method"].isin(methods).any():
        spreads = spreads[spreads["method"].isin(methods)]
    if spreads.empty:
        return [f"power: the pilot {pilot} has no paired comparison with any spread"]
    lines = [head, f"  from the pilot {pilot} (paired sd of its test questions):"]
    lines.append(f"  {'metric':<18} {'method − baseline':<28} {'sd':>6} {'detectable':>10} needs")
    for row in spreads.itertuples(index=False):
        pair = f"{row.method} − {row.baseline}"
        mdd = stats.detectable_difference(row.sd, n)
        needed = stats.questions_needed(row.sd, detect)
        lines.append(f"  {row.metric:<18} {pair:<28} {row.sd:6.3f} {mdd:10.3f} {needed:,.0f}")
    return lines
