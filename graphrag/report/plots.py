"""Figures of an index and of an evaluation: every ``plot_*`` takes tables and returns a Figure.

Index figures draw on a pyplot axes, so a notebook shows them inline; evaluation figures
(from ``stats.summarize`` tables) build a Figure without pyplot, so a report writer keeps
no figure open. Layouts are seeded: the same tables give the same picture.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from graphrag import schemas as S
from graphrag.eval.stats import column_mean, frontier, methods_in_order, summary_row
from graphrag.index.store import Index

QUALITY_PANELS = ("keyword_hit_rate", "faithfulness")


def community_of(index: Index, level: int = 0) -> dict[str, int]:
    """Return entity id -> community number at ``level`` (entities in none are left out)."""
    rows = index.communities[index.communities[S.LEVEL] == level]
    return {
        e: int(c)
        for c, members in zip(rows[S.COMMUNITY], rows[S.ENTITY_IDS], strict=True)
        for e in members
    }


def plot_entity_graph(
    index: Index, level: int = 0, seed: int = 7, label_top: int = 20, ax: plt.Axes | None = None
) -> plt.Figure:
    """Draw the entity graph, nodes coloured by community at ``level``, sized by degree."""
    graph = index.graph()
    membership = community_of(index, level)
    ax = ax or plt.subplots(figsize=(11, 8))[1]
    position = nx.spring_layout(graph, seed=seed, k=0.6, weight=S.WEIGHT)
    palette = plt.get_cmap("tab20")
    communities = sorted(set(membership.values()))
    colour = {c: palette(i % 20) for i, c in enumerate(communities)}
    nodes = list(graph.nodes())
    nx.draw_networkx_edges(graph, position, ax=ax, alpha=0.25, width=0.8)
    nx.draw_networkx_nodes(
        graph,
        position,
        nodelist=nodes,
        ax=ax,
        node_color=[colour.get(membership.get(n), (0.75, 0.75, 0.75, 1.0)) for n in nodes],
        node_size=[60 + 40 * graph.degree(n) for n in nodes],
        linewidths=0.5,
        edgecolors="white",
    )
    top = sorted(nodes, key=lambda n: (-graph.degree(n), graph.nodes[n][S.TITLE]))[:label_top]
    nx.draw_networkx_labels(
        graph, position, ax=ax, font_size=8, labels={n: graph.nodes[n][S.TITLE] for n in top}
    )
    for c in communities:
        ax.scatter([], [], color=colour[c], label=f"community {c}")
    ax.legend(
        loc="lower left",
        fontsize=7,
        ncol=2,
        frameon=False,
        title=f"level {level} (grey: no community)",
    )
    ax.set_title(
        f"Entity graph: {graph.number_of_nodes()} entities, "
        f"{graph.number_of_edges()} relationships, coloured by level-{level} community"
    )
    ax.set_axis_off()
    return ax.figure


def community_sizes(index: Index) -> pd.DataFrame:
    """Return one row per level: number of communities and their size spread."""
    return (
        index.communities.groupby(S.LEVEL)[S.SIZE]
        .agg(communities="count", smallest="min", median="median", largest="max")
        .reset_index()
    )


def plot_community_sizes(index: Index, ax: plt.Axes | None = None) -> plt.Figure:
    """Bar chart of community sizes (entities), one group of bars per level."""
    ax = ax or plt.subplots(figsize=(9, 4))[1]
    table = index.communities.sort_values([S.LEVEL, S.SIZE], ascending=[True, False])
    labels = [f"L{lv}:C{c}" for lv, c in zip(table[S.LEVEL], table[S.COMMUNITY], strict=True)]
    palette = plt.get_cmap("tab10")
    ax.bar(labels, table[S.SIZE], color=[palette(int(lv) % 10) for lv in table[S.LEVEL]])
    ax.set_xlabel("community (level:number)")
    ax.set_ylabel("entities")
    ax.set_title("Community sizes per level")
    ax.tick_params(axis="x", rotation=90, labelsize=7)
    return ax.figure


# --- evaluation ---------------------------------------------------------------------------


def _new_figure(width: float, height: float) -> Figure:
    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _colours(methods: Sequence[str]) -> dict[str, Any]:
    palette = colormaps["tab10"].colors
    return {method: palette[i % len(palette)] for i, method in enumerate(methods)}


def _interval(row: pd.Series | None, metric: str) -> tuple[float, float, float] | None:
    """Return (mean, below, above) error-bar lengths, or None when there is no score."""
    if row is None or int(row[f"{metric}_n"]) == 0:
        return None
    mean = float(row[f"{metric}_mean"])
    return mean, mean - float(row[f"{metric}_low"]), float(row[f"{metric}_high"]) - mean


def _bar(
    axes: Any, x: float, width: float, interval: tuple[float, float, float], colour: Any
) -> None:
    mean, below, above = interval
    axes.bar(x, mean, width, color=colour, yerr=[[below], [above]], capsize=3, ecolor="black")


def _dot(axes: Any, method: str, cost: float, interval: tuple, colour: Any, **style: Any) -> None:
    """Draw one method's mean quality at its cost, with CI whiskers and its name."""
    mean, below, above = interval
    axes.errorbar(cost, mean, yerr=[[below], [above]], fmt="o", capsize=3, color=colour, **style)
    axes.annotate(method, (cost, mean), textcoords="offset points", xytext=(5, 5), fontsize="small")


