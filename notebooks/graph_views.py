"""The index views notebook 1 shows: the entity graph and community sizes on a pyplot axes
(shown inline), and the interactive graph page (``graphrag graph``) in an iframe."""

from __future__ import annotations

from html import escape
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import pandas as pd
from IPython.display import HTML

from graphrag import schemas as S
from graphrag.index.store import Index
from workbench.report.graph_page import community_of


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


def notebook_frame(html: str, height: int = 1000) -> Any:
    """Return the graph page as an HTML iframe (``srcdoc``): it needs no file or server."""
    # wrapped in a div: IPython warns about a bare <iframe> (it suggests a URL-based IFrame)
    return HTML(
        f'<div><iframe srcdoc="{escape(html, quote=True)}" width="100%" height="{height}" '
        'style="border:none"></iframe></div>'
    )
