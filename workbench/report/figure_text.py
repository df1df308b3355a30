"""Text on the evaluation figures, placed so a reader can read it: tick labels wrapped, then
turned while they overlap; point labels moved apart by adjustText in a fixed number of
iterations (no time limit), so the same tables give the same PNG bytes.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any, NamedTuple

from adjustText import adjust_text
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.text import Text
from matplotlib.transforms import Bbox

WRAP = 12  # characters per line of a wrapped tick label
LABEL_ITERATIONS = 400  # adjustText stops here at the latest: a time limit would vary the bytes
CAPTION_CHARS_PER_INCH = 13  # "small" text: a caption line stays inside the figure
TICK_ROTATIONS = (0, 30, 90)  # tried in turn until no two tick labels of an axes overlap


def new_figure(width: float, height: float) -> Figure:
    """Return a Figure on its own Agg canvas (no pyplot), laid out by constrained layout."""
    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def no_scores(metrics: Sequence[str], condition: str = "") -> Figure:
    """Return the figure of a plot with nothing to draw: one line that says so."""
    named = ", ".join(metrics) or "any metric"
    text = " ".join(p for p in ("No method has a score", condition, f"for {named}") if p) + "."
    figure = new_figure(8.0, 0.6)
    figure.text(0.5, 0.5, text, ha="center", va="center")
    return figure


def wrap(name: str, width: int = WRAP) -> str:
    """Return ``name`` broken after underscores into lines of at most ``width`` characters
    where it can be (a part longer than that keeps its own line)."""
    lines = [""]
    for part in name.replace("_", "_\0").split("\0"):
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return "\n".join(lines)


def n_label(counts: Iterable[int]) -> str:
    """Return ``n=24``, or ``n=20–24`` when the counts differ (zero counts left out)."""
    present = sorted({int(c) for c in counts if int(c) > 0})
    if not present:
        return "n=0"
    low, high = present[0], present[-1]
    return f"n={low}" if low == high else f"n={low}–{high}"


def whiskers(n_resamples: int) -> str:
    return f"whiskers: 95% percentile-bootstrap CI, {n_resamples} resamples"


def caption(figure: Figure, parts: Sequence[str]) -> None:
    """Write ``parts`` below the panels, each on lines that fit the figure's width."""
    width = int(figure.get_figwidth() * CAPTION_CHARS_PER_INCH)
    lines = [line for part in parts if part for line in textwrap.wrap(part, width)]
    figure.supxlabel("\n".join(lines), fontsize="small", color="0.25")


def boxes_overlap(boxes: Sequence[Bbox]) -> bool:
    """Return whether any two of ``boxes`` share more than an edge."""
    return any(
        min(a.x1, b.x1) > max(a.x0, b.x0) and min(a.y1, b.y1) > max(a.y0, b.y0)
        for a, b in combinations(boxes, 2)
    )


def text_boxes(texts: Iterable[Text]) -> list[Bbox]:
    """Return the drawn extents of the visible, non-empty ``texts``."""
    texts = [t for t in texts if t.get_visible() and t.get_text()]
    if not texts:
        return []
    renderer = texts[0].figure.canvas.get_renderer()
    return [t.get_window_extent(renderer) for t in texts]


def _turn_ticks(figure: Figure) -> None:
    """Turn the x tick labels of every axes whose labels overlap, least first."""
    for rotation in TICK_ROTATIONS[1:]:
        figure.draw_without_rendering()
        crowded = [a for a in figure.axes if boxes_overlap(text_boxes(a.get_xticklabels()))]
        if not crowded:
            return
        for axes in crowded:
            axes.tick_params(axis="x", labelrotation=rotation)
            for label in axes.get_xticklabels():
                label.set_horizontalalignment("right" if rotation < 90 else "center")
                label.set_rotation_mode("anchor" if rotation < 90 else "default")


class PointLabel(NamedTuple):
    """A point's label: its text at (x, y), the point's whisker from ``low`` to ``high``."""

    text: str
    x: float
    y: float
    low: float
    high: float
    bold: bool = False


def _place(axes: Axes, labels: Sequence[PointLabel]) -> None:
    """Write each label near its point, moved until none overlaps another label, a point or a
    whisker, joined to its point by a thin line when moved away."""
    texts = [
        axes.text(p.x, p.y, p.text, fontsize="small", fontweight="bold" if p.bold else "normal")
        for p in labels
    ]
    adjust_text(
        texts,
        x=[p.x for p in labels],
        y=[p.y for p in labels],
        objects=[Bbox([[p.x, p.low], [p.x, p.high]]) for p in labels],
        ax=axes,
        iter_lim=LABEL_ITERATIONS,
        time_lim=None,
        expand=(1.15, 1.4),
        arrowprops={"arrowstyle": "-", "color": "0.5", "linewidth": 0.6},
    )


def finish(figure: Figure, labels: dict[Axes, list[PointLabel]] | None = None) -> Figure:
    """Lay ``figure`` out, turn crowded tick labels, freeze the layout, then place the point
    ``labels`` of each axes (placing needs the final geometry); return the figure."""
    _turn_ticks(figure)
    figure.draw_without_rendering()
    figure.set_layout_engine("none")
    for axes, points in (labels or {}).items():
        if points:
            _place(axes, points)
    return figure


# --- names, colours and legends of the methods and metrics ---------------------------------


def colours(methods: Sequence[str]) -> dict[str, Any]:
    """Return a colour per method, in order: the same methods get the same colours."""
    palette = colormaps["tab10"].colors
    return {method: palette[i % len(palette)] for i, method in enumerate(methods)}


def named(metric: str, notes: dict[str, str] | None) -> str:
    """Return the metric's name with its note, e.g. ``faithfulness (judge not informative)``."""
    return f"{metric} ({notes[metric]})" if notes and metric in notes else metric


def unscored_line(empty: Sequence[str]) -> str:
    """Return the caption line naming the metrics without any score (empty if none)."""
    return f"no scores in these records, not drawn: {', '.join(empty)}" if empty else ""


def legend_right(axes: Any, handles: list[Patch]) -> None:
    axes.legend(handles=handles, loc="upper left", fontsize="small", bbox_to_anchor=(1.0, 1.0))


def method_legend(methods: Sequence[str], notes: dict[str, list[str]]) -> list[Patch]:
    """Return a legend entry per method in its colour, naming the metrics it has no score on."""
    colour_of = colours(methods)
    handles = []
    for method in methods:
        label = method
        if notes.get(method):
            label += f" (no scores: {', '.join(notes[method])})"
        handles.append(Patch(facecolor=colour_of[method], label=label))
    return handles
