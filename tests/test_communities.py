"""Hierarchical Leiden (graspologic): determinism and a consistent hierarchy."""

from __future__ import annotations

import random

import networkx as nx
import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.graph.communities import communities_table, detect_communities


def karate() -> nx.Graph:
    """Zachary's karate club: 34 people, weighted ties, node ids as strings."""
    graph = nx.Graph()
    for a, b, data in nx.karate_club_graph().edges(data=True):
        graph.add_edge(f"p{a:02d}", f"p{b:02d}", weight=float(data["weight"]))
    return graph


def planted(seed: int = 3) -> nx.Graph:
    """60 nodes in 12 dense blocks of 5 (grouped 3 by 3), sparse links between, 2 isolated."""
    rng = random.Random(seed)
    graph = nx.Graph()
    nodes = [f"n{i:02d}" for i in range(60)]
    graph.add_nodes_from(nodes + ["isolated-1", "isolated-2"])
    for i, a in enumerate(nodes):
        for j in range(i + 1, len(nodes)):
            b = nodes[j]
            if i // 5 == j // 5 and rng.random() < 0.9:
                graph.add_edge(a, b, weight=5.0)
            elif i // 15 == j // 15 and i // 5 != j // 5 and rng.random() < 0.25:
                graph.add_edge(a, b, weight=1.0)
    for a, b in [("n00", "n20"), ("n17", "n33"), ("n40", "n59"), ("n05", "n48")]:
        graph.add_edge(a, b, weight=1.0)
    return graph


def tables_for(graph: nx.Graph) -> tuple[pd.DataFrame, pd.DataFrame]:
    nodes = sorted(graph.nodes)
    entities = pd.DataFrame(
        {S.ID: nodes, S.TEXT_UNIT_IDS: [[f"unit-{n}", "shared-unit"] for n in nodes]}
    )
    edges = sorted(graph.edges)
    relationships = pd.DataFrame(
        {
            S.ID: [f"r-{a}-{b}" for a, b in edges],
            "source_id": [a for a, _ in edges],
            "target_id": [b for _, b in edges],
        }
    )
    return entities, relationships


def check_hierarchy(
    table: pd.DataFrame, graph: nx.Graph, max_cluster_size: int, relationships: pd.DataFrame
) -> None:
    rows = table.set_index(S.COMMUNITY)
    assert table[S.COMMUNITY].tolist() == list(range(len(table)))
    assert table[S.ID].is_unique
    assert table[S.LEVEL].is_monotonic_increasing  # parents before children

    for community, row in rows.iterrows():
        members = set(row[S.ENTITY_IDS])
        assert row[S.SIZE] == len(members) == len(row[S.ENTITY_IDS]) > 0
        if row[S.LEVEL] == 0:
            assert row[S.PARENT] == -1
        else:
            parent = rows.loc[row[S.PARENT]]
            assert parent[S.LEVEL] == row[S.LEVEL] - 1
            assert community in parent[S.CHILDREN]
            assert members <= set(parent[S.ENTITY_IDS])
        children = table[table[S.PARENT] == community][S.COMMUNITY].tolist()
        assert sorted(row[S.CHILDREN]) == children
        if children:
            # the children split the parent exactly
            split = [m for c in children for m in rows.loc[c, S.ENTITY_IDS]]
            assert sorted(split) == sorted(members)
            assert len(children) >= 2

    non_isolated = sorted(n for n in graph.nodes if graph.degree(n) > 0)
    level0 = [m for ms in table[table[S.LEVEL] == 0][S.ENTITY_IDS] for m in ms]
    assert sorted(level0) == non_isolated  # every connected node once, isolated ones in none
    for level in table[S.LEVEL].unique():
        at_level = [m for ms in table[table[S.LEVEL] == level][S.ENTITY_IDS] for m in ms]
        assert len(at_level) == len(set(at_level))

    pairs = list(
        zip(
            relationships[S.ID], relationships["source_id"], relationships["target_id"], strict=True
        )
    )
    for row in table.itertuples(index=False):
        inside = set(getattr(row, S.ENTITY_IDS))
        expected = [r for r, a, b in pairs if a in inside and b in inside]
        assert getattr(row, S.RELATIONSHIP_IDS) == expected
        units = getattr(row, S.TEXT_UNIT_IDS)
        assert set(units) == {f"unit-{m}" for m in inside} | {"shared-unit"}
        assert len(units) == len(set(units))


def test_karate_hierarchy_is_consistent_and_splits_large_clusters() -> None:
    graph = karate()
    clusters = detect_communities(graph, max_cluster_size=10, seed=42)
    table = communities_table(clusters, *tables_for(graph))
    check_hierarchy(table, graph, 10, tables_for(graph)[1])
    assert table[S.LEVEL].max() >= 1
    # on this graph every cluster above the limit can be split, and is, one level down
    for row in table.itertuples(index=False):
        if getattr(row, S.SIZE) > 10:
            assert getattr(row, S.CHILDREN), f"community {getattr(row, S.COMMUNITY)} not split"
    level0 = table[table[S.LEVEL] == 0]
    assert 3 <= len(level0) <= 6


@pytest.mark.parametrize("max_cluster_size", [4, 10])
def test_planted_blocks_are_found(max_cluster_size: int) -> None:
    graph = planted()
    clusters = detect_communities(graph, max_cluster_size, seed=7)
    entities, relationships = tables_for(graph)
    table = communities_table(clusters, entities, relationships)
    check_hierarchy(table, graph, max_cluster_size, relationships)
    level0 = {tuple(m) for m in table[table[S.LEVEL] == 0][S.ENTITY_IDS]}
    blocks = {tuple(f"n{i:02d}" for i in range(b * 5, b * 5 + 5)) for b in range(12)}
    assert level0 == blocks


def test_same_seed_gives_identical_tables() -> None:
    graph = karate()
    entities, relationships = tables_for(graph)
    runs = [
        communities_table(
            detect_communities(graph, 4, seed=0xDEADBEEF),
            entities,
            relationships,
        )
        for _ in range(2)
    ]
    pd.testing.assert_frame_equal(runs[0], runs[1])
    assert runs[0][S.LEVEL].max() >= 2  # a deep hierarchy, still identical


def test_graph_without_edges_has_no_communities() -> None:
    # Isolated entities belong to no community, as they do beside edges.
    graph = nx.Graph()
    graph.add_nodes_from(["b", "a"])
    assert detect_communities(graph) == []
    assert detect_communities(nx.Graph()) == []
