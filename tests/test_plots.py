"""Evaluation figures a reader can read: no panel without scores, no text drawn over other text,
the cost–quality frontier drawn, n and the whiskers named, the same bytes on every render."""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from workbench.eval.metrics import JUDGE_FREE_METRICS
from workbench.eval.stats import frontier, summarize
from workbench.report import plots as viz
from workbench.report.figure_text import boxes_overlap, text_boxes, wrap

TRIAD = ["faithfulness", "answer_relevancy", "context_recall"]
METRICS = ["keyword_hit_rate", *TRIAD]
# naive is cheapest; hyde, multi_query and local share one cost and one mean (one point);
# router is dearer and better; global is dearer and worse (dominated).
COST = {"naive": 100.0, "hyde": 180.0, "multi_query": 180.0, "local": 180.0}
COST |= {"router": 650.0, "global": 1150.0}
QUALITY = {"naive": 0.6, "hyde": 0.8, "multi_query": 0.8, "local": 0.8, "router": 0.9}
QUALITY |= {"global": 0.4}
WHISKERS = "whiskers: 95% percentile-bootstrap CI, 2000 resamples"


def records(n: int = 12) -> pd.DataFrame:
    """n questions x six methods, two types; the triad: faithfulness recorded for two methods
    on the first 5 questions only, context recall not at all."""
    rng = np.random.default_rng(3)
    rows = []
    for q in range(n):
        noise = [-0.1, 0.1][q % 2]  # every method's mean is exactly its QUALITY
        for method, quality in QUALITY.items():
            rows.append(
                {
                    "question_id": f"q{q}",
                    "method": method,
                    "type": "local" if q < n // 2 else "multi_hop",
                    "keyword_hit_rate": quality + noise,
                    "answer_relevancy": float(rng.uniform(0.5, 0.9)),
                    "faithfulness": 0.7 if method in ("naive", "local") and q < 5 else math.nan,
                    "context_recall": math.nan,
                    "model_seconds": COST[method],
                }
            )
    return pd.DataFrame(rows)


def panels(figure: Figure) -> list:
    return [axes for axes in figure.axes if axes.get_visible()]


def drawn_something(axes) -> bool:
    return bool(axes.patches) or any(len(line.get_xdata()) for line in axes.get_lines())


def png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def test_no_panel_is_drawn_for_a_metric_without_scores() -> None:
    frame = records()
    by_method, by_type = summarize(frame, METRICS), summarize(frame, METRICS, by=("method", "type"))

    cost = viz.plot_cost_vs_quality(frame, by_method, METRICS)
    titles = [axes.get_title() for axes in panels(cost)]
    # faithfulness has scores for two methods only: drawn, the others named in its title
    assert [t.split(" vs ")[0] for t in titles] == METRICS[:3]
    assert "not plotted: hyde, multi_query, router, global" in titles[1]
    assert all(drawn_something(axes) for axes in panels(cost))

    by_type_figure = viz.plot_metrics_by_type(by_type, METRICS, ["local", "multi_hop"])
    assert [a.get_title().split("\n")[0] for a in panels(by_type_figure)] == METRICS[:3]
    assert all(drawn_something(axes) for axes in panels(by_type_figure))
    assert "not drawn: context_recall" in by_type_figure.get_supxlabel()

    by_method_figure = viz.plot_metrics_by_method(by_method, METRICS)
    ticks = [t.get_text() for t in by_method_figure.axes[0].get_xticklabels()]
    assert [t.split("\n(n=")[0].replace("\n", "") for t in ticks] == METRICS[:3]
    assert "not drawn: context_recall" in by_method_figure.get_supxlabel()


def test_a_figure_with_nothing_to_draw_is_one_line_that_says_so() -> None:
    frame = records()
    empty = ["context_recall"]
    for figure in (
        viz.plot_metrics_by_method(summarize(frame, empty), empty),
        viz.plot_metrics_by_type(summarize(frame, empty, by=("method", "type")), empty, ["local"]),
        viz.plot_cost_vs_quality(frame, summarize(frame, empty), empty),
    ):
        assert figure.axes == []
        [line] = [t.get_text() for t in figure.texts]
        assert line.startswith("No method has a score") and "context_recall" in line
        assert png(figure)  # still a file to write


def test_labels_of_three_methods_at_one_point_do_not_overlap() -> None:
    frame = records()
    figure = viz.plot_cost_quality_frontier(frame, summarize(frame, METRICS), ["keyword_hit_rate"])
    figure.canvas.draw()
    [axes] = panels(figure)
    labels = [t for t in axes.texts if t.get_text() in QUALITY]
    assert sorted(t.get_text() for t in labels) == sorted(QUALITY)
    assert not boxes_overlap(text_boxes(labels))
    # every label stays inside its panel
    inside = axes.get_window_extent()
    assert all(
        inside.contains(*box.min) and inside.contains(*box.max) for box in text_boxes(labels)
    )
    # and no text of the figure runs into another (titles, axis labels, caption, ticks)
    words = [axes.title, axes.xaxis.label, axes.yaxis.label, *labels]
    assert not boxes_overlap(text_boxes(words))


