"""The index folder: parquet tables, GraphML and the manifest, and clear load errors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import networkx as nx
import pandas as pd
import pytest
from conftest import plain_frame

from graphrag import schemas as S
from graphrag.index.graph.communities import communities_table, detect_communities
from graphrag.index.graph.merge import add_degrees, build_graph
from graphrag.index.reports.write import REPORT_COLUMNS
from graphrag.index.store import GRAPHML, MANIFEST, IndexLoadError, load_index, write_index
from graphrag.stores.parquet_folder import FORMAT_VERSION


@pytest.fixture
def tables() -> dict[str, pd.DataFrame]:
    """A small but complete set of index tables."""
    documents = pd.DataFrame(
        {
            S.ID: ["d1", "d2"],
            S.HUMAN_ID: [0, 1],
            S.TITLE: ["One", "Two"],
            S.TEXT: ["Ann met Bob.", "Cy met Di. Ed watched."],
            S.SOURCE: ["/c/d1.md", "/c/d2.md"],
            S.TEXT_UNIT_IDS: [["t1"], ["t2"]],
        }
    )
    text_units = pd.DataFrame(
        {
            S.ID: ["t1", "t2"],
            S.HUMAN_ID: [0, 1],
            S.TEXT: ["Ann met Bob.", "Cy met Di. Ed watched."],
            S.N_TOKENS: [4, 7],
            S.DOCUMENT_IDS: [["d1"], ["d2"]],
            S.START_TOKEN: [0, 0],
            S.TEXT_EMBEDDING: [[0.6, 0.8], [1.0, 0.0]],
        }
    )
    names = ["ann", "bob", "cy", "di", "ed", "flo"]
    entities = pd.DataFrame(
        {
            S.ID: names,
            S.TITLE: [n.title() for n in names],
            S.NAME_KEY: names,
            S.TYPE: ["person"] * 6,
            S.DESCRIPTION: [f"{n} is a person" for n in names],
            S.TEXT_UNIT_IDS: [["t1"], ["t1"], ["t2"], ["t2"], ["t2"], []],
            S.FREQUENCY: [1, 1, 1, 1, 1, 0],
        }
    )
    pairs = [("ann", "bob"), ("cy", "di"), ("di", "ed"), ("cy", "ed")]
    relationships = pd.DataFrame(
        {
            S.ID: [f"r{i}" for i in range(4)],
            S.SOURCE_ENTITY: [a.title() for a, _ in pairs],
            S.TARGET_ENTITY: [b.title() for _, b in pairs],
            "source_id": [a for a, _ in pairs],
            "target_id": [b for _, b in pairs],
            S.DESCRIPTION: ["met"] * 4,
            S.WEIGHT: [3.0, 5.0, 1.0, 2.0],
            S.TEXT_UNIT_IDS: [["t1"], ["t2"], ["t2"], ["t2"]],
        }
    )
    graph = build_graph(entities, relationships)
    entities, relationships = add_degrees(entities, relationships, dict(graph.degree()))
    communities = communities_table(detect_communities(graph, 10, 1), entities, relationships)
    reports = pd.DataFrame(
        [
            {
                S.ID: row[S.ID],
                S.HUMAN_ID: row[S.HUMAN_ID],
                S.COMMUNITY: row[S.COMMUNITY],
                S.LEVEL: row[S.LEVEL],
                S.PARENT: row[S.PARENT],
                S.CHILDREN: row[S.CHILDREN],
                S.TITLE: f"Report {row[S.COMMUNITY]}",
                S.SUMMARY: "s",
                S.FULL_CONTENT: f"# Report {row[S.COMMUNITY]}\n\ns",
                S.RANK: 5.0,
                S.RATING_EXPLANATION: "r",
                S.FINDINGS: [{"summary": "f", "explanation": "e"}],
                S.SIZE: row[S.SIZE],
                S.CONTEXT_SOURCE: "entities",
            }
            for row in communities.to_dict("records")
        ],
        columns=REPORT_COLUMNS,
    )
    errors = pd.DataFrame(
        [{S.STAGE: "extract", S.ITEM_ID: "t9", S.ERROR: "LLMError: boom"}],
        columns=S.ERROR_COLUMNS,
    )
    return {
        "documents": documents,
        "text_units": text_units,
        "entities": entities,
        "relationships": relationships,
        "communities": communities,
        "community_reports": reports,
        "errors": errors,
        "dropped": pd.DataFrame(
            {S.TEXT_UNIT_ID: ["u1"], "name": ["Lena Ortiz"], S.REASON: ["not in its chunk"]}
        ),
    }


def test_write_then_load_round_trip(tmp_path: Path, tables: dict) -> None:
    manifest = {"llm_model": "m", "summary": {"counts": {"documents": 2}}}
    out = write_index(tables, tmp_path / "index", manifest)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{name}.parquet" for name in S.TABLES] + [GRAPHML, MANIFEST]
    )
    index = load_index(out)
    assert index.path == out
    assert {k: v for k, v in index.manifest.items() if k in manifest} == manifest
    assert index.manifest["format_version"] == FORMAT_VERSION
    assert {n: t["rows"] for n, t in index.manifest["tables"].items()} == {
        n: len(tables[n]) for n in S.TABLES
    }
    for name in S.TABLES:
        loaded = getattr(index, name)
        assert list(loaded.columns) == list(tables[name].columns), name
        assert plain_frame(loaded) == plain_frame(tables[name]), name
    # the folder is readable with pandas alone
    on_disk = pd.read_parquet(out / "entities.parquet")
    assert on_disk[S.ID].tolist() == tables["entities"][S.ID].tolist()
    graph = index.graph()
    assert set(graph.nodes) == set(tables["entities"][S.ID])
    assert graph.number_of_edges() == 4


def test_graphml_is_readable_by_networkx(tmp_path: Path, tables: dict) -> None:
    out = write_index(tables, tmp_path / "index", {})
    graph = nx.read_graphml(out / GRAPHML)
    entities = tables["entities"]
    assert set(graph.nodes) == set(entities[S.ID])
    assert graph.number_of_edges() == len(tables["relationships"])
    assert graph.edges["cy", "di"]["weight"] == 5.0
    assert graph.nodes["ann"]["title"] == "Ann"
    degrees = dict(zip(entities[S.ID], entities[S.DEGREE], strict=True))
    assert {n: d["degree"] for n, d in graph.nodes(data=True)} == degrees
    communities = tables["communities"]
    for row in communities[communities[S.LEVEL] == 0].itertuples(index=False):
        for node in getattr(row, S.ENTITY_IDS):
            assert graph.nodes[node]["community_level_0"] == getattr(row, S.COMMUNITY)
    assert "community_level_0" not in graph.nodes["flo"]  # isolated: no community


def test_missing_errors_table_is_written_and_loaded_empty(tmp_path: Path, tables: dict) -> None:
    del tables["errors"], tables["dropped"]
    out = write_index(tables, tmp_path / "index", {})
    index = load_index(out)
    assert index.errors.empty and list(index.errors.columns) == S.ERROR_COLUMNS
    assert index.dropped.empty and S.REASON in index.dropped.columns


def test_missing_folder_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-index"
    with pytest.raises(IndexLoadError, match=f"index folder {missing} does not exist"):
        load_index(missing)


def test_missing_table_is_named(tmp_path: Path, tables: dict) -> None:
    out = write_index(tables, tmp_path / "index", {})
    (out / "entities.parquet").unlink()
    with pytest.raises(IndexLoadError, match=r"entities\.parquet is missing") as info:
        load_index(out)
    assert str(out) in str(info.value)


def test_corrupt_table_is_named(tmp_path: Path, tables: dict) -> None:
    out = write_index(tables, tmp_path / "index", {})
    path = out / "relationships.parquet"
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(IndexLoadError, match=f"{path} is corrupt"):
        load_index(out)
    path.write_bytes(b"not parquet at all")
    with pytest.raises(IndexLoadError, match=f"{path} is corrupt"):
        load_index(out)


def test_corrupt_manifest_and_foreign_tables_are_named(tmp_path: Path, tables: dict) -> None:
    out = write_index(tables, tmp_path / "index", {"a": 1})
    good = (out / MANIFEST).read_text()
    (out / MANIFEST).write_text("{not json")
    with pytest.raises(IndexLoadError, match=f"{out / MANIFEST} is corrupt"):
        load_index(out)
    (out / MANIFEST).unlink()
    with pytest.raises(IndexLoadError, match=f"{out / MANIFEST} is missing"):
        load_index(out)
    (out / MANIFEST).write_text(good)

    tables["entities"].drop(columns=[S.DESCRIPTION]).to_parquet(out / "entities.parquet")
    with pytest.raises(IndexLoadError, match=r"entities\.parquet is corrupt.*sha256 differs"):
        load_index(out)
    # a table rewritten by other code, with the manifest updated to match: named by column
    listed = json.loads(good)
    listed["tables"]["entities"]["sha256"] = hashlib.sha256(
        (out / "entities.parquet").read_bytes()
    ).hexdigest()
    (out / MANIFEST).write_text(json.dumps(listed))
    with pytest.raises(IndexLoadError, match=r"entities\.parquet lacks columns \['description'\]"):
        load_index(out)


def test_manifest_is_plain_json(tmp_path: Path, tables: dict) -> None:
    out = write_index(tables, tmp_path / "index", {"out": tmp_path, "n": 2})
    on_disk = json.loads((out / MANIFEST).read_text())
    assert (on_disk["out"], on_disk["n"]) == (str(tmp_path), 2)
