"""The evaluation report's figures: every ``plot_*`` takes ``stats.summarize`` tables and
returns a Figure built without pyplot, so a report writer keeps no figure open. Labels are
placed in a fixed number of steps (``figure_text``): the same tables give the same PNG bytes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

from workbench.eval import stats
from workbench.report import figure_text as ft

# The quality panels of the report's cost figure, those with scores drawn, in this order.
# A cost axis is logarithmic when the dearest method costs this many times the cheapest.
LOG_COST_SPREAD = 4.0
QUALITY_PANELS = ("keyword_hit_rate", "faithfulness", "answer_relevancy", "context_recall")


# Every figure draws only metrics with scores, says n and what the whiskers are in
# its caption, and takes ``notes``: metric -> a few words its panel names it with (e.g. the
# judge's verdict on planted controls).


def bar_interval(row: pd.Series | None, metric: str) -> tuple[float, float, float] | None:
    """Return (mean, below, above) error-bar lengths, or None when there is no score."""
    if row is None or int(row[f"{metric}_n"]) == 0:
        return None
    mean = float(row[f"{metric}_mean"])
    return mean, mean - float(row[f"{metric}_low"]), float(row[f"{metric}_high"]) - mean


def _scored(summary: pd.DataFrame, metrics: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return the metrics with at least one score in a ``summarize`` table, and the others."""
    drawn = [m for m in metrics if (summary[f"{m}_n"] > 0).any()]
    return drawn, [m for m in metrics if m not in drawn]


def draw_bar(
    axes: Any, x: float, width: float, interval: tuple[float, float, float], colour: Any
) -> None:
    mean, below, above = interval
    axes.bar(x, mean, width, color=colour, yerr=[[below], [above]], capsize=3, ecolor="black")


def plot_metrics_by_method(
    by_method: pd.DataFrame,
    metrics: Sequence[str],
    *,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    notes: dict[str, str] | None = None,
) -> Figure:
    """Return grouped bars of each scored metric's mean per method (``by_method``: a
    ``summarize`` table) with 95% CI whiskers; a method without scores on a metric says so in
    the legend, a metric without any score is named in the caption, not drawn."""
    drawn, empty = _scored(by_method, metrics)
    if not drawn:
        return ft.no_scores(metrics)
    methods = stats.methods_in_order(by_method)
    colour_of = ft.colours(methods)
    width = 0.8 / max(len(methods), 1)
    figure = ft.new_figure(max(6.0, 1.6 * len(drawn) + 2.0), 4.8)
    axes = figure.subplots()
    missing: dict[str, list[str]] = {}
    for i, method in enumerate(methods):
        row = stats.summary_row(by_method, method=method)
        for j, metric in enumerate(drawn):
            interval = bar_interval(row, metric)
            if interval is None:
                missing.setdefault(method, []).append(metric)
                continue
            draw_bar(axes, j - 0.4 + width * (i + 0.5), width, interval, colour_of[method])
    counts = {m: ft.n_label(by_method[f"{m}_n"]) for m in drawn}
    same = len(set(counts.values())) == 1
    ticks = [ft.wrap(ft.named(m, notes)) + ("" if same else f"\n({counts[m]})") for m in drawn]
    axes.set_xticks(range(len(drawn)), ticks)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("Metric")
    axes.set_ylabel("Mean score")
    axes.set_title("Mean score by method")
    ft.legend_right(axes, ft.method_legend(methods, missing))
    questions = f"{counts[drawn[0]]} questions per method" if same else "n under each metric"
    ft.caption(figure, [f"{questions}; {ft.whiskers(n_resamples)}", ft.unscored_line(empty)])
    return ft.finish(figure)


def plot_metrics_by_type(
    by_type: pd.DataFrame,
    metrics: Sequence[str],
    types: Sequence[str],
    *,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    notes: dict[str, str] | None = None,
) -> Figure:
    """Return one panel per scored metric: mean per question type (in ``types`` order) and
    method, with 95% CI whiskers and each type's n; a panel names the methods and types it has
    no score for, a metric without any score is named in the caption, not drawn."""
    drawn, empty = _scored(by_type, metrics)
    if not drawn:
        return ft.no_scores(metrics)
    methods = stats.methods_in_order(by_type)
    colour_of = ft.colours(methods)
    columns = min(3, len(drawn))
    rows = math.ceil(len(drawn) / columns)
    width = 0.8 / max(len(methods), 1)
    figure = ft.new_figure(4.2 * columns + 2.0, 3.6 * rows)
    grid = figure.subplots(rows, columns, squeeze=False).ravel()
    for axes, metric in zip(grid, drawn, strict=False):
        unscored = []
        for i, method in enumerate(methods):
            missing = []
            for j, kind in enumerate(types):
                interval = bar_interval(
                    stats.summary_row(by_type, method=method, type=kind), metric
                )
                if interval is None:
                    missing.append(kind)
                    continue
                draw_bar(axes, j - 0.4 + width * (i + 0.5), width, interval, colour_of[method])
            if missing:
                where = "all types" if len(missing) == len(types) else ", ".join(missing)
                unscored.append(f"{method} ({where})")
        title = ft.named(metric, notes)
        title += f"\n(no scores: {'; '.join(unscored)})" if unscored else ""
        axes.set_title(title, fontsize="medium" if not unscored else "small")
        ticks = [
            f"{ft.wrap(kind)}\n({ft.n_label(by_type.loc[by_type['type'] == kind, f'{metric}_n'])})"
            for kind in types
        ]
        axes.set_xticks(range(len(types)), ticks)
        axes.set_ylim(0, 1.05)
        axes.set_xlabel("Question type")
        axes.set_ylabel("Mean score")
    for axes in grid[len(drawn) :]:
        axes.remove()
    figure.suptitle("Mean score by question type and method")
    figure.legend(
        handles=ft.method_legend(methods, {}),
        loc="outside right upper",
        fontsize="small",
        title="Method",
    )
    n_line = f"n under each type: questions per method of that type; {ft.whiskers(n_resamples)}"
    ft.caption(figure, [n_line, ft.unscored_line(empty)])
    return ft.finish(figure)


