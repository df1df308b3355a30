"""The entity graph as an interactive HTML page that needs no network (pyvis, inlined), laid
out by a seeded spring layout with physics off, so a page is the same on every run.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.colors import to_hex

from graphrag import schemas as S
from graphrag.index.store import Index

# pyvis's template links bootstrap from a CDN even when inlining; it only styles the menu
# cards, so those links are dropped and the page needs no network.
_REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref=\"https?://[^\"]*\"[^>]*>", re.IGNORECASE)
_REMOTE_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>", re.IGNORECASE
)
# vis-network's tooltip is one unwrapped line ("div." outranks the library's own rule)
_TOOLTIP_STYLE = "<style>div.vis-tooltip{white-space:pre-wrap;max-width:34em}</style>"
_NO_COMMUNITY = "none"


def community_of(index: Index, level: int = 0) -> dict[str, int]:
    """Return entity id -> community number at ``level`` (entities in none are left out)."""
    rows = index.communities[index.communities[S.LEVEL] == level]
    return {
        e: int(c)
        for c, members in zip(rows[S.COMMUNITY], rows[S.ENTITY_IDS], strict=True)
        for e in members
    }


def _sources_line(unit_ids: list[str], documents: dict[str, list[str]]) -> str:
    docs = dict.fromkeys(d for u in unit_ids for d in documents.get(u, []))
    return f"documents: {', '.join(docs) or '-'}\ntext units: {', '.join(unit_ids) or '-'}"


def interactive_graph_html(
    index: Index,
    level: int = 0,
    communities: list[int] | None = None,
    seed: int = 7,
    height: str = "750px",
) -> str:
    """Return a self-contained HTML page of the entity graph, nodes coloured by community at
    ``level`` (``communities``: keep only those); hovering shows descriptions and sources."""
    try:  # here, not at the top: pyvis (and the IPython it pulls) is the [notebooks] extra
        from pyvis.network import Network
    except ImportError as err:
        raise ImportError(
            "the interactive graph page needs pyvis, which comes with the [notebooks] extra: "
            'pip install "graphrag-workbench[notebooks]"'
        ) from err

    graph = index.graph()
    membership = community_of(index, level)
    if communities is not None:
        keep = set(communities)
        graph = graph.subgraph(n for n in graph if membership.get(n) in keep).copy()
    position = nx.spring_layout(graph, seed=seed, k=0.6, weight="weight") if len(graph) else {}
    palette = plt.get_cmap("tab20")
    ordered = sorted(set(membership.values()))
    colour = {c: to_hex(palette(i % 20)) for i, c in enumerate(ordered)}
    units = index.text_units  # text unit id -> the document ids it was cut from
    documents = {u: list(d) for u, d in zip(units[S.ID], units[S.DOCUMENT_IDS], strict=True)}
    units_of = dict(zip(index.entities[S.ID], index.entities[S.TEXT_UNIT_IDS], strict=True))
    relationship_units = dict(
        zip(index.relationships[S.ID], index.relationships[S.TEXT_UNIT_IDS], strict=True)
    )

    net = Network(
        height=height, width="100%", select_menu=True, filter_menu=True, cdn_resources="in_line"
    )
    # The select menu lists node ids, so a node is named by its title (and id, if titles clash).
    titles = Counter(data["title"] for _, data in graph.nodes(data=True))
    name = {
        n: d["title"] if titles[d["title"]] == 1 else f"{d['title']} ({n})"
        for n, d in graph.nodes(data=True)
    }
    for node, data in graph.nodes(data=True):
        community = membership.get(node)
        x, y = position[node]
        where = f"in no level-{level} community"
        if community is not None:
            where = f"level-{level} community {community}"
        about = f"{data['description']}\n\n{_sources_line(list(units_of.get(node, [])), documents)}"
        net.add_node(
            name[node],
            label=data["title"],
            title=f"{data['title']} ({data['type']}), {where}\n\n{about}",
            color=colour.get(community, "#bfbfbf"),
            size=6 + 4 * float(np.sqrt(graph.degree(node))),
            x=float(x) * 500,
            y=float(y) * 500,
            community=_NO_COMMUNITY if community is None else str(community),
            type=data["type"],
        )
    for source, target, data in graph.edges(data=True):
        net.add_edge(
            name[source],
            name[target],
            title=(
                f"{graph.nodes[source]['title']} - {graph.nodes[target]['title']} "
                f"(weight {data['weight']:g})\n\n{data['description']}\n\n"
                + _sources_line(list(relationship_units.get(data["id"], [])), documents)
            ),
            width=1 + float(np.log1p(data["weight"])),
        )
    net.toggle_physics(False)
    html = net.generate_html()
    html = _REMOTE_SCRIPT.sub("", _REMOTE_LINK.sub("", html))
    return html.replace("</head>", _TOOLTIP_STYLE + "\n</head>", 1)


def write_interactive_graph(index: Index, out: str | Path, **options: Any) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(interactive_graph_html(index, **options), encoding="utf-8")
    return out