LONG = [f"supercalifragilisticexpialidocious{i}" for i in range(4)]


@pytest.mark.parametrize("names", [[*JUDGE_FREE_METRICS, *TRIAD], LONG])
def test_tick_labels_never_run_together(names: list[str]) -> None:
    """The longest metric names side by side (wrapped at underscores), and names with no
    underscore to break at (the ticks turn until they stand apart)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        [
            {"method": m, "type": t, **{name: float(rng.uniform()) for name in names}}
            for m in ("naive", "local", "global")
            for t in ("local", "multi_hop", "global")
            for _ in range(3)
        ]
    )
    by_method = viz.plot_metrics_by_method(summarize(frame, names, n_resamples=50), names)
    by_type = viz.plot_metrics_by_type(
        summarize(frame, names, by=("method", "type"), n_resamples=50),
        names,
        ["local", "multi_hop", "global"],
    )
    for figure in (by_method, by_type):
        figure.canvas.draw()
        for axes in panels(figure):
            assert not boxes_overlap(text_boxes(axes.get_xticklabels()))
    first = by_method.axes[0].get_xticklabels()[0]
    assert first.get_text() == wrap(names[0])
    # wrapped at underscores, they stand upright; without underscores, they are turned
    assert ("\n" in first.get_text()) == (first.get_rotation() == 0) == (names != LONG)


def test_the_cost_figure_draws_the_frontier_as_a_step_line_through_filled_dots() -> None:
    frame = records()
    by_method = summarize(frame, METRICS)
    figure = viz.plot_cost_vs_quality(frame, by_method, METRICS)
    axes = panels(figure)[0]
    front = frontier(COST, QUALITY)
    assert front == ["naive", "hyde", "local", "multi_query", "router"]
    [step] = [line for line in axes.get_lines() if line.get_linestyle() == "--"]
    assert step.get_drawstyle() == "steps-post"
    assert list(step.get_xdata()) == pytest.approx([COST[m] for m in front] + [COST["global"]])
    assert list(step.get_ydata()) == pytest.approx([QUALITY[m] for m in [*front, "router"]])
    dots = [line for line in axes.get_lines() if line.get_marker() == "o"]
    hollow = [d for d in dots if d.get_markerfacecolor() == "white"]
    assert len(dots) == len(QUALITY) and [d.get_xdata()[0] for d in hollow] == [COST["global"]]
    bold = {t.get_text() for t in axes.texts if t.get_fontweight() == "bold"}
    assert bold == set(front)


def test_each_figure_says_n_and_what_the_whiskers_are() -> None:
    frame = records()
    by_method, by_type = summarize(frame, METRICS), summarize(frame, METRICS, by=("method", "type"))
    cost = viz.plot_cost_vs_quality(frame, by_method, METRICS)
    # faithfulness has 5 questions per method, the others 12: n goes into each panel's title
    assert [a.get_title().split("\n")[0] for a in panels(cost)] == [
        "keyword_hit_rate vs cost (n=12)",
        "faithfulness vs cost (n=5)",
        "answer_relevancy vs cost (n=12)",
    ]
    assert WHISKERS in cost.get_supxlabel().replace("\n", " ")
    one = viz.plot_cost_vs_quality(frame, by_method, ["keyword_hit_rate"])
    assert "n=12 questions per method" in one.get_supxlabel()

    figure = viz.plot_metrics_by_method(by_method, METRICS)
    assert "n under each metric" in figure.get_supxlabel()
    ticks = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert ticks[1] == "faithfulness\n(n=5)" and ticks[0].endswith("(n=12)")
    assert WHISKERS in figure.get_supxlabel().replace("\n", " ")

    figure = viz.plot_metrics_by_type(by_type, METRICS, ["local", "multi_hop"], n_resamples=500)
    faithfulness = panels(figure)[1]
    assert [t.get_text() for t in faithfulness.get_xticklabels()] == [
        "local\n(n=5)",
        "multi_hop\n(n=0)",
    ]
    assert "2000" not in figure.get_supxlabel() and "500 resamples" in figure.get_supxlabel()


def test_a_metric_the_judge_is_not_informative_on_says_so_in_its_panel() -> None:
    frame = records()
    notes = {"faithfulness": "judge not informative"}
    figure = viz.plot_metrics_by_type(
        summarize(frame, METRICS, by=("method", "type")), METRICS, ["local"], notes=notes
    )
    assert panels(figure)[1].get_title().startswith("faithfulness (judge not informative)")
    cost = viz.plot_cost_vs_quality(frame, summarize(frame, METRICS), METRICS, notes=notes)
    assert panels(cost)[1].get_title().startswith("faithfulness (judge not informative) vs cost")


def test_two_renders_give_the_same_png_bytes() -> None:
    frame = records()
    by_method = summarize(frame, METRICS)
    first = png(viz.plot_cost_vs_quality(frame, by_method, METRICS))
    assert png(viz.plot_cost_vs_quality(frame, by_method, METRICS)) == first