def _legend_right(axes: Any, handles: list[Patch]) -> None:
    axes.legend(handles=handles, loc="upper left", fontsize="small", bbox_to_anchor=(1.0, 1.0))


def _legend_handles(methods: Sequence[str], notes: dict[str, list[str]]) -> list[Patch]:
    colours = _colours(methods)
    handles = []
    for method in methods:
        label = method
        if notes.get(method):
            label += f" (no scores: {', '.join(notes[method])})"
        handles.append(Patch(facecolor=colours[method], label=label))
    return handles


def plot_metrics_by_method(by_method: pd.DataFrame, metrics: Sequence[str]) -> Figure:
    """Return grouped bars of each metric's mean per method (``by_method``: a ``summarize``
    table) with 95% CI whiskers; a method without scores says so in the legend."""
    methods = methods_in_order(by_method)
    colours = _colours(methods)
    width = 0.8 / max(len(methods), 1)
    figure = _new_figure(max(6.0, 1.6 * len(metrics) + 2.0), 4.8)
    axes = figure.subplots()
    notes: dict[str, list[str]] = {}
    for i, method in enumerate(methods):
        row = summary_row(by_method, method=method)
        for j, metric in enumerate(metrics):
            interval = _interval(row, metric)
            if interval is None:
                notes.setdefault(method, []).append(metric)
                continue
            _bar(axes, j - 0.4 + width * (i + 0.5), width, interval, colours[method])
    axes.set_xticks(range(len(metrics)), metrics)
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("Metric")
    axes.set_ylabel("Mean score")
    axes.set_title("Mean score by method (whiskers: 95% bootstrap CI)")
    _legend_right(axes, _legend_handles(methods, notes))
    return figure


def plot_metrics_by_type(
    by_type: pd.DataFrame, metrics: Sequence[str], types: Sequence[str]
) -> Figure:
    """Return one panel per metric: mean per question type (in ``types`` order) and method,
    with 95% CI whiskers; a panel names the methods and types it has no score for."""
    methods = methods_in_order(by_type)
    colours = _colours(methods)
    columns = min(3, len(metrics))
    rows = math.ceil(len(metrics) / columns)
    width = 0.8 / max(len(methods), 1)
    figure = _new_figure(4.2 * columns + 2.0, 3.6 * rows)
    grid = figure.subplots(rows, columns, squeeze=False).ravel()
    for axes, metric in zip(grid, metrics, strict=False):
        unscored = []
        for i, method in enumerate(methods):
            missing = []
            for j, kind in enumerate(types):
                interval = _interval(summary_row(by_type, method=method, type=kind), metric)
                if interval is None:
                    missing.append(kind)
                    continue
                _bar(axes, j - 0.4 + width * (i + 0.5), width, interval, colours[method])
            if missing:
                where = "all types" if len(missing) == len(types) else ", ".join(missing)
                unscored.append(f"{method} ({where})")
        title = metric if not unscored else f"{metric}\n(no scores: {'; '.join(unscored)})"
        axes.set_title(title, fontsize="medium" if not unscored else "small")
        axes.set_xticks(range(len(types)), types)
        axes.set_ylim(0, 1.05)
        axes.set_xlabel("Question type")
        axes.set_ylabel("Mean score")
    for axes in grid[len(metrics) :]:
        axes.set_visible(False)
    figure.suptitle("Mean score by question type and method (whiskers: 95% bootstrap CI)")
    figure.legend(
        handles=_legend_handles(methods, {}),
        loc="outside right upper",
        fontsize="small",
        title="Method",
    )
    return figure


def _cost_axis(records: pd.DataFrame) -> tuple[str, str]:
    """Return the cost column for the x axis: model seconds if recorded, else completion tokens."""
    if "model_seconds" in records:
        seconds = pd.to_numeric(records["model_seconds"], errors="coerce")
        if (seconds > 0).any():
            return "model_seconds", "Mean model seconds per answer"
    return "completion_tokens", "Mean completion tokens per answer"


