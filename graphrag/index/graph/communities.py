"""Hierarchical Leiden communities over the entity graph (graspologic, as Microsoft GraphRAG):
every community larger than ``max_cluster_size`` is split again one level down; same seed,
same communities."""

from __future__ import annotations

import warnings
from collections import defaultdict

import networkx as nx
import pandas as pd

from graphrag import schemas as S
from graphrag.index.ids import stable_id
from graphrag.stores.protocols import Edge

COMMUNITY_COLUMNS = [
    *S.COMMUNITY_KEY_COLUMNS,
    S.ENTITY_IDS,
    S.RELATIONSHIP_IDS,
    S.TEXT_UNIT_IDS,
    S.SIZE,
]

# (level, members, parent index or -1), in creation order
Cluster = tuple[int, list[str], int]


def detect_communities(
    graph: list[Edge] | nx.Graph, max_cluster_size: int = 10, seed: int = 0xDEADBEEF
) -> list[Cluster]:
    """Return the clusters (level, entity ids, parent position) of the hierarchy of the
    graph's edges (a list of (node, node, weight), or a networkx graph)."""
    if not (graph.number_of_edges() if isinstance(graph, nx.Graph) else graph):
        return []  # isolated entities belong to no community
    # imported here: graspologic takes about 5 s to import (scikit-learn, scipy, ...)
    from graspologic.partition import hierarchical_leiden

    with warnings.catch_warnings():
        # Isolated entities belong to no community; graspologic warns about each run.
        warnings.filterwarnings("ignore", message="Leiden partitions do not contain all nodes")
        assignments = hierarchical_leiden(
            graph, max_cluster_size=max_cluster_size, random_seed=seed, use_modularity=True
        )
    members: dict[int, list[str]] = defaultdict(list)
    info: dict[int, tuple[int, int | None]] = {}
    for item in assignments:
        members[item.cluster].append(item.node)
        info[item.cluster] = (item.level, item.parent_cluster)
    order = sorted(info, key=lambda c: (info[c][0], c))
    position = {c: i for i, c in enumerate(order)}
    return [
        (info[c][0], sorted(members[c]), -1 if info[c][1] is None else position[info[c][1]])
        for c in order
    ]


def communities_table(
    clusters: list[Cluster], entities: pd.DataFrame, relationships: pd.DataFrame
) -> pd.DataFrame:
    """Return the communities table: hierarchy links plus the entities, relationships and
    text units each community holds (a relationship belongs where both its ends do)."""
    units_of = dict(zip(entities[S.ID], entities[S.TEXT_UNIT_IDS], strict=True))
    edges = list(zip(*(relationships[c] for c in (S.ID, S.SOURCE_ID, S.TARGET_ID)), strict=True))
    children: dict[int, list[int]] = defaultdict(list)
    cluster_at: dict[int, dict[str, int]] = defaultdict(dict)  # level -> entity -> cluster
    for i, (level, members, parent) in enumerate(clusters):
        if parent >= 0:
            children[parent].append(i)
        for member in members:
            cluster_at[level][member] = i
    # One pass over the edges per level (clusters of a level are disjoint), not one per cluster.
    inside: dict[int, list[str]] = defaultdict(list)
    for by_entity in cluster_at.values():
        for relationship, source, target in edges:
            cluster = by_entity.get(source)
            if cluster is not None and by_entity.get(target) == cluster:
                inside[cluster].append(relationship)
    rows = []
    for i, (level, members, parent) in enumerate(clusters):
        units = list(dict.fromkeys(u for m in members for u in units_of.get(m, [])))
        cid = stable_id("community", str(level), ",".join(members))
        hierarchy = (cid, i, i, level, parent, children.get(i, []), f"Community {i}")
        rows.append((*hierarchy, members, inside.get(i, []), units, len(members)))
    return pd.DataFrame(rows, columns=COMMUNITY_COLUMNS)


def rolled_up_level(communities: pd.DataFrame, level: int) -> pd.DataFrame:
    """Return the communities covering the whole graph at ``level``: each entity in its deepest
    community at or above it (Microsoft GraphRAG's view), by community number."""
    deepest: dict[str, tuple[int, int]] = {}  # entity -> (level, community)
    for row in communities.itertuples(index=False):
        at = int(getattr(row, S.LEVEL))
        if at > level:
            continue
        community = int(getattr(row, S.COMMUNITY))
        for entity in getattr(row, S.ENTITY_IDS):
            if entity not in deepest or at > deepest[entity][0]:
                deepest[entity] = (at, community)
    chosen = {community for _, community in deepest.values()}
    return communities[communities[S.COMMUNITY].isin(chosen)].sort_values(S.COMMUNITY)
