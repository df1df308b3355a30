"""The interactive graph page: offline, complete, coloured and filtered by community."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

from workbench.cli import main
from workbench.report.graph_page import community_of, interactive_graph_html


class _Resources(HTMLParser):
    """Collects every URL an HTML page would fetch (scripts, styles, images, frames)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for attribute in ("src", "href") if tag in {"script", "link", "img", "iframe"} else ():
            if found.get(attribute):
                self.urls.append(found[attribute] or "")
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.inline_scripts.append(data)


def _datasets(html: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return the node and edge lists the page hands to vis-network."""
    nodes, edges = re.findall(r"new vis\.DataSet\((\[.*?\])\);", html)[:2]
    return json.loads(nodes), json.loads(edges)


def test_page_fetches_nothing_and_carries_vis_network_inline(demo_index: Any) -> None:
    html = interactive_graph_html(demo_index)
    page = _Resources()
    page.feed(html)
    remote = [u for u in page.urls if re.match(r"(https?:)?//", u)]
    assert remote == [], f"the page would fetch {remote}"
    code = "\n".join(page.inline_scripts)
    # the library itself, and the filter menu's, are in the page, not behind a URL
    assert "vis-network" in code and "new vis.Network(" in code
    assert "TomSelect" in code


def test_every_entity_and_relationship_is_drawn_with_its_description_and_sources(
    demo_index: Any,
) -> None:
    nodes, edges = _datasets(interactive_graph_html(demo_index, level=0))
    entities = demo_index.entities
    assert len(nodes) == len(entities)
    assert len(edges) == demo_index.graph().number_of_edges()
    by_title = {n["id"]: n for n in nodes}
    units = demo_index.text_units.set_index("id")["document_ids"]
    membership = community_of(demo_index, 0)
    for row in entities.itertuples(index=False):
        node = by_title[row.title]
        assert row.description in node["title"]
        assert all(unit in node["title"] for unit in row.text_unit_ids)
        assert all(doc in node["title"] for unit in row.text_unit_ids for doc in units[unit])
        assert node["community"] == str(membership.get(row.id, "none"))
    assert all("text units: " in e["title"] for e in edges)


def test_colour_follows_the_chosen_level_and_a_community_filter_keeps_its_members(
    demo_index: Any,
) -> None:
    levels = sorted(demo_index.communities["level"].unique())
    deepest = levels[-1]
    nodes, _ = _datasets(interactive_graph_html(demo_index, level=deepest))
    membership = community_of(demo_index, deepest)
    title_of = dict(zip(demo_index.entities["id"], demo_index.entities["title"], strict=True))
    colours: dict[str, set[str]] = {}
    for node in nodes:
        colours.setdefault(node["community"], set()).add(node["color"])
    assert all(len(c) == 1 for c in colours.values())  # one colour per community
    expected = {str(c) for c in membership.values()}
    assert expected <= set(colours)

    chosen = sorted(set(membership.values()))[0]
    members = {title_of[e] for e, c in membership.items() if c == chosen}
    kept, edges = _datasets(interactive_graph_html(demo_index, level=deepest, communities=[chosen]))
    assert {n["id"] for n in kept} == members
    assert all(e["from"] in members and e["to"] in members for e in edges)


def test_cli_graph_writes_the_page(demo_index: Any, tmp_path: Any, capsys: Any) -> None:
    out = tmp_path / "graph.html"
    assert main(["graph", "--index", str(demo_index.path), "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    nodes, _ = _datasets(out.read_text(encoding="utf-8"))
    assert len(nodes) == len(demo_index.entities)