def plot_cost_vs_quality(
    records: pd.DataFrame, by_method: pd.DataFrame, metrics: Sequence[str]
) -> Figure:
    """Return keyword hit rate and faithfulness against mean cost per answer (model seconds,
    else completion tokens), one dot a method; methods without a score are named, not drawn."""
    methods = methods_in_order(by_method)
    colours = _colours(methods)
    cost_column, cost_label = _cost_axis(records)
    figure = _new_figure(11.0, 4.6)
    for axes, metric in zip(figure.subplots(1, len(QUALITY_PANELS)), QUALITY_PANELS, strict=True):
        axes.set_xlabel(cost_label)
        axes.set_ylabel(f"Mean {metric}")
        if metric not in metrics:
            axes.set_title(f"{metric} (not in these records)")
            continue
        unscored = []
        for method in methods:
            cost = column_mean(records[records["method"] == method], cost_column)
            interval = _interval(summary_row(by_method, method=method), metric)
            if interval is None or math.isnan(cost):
                unscored.append(method)
                continue
            _dot(axes, method, cost, interval, colours[method])
        axes.set_ylim(0, 1.05)
        axes.margins(x=0.2)
        note = f"\n(not plotted: {', '.join(unscored)})" if unscored else ""
        axes.set_title(f"{metric} vs cost{note}", fontsize="medium" if not note else "small")
    figure.suptitle("Quality against cost per method (whiskers: 95% bootstrap CI)")
    return figure


def plot_cost_quality_frontier(
    records: pd.DataFrame,
    by_method: pd.DataFrame,
    metrics: Sequence[str],
    cost_column: str = "model_seconds",
) -> Figure:
    """Return one panel per metric: mean quality against mean cost per answer, one dot a method
    (dominated ones hollow), the cost–quality frontier (``stats.frontier``) joined by a line."""
    methods = methods_in_order(by_method)
    colours = _colours(methods)
    costs = {m: column_mean(records[records["method"] == m], cost_column) for m in methods}
    figure = _new_figure(5.5 * len(metrics) + 0.5, 4.6)
    for axes, metric in zip(
        figure.subplots(1, len(metrics), squeeze=False)[0], metrics, strict=True
    ):
        intervals = {m: _interval(summary_row(by_method, method=m), metric) for m in methods}
        drawn = {m: i for m, i in intervals.items() if i is not None and not math.isnan(costs[m])}
        front = frontier({m: costs[m] for m in drawn}, {m: i[0] for m, i in drawn.items()})
        for method, interval in drawn.items():
            face = colours[method] if method in front else "white"
            _dot(axes, method, costs[method], interval, colours[method], markerfacecolor=face)
        if front:
            axes.step(
                [costs[m] for m in front],
                [drawn[m][0] for m in front],
                where="post",
                color="grey",
                linestyle="--",
                linewidth=1,
            )
        unscored = [m for m in methods if m not in drawn]
        note = f"\n(not plotted: {', '.join(unscored)})" if unscored else ""
        axes.set_title(f"{metric} vs cost{note}", fontsize="medium" if not note else "small")
        axes.set_xlabel(f"Mean {cost_column.replace('_', ' ')} per answer")
        axes.set_ylabel(f"Mean {metric}")
        axes.set_ylim(0, 1.05)
        axes.margins(x=0.2)
    figure.suptitle(
        "Cost–quality frontier (filled, dashed line: no method is cheaper and better; "
        "whiskers: 95% bootstrap CI)"
    )
    return figure


def plot_hop_evidence(shares: pd.DataFrame) -> Figure:
    """Return grouped bars: per hop position (``shares``: ``hops.hop_shares``), the share of
    hops whose paragraph each method read, with 95% CI whiskers and n below the label."""
    methods = methods_in_order(shares)
    colours = _colours(methods)
    positions = sorted(int(h) for h in pd.unique(shares["hop"]))
    width = 0.8 / max(len(methods), 1)
    figure = _new_figure(max(6.0, 1.8 * len(positions) + 3.0), 4.4)
    axes = figure.subplots()
    labels = []
    for j, hop in enumerate(positions):
        counts = set()
        for i, method in enumerate(methods):
            row = summary_row(shares, method=method, hop=hop)
            interval = _interval(row, "found")
            if interval is None:
                continue
            counts.add(int(row["found_n"]))
            _bar(axes, j - 0.4 + width * (i + 0.5), width, interval, colours[method])
        labels.append(f"hop {hop}\n(n={', '.join(map(str, sorted(counts)))})")
    axes.set_xticks(range(len(positions)), labels)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("Share of hops whose paragraph was read")
    axes.set_title("Evidence found per hop (whiskers: 95% bootstrap CI)")
    _legend_right(axes, _legend_handles(methods, {}))
    return figure
