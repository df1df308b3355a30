"""The ``## Evidence per hop`` section: the per-hop shares ``eval.hops`` computes, as tables."""

from __future__ import annotations

import pandas as pd

from workbench.eval import stats
from workbench.eval.hops import FOUND, MISSED, all_hops_found, found_table, hop_shares
from workbench.eval.stats import summary_row
from workbench.report.tables import cell, md, table

DEGRADED_MARK = " (degraded)"  # after a per-question cell whose answer lost a step


def shares_table(shares: pd.DataFrame) -> list[str]:
    """Return a Markdown table: one row per method, one column per hop position."""
    positions = sorted(int(h) for h in pd.unique(shares["hop"]))
    rows = []
    for method in stats.methods_in_order(shares):
        cells = [cell(summary_row(shares, method=method, hop=h), "found") for h in positions]
        rows.append([md(method), *cells])
    return table(["Method", *(f"hop {h}" for h in positions)], rows)


def hops_section(
    hops: pd.DataFrame,
    *,
    per_question: bool = True,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
    degraded: set[tuple[str, str]] | None = None,
) -> list[str]:
    """Return the lines of the ``## Evidence per hop`` section (empty without hop rows);
    ``degraded``: the (question id, method) of degraded answers, marked in the per-question
    table."""
    if hops.empty:
        return []
    shares = hop_shares(hops, n_resamples=n_resamples, seed=seed)
    complete = all_hops_found(hops)
    estimates = {
        m: stats.bootstrap_ci(complete[m], n_resamples=n_resamples, seed=seed) for m in complete
    }
    chains = [
        [md(m), cell(pd.Series(stats.summary_columns("found", estimate)), "found")]
        for m, estimate in estimates.items()
    ]
    lines = [
        "## Evidence per hop",
        "",
        "For each hop of a question's decomposition (in reasoning order), the share of hops "
        "whose gold paragraph the method placed verbatim in its prompt: mean [95% bootstrap CI] "
        "(n = questions with that hop). Summaries (reports, map points, entity descriptions) do "
        "not count, so global search finds no hop by construction; a failed answer finds none.",
        "",
        *shares_table(shares),
        "",
        "Whole chain: the share of questions with every hop's paragraph read:",
        "",
        *table(["Method", "All hops found"], chains),
    ]
    if per_question:
        found = found_table(hops)
        marked = degraded or set()
        rows = [
            [md(question)]
            + [
                md(found.loc[question, m]) + (DEGRADED_MARK if (str(question), m) in marked else "")
                for m in found.columns
            ]
            for question in found.index
        ]
        note = f"; {DEGRADED_MARK.strip()} a degraded answer" if marked else ""
        lines += [
            "",
            f"Per question ({FOUND} found, {MISSED} missed, hop 1 first{note}):",
            "",
            *table(["Question", *map(md, found.columns)], rows),
        ]
    return lines