def plot_cost_vs_quality(
    records: pd.DataFrame,
    by_method: pd.DataFrame,
    metrics: Sequence[str],
    *,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    notes: dict[str, str] | None = None,
) -> Figure:
    """Return the report's cost figure: ``plot_cost_quality_frontier`` of the
    ``QUALITY_PANELS`` among ``metrics`` against model seconds if recorded, else completion
    tokens."""
    seconds = pd.to_numeric(records.get("model_seconds", pd.Series()), errors="coerce")
    cost = "model_seconds" if (seconds > 0).any() else "completion_tokens"
    panels = [m for m in QUALITY_PANELS if m in metrics]
    return plot_cost_quality_frontier(
        records, by_method, panels, cost, n_resamples=n_resamples, notes=notes
    )


def plot_cost_quality_frontier(
    records: pd.DataFrame,
    by_method: pd.DataFrame,
    metrics: Sequence[str],
    cost_column: str = "model_seconds",
    *,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    notes: dict[str, str] | None = None,
    per: str = "answer",
) -> Figure:
    """Return one panel per metric with scores and costs: mean quality against mean cost per
    answer, one dot a method, the cost–quality frontier (``stats.frontier``) a dashed step line
    through its methods' filled dots (dominated ones hollow); labels never overlap. ``per``:
    what one record is ("question" for a retrieval report, which makes no answer)."""
    methods = stats.methods_in_order(by_method)
    colour_of = ft.colours(methods)
    costs = {m: stats.column_mean(records[records["method"] == m], cost_column) for m in methods}
    panels = {}
    for metric in metrics:
        intervals = {
            m: bar_interval(stats.summary_row(by_method, method=m), metric) for m in methods
        }
        drawn = {m: i for m, i in intervals.items() if i is not None and not math.isnan(costs[m])}
        if drawn:
            panels[metric] = drawn
    if not panels:
        return ft.no_scores(metrics, f"and a mean {cost_column}")
    counts = {
        metric: ft.n_label(stats.summary_row(by_method, method=m)[f"{metric}_n"] for m in drawn)
        for metric, drawn in panels.items()
    }
    same = len(set(counts.values())) == 1
    columns = len(panels) if len(panels) <= 3 else 2
    rows = math.ceil(len(panels) / columns)
    figure = ft.new_figure(max(7.0, 5.5 * columns + 0.5), 4.6 * rows)
    grid = figure.subplots(rows, columns, squeeze=False).ravel()
    labels = {}
    for axes, (metric, drawn) in zip(grid, panels.items(), strict=False):
        front = stats.frontier({m: costs[m] for m in drawn}, {m: i[0] for m, i in drawn.items()})
        for method, (mean, below, above) in drawn.items():  # labelled later, by ``finish``
            axes.errorbar(
                costs[method],
                mean,
                yerr=[[below], [above]],
                fmt="o",
                capsize=3,
                color=colour_of[method],
                markerfacecolor=colour_of[method] if method in front else "white",
            )
        # the best quality each budget buys: on from the dearest frontier method to the right
        axes.step(
            [costs[m] for m in front] + [max(costs[m] for m in drawn)],
            [drawn[m][0] for m in [*front, front[-1]]],
            where="post",
            color="grey",
            linestyle="--",
            linewidth=1,
        )
        labels[axes] = [
            ft.PointLabel(m, costs[m], i[0], i[0] - i[1], i[0] + i[2], m in front)
            for m, i in drawn.items()
        ]
        unscored = [m for m in methods if m not in drawn]
        note = f"\n(not plotted: {', '.join(unscored)})" if unscored else ""
        title = f"{ft.named(metric, notes)} vs cost" + ("" if same else f" ({counts[metric]})")
        axes.set_title(title + note, fontsize="medium" if not note else "small")
        spread = [costs[m] for m in drawn]
        logarithmic = min(spread) > 0 and max(spread) >= LOG_COST_SPREAD * min(spread)
        if logarithmic:  # cheap methods crowd together on a linear axis
            axes.set_xscale("log")
            axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axes.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
            axes.xaxis.set_minor_formatter(NullFormatter())
        scale = " (log scale)" if logarithmic else ""
        axes.set_xlabel(f"Mean {cost_column.replace('_', ' ')} per {per}{scale}")
        axes.set_ylabel(f"Mean {metric}")
        axes.set_ylim(0, 1.05)
        axes.margins(x=0.2)
    for axes in grid[len(panels) :]:
        axes.remove()
    figure.suptitle(f"Quality against cost per {per}, one dot a method")
    questions = f"{counts[next(iter(panels))]} questions per method" if same else "n in each title"
    ft.caption(
        figure,
        [
            "filled dots joined by the dashed step line: the cost–quality frontier "
            "(no method is cheaper and better); hollow: dominated",
            f"{questions}; {ft.whiskers(n_resamples)}",
        ],
    )
    return ft.finish(figure, labels)
