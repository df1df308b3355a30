"""Evidence per hop as notebook 4 shows it: a bar per method and hop position, and the
question shown hop by hop (the report's own figures are ``workbench.report.plots``)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from workbench.eval.stats import DEFAULT_RESAMPLES, methods_in_order, summary_row
from workbench.report.figure_text import (
    caption,
    colours,
    finish,
    legend_right,
    method_legend,
    new_figure,
    whiskers,
)
from workbench.report.plots import bar_interval, draw_bar


def plot_hop_evidence(shares: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES) -> Figure:
    """Return grouped bars: per hop position (``shares``: ``hops.hop_shares``), the share of
    hops whose paragraph each method read, with 95% CI whiskers and n below the label."""
    methods = methods_in_order(shares)
    colour_of = colours(methods)
    positions = sorted(int(h) for h in pd.unique(shares["hop"]))
    width = 0.8 / max(len(methods), 1)
    figure = new_figure(max(6.0, 1.8 * len(positions) + 3.0), 4.4)
    axes = figure.subplots()
    labels = []
    for j, hop in enumerate(positions):
        counts = set()
        for i, method in enumerate(methods):
            row = summary_row(shares, method=method, hop=hop)
            if (found := bar_interval(row, "found")) is not None:
                counts.add(int(row["found_n"]))
                draw_bar(axes, j - 0.4 + width * (i + 0.5), width, found, colour_of[method])
        labels.append(f"hop {hop}\n(n={', '.join(map(str, sorted(counts)))})")
    axes.set_xticks(range(len(positions)), labels)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("Share of hops whose paragraph was read")
    axes.set_title("Evidence found per hop")
    legend_right(axes, method_legend(methods, {}))
    n_line = "n under each hop: questions with that hop, per method"
    caption(figure, [f"{n_line}; {whiskers(n_resamples)}"])
    return finish(figure)


def telling_question(hops: pd.DataFrame) -> str:
    """Return the question to show hop by hop: the first on which the methods disagree about a
    hop, else the first with a missed hop, else the first (preferring those all answered)."""
    questions = list(pd.unique(hops["question_id"]))
    methods = hops.groupby("question_id", sort=False)["method"].nunique()
    questions = [q for q in questions if methods[q] == hops["method"].nunique()] or questions
    spread = hops.groupby(["question_id", "hop"], sort=False)["found"].nunique()
    split = set(spread[spread > 1].index.get_level_values("question_id"))
    missed = set(hops.loc[hops["found"] == 0.0, "question_id"])
    return next((q for chosen in (split, missed) for q in questions if q in chosen), questions[0])
