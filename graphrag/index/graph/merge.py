"""Merge entity and relationship mentions into the entities/relationships tables and a graph."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.grounding import ground_mentions
from graphrag.index.graph.aliases import find_alias_pairs, merge_alias_mentions
from graphrag.index.graph.sentence_edges import add_sentence_edges
from graphrag.index.ids import stable_id
from graphrag.index.llm_stage import error_row, error_table, run_llm_stage
from graphrag.llm.client import ChatLLM
from graphrag.prompts import Messages
from graphrag.settings import IndexSettings
from graphrag.stores.igraph_graph import IGraphStore
from graphrag.stores.protocols import Edge
from graphrag.text import lang, tokens

SUMMARY_INPUT_TOKENS = 1500  # descriptions packed into one summary's input
SUMMARY_MAX_TOKENS = 200  # a description summary's output budget
SUMMARY_WORDS = SUMMARY_MAX_TOKENS * 3 // 5  # words asked for, so a reply ends before the cap
RELATIONSHIP_SUMMARY_MIN = 3  # summarize a pair's descriptions when there are more than this
RELATIONSHIP_SUMMARY_TOKENS = 150  # or when, joined, they are longer than this many tokens


def _most_common(values: pd.Series) -> str:
    """Return the most frequent value; ties go to the first seen, so merges are stable."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in values if counts[v] == best)


def _unique(values) -> list:  # noqa: ANN001 - any iterable of hashables
    return list(dict.fromkeys(v for v in values if v))


def _by_frequency(values) -> list[str]:  # noqa: ANN001 - any iterable of strings
    """Return the distinct values, most frequent first, then longest, then first seen: the
    order in which descriptions are packed into a summary's input budget."""
    counts = Counter(v for v in values if v)
    return sorted(counts, key=lambda v: (-counts[v], -len(v)))


def merge_entities(mentions: pd.DataFrame, by_frequency: bool = False) -> pd.DataFrame:
    """Return one row per name key: most frequent title and known type, distinct descriptions
    (first seen first, or with ``by_frequency`` most frequent first), text units."""
    distinct = _by_frequency if by_frequency else _unique
    rows = []
    for key, group in mentions.groupby(S.NAME_KEY, sort=True):
        known = group[group[S.TYPE] != "unknown"][S.TYPE]
        rows.append(
            {
                S.ID: stable_id("entity", key),
                S.TITLE: _most_common(group[S.TITLE]),
                S.NAME_KEY: key,
                S.TYPE: _most_common(known) if len(known) else "unknown",
                S.DESCRIPTIONS: distinct(group[S.DESCRIPTION]),
                S.TEXT_UNIT_IDS: _unique(group[S.TEXT_UNIT_ID]),
            }
        )
    frame = pd.DataFrame(
        rows, columns=[S.ID, S.TITLE, S.NAME_KEY, S.TYPE, S.DESCRIPTIONS, S.TEXT_UNIT_IDS]
    )
    frame[S.FREQUENCY] = frame[S.TEXT_UNIT_IDS].map(len)
    return frame


def merge_relationships(
    mentions: pd.DataFrame, entities: pd.DataFrame, keep_descriptions: bool = False
) -> pd.DataFrame:
    """Return one row per unordered entity pair: weight the sum of strengths, description the
    distinct ones joined by "; " (``keep_descriptions`` also keeps the list for summaries)."""
    title_of = dict(zip(entities[S.NAME_KEY], entities[S.TITLE], strict=True))
    id_of = dict(zip(entities[S.NAME_KEY], entities[S.ID], strict=True))
    mentions = mentions.copy()
    mentions["pair"] = [
        tuple(sorted(p)) for p in zip(mentions[S.SOURCE_KEY], mentions[S.TARGET_KEY], strict=True)
    ]
    rows = []
    for pair, group in mentions.groupby("pair", sort=True):
        first = group.iloc[0]  # keep the direction in which the pair was first stated
        source, target = first[S.SOURCE_KEY], first[S.TARGET_KEY]
        rows.append(
            {
                S.ID: stable_id("relationship", *pair),
                S.SOURCE_ENTITY: title_of[source],
                S.TARGET_ENTITY: title_of[target],
                S.SOURCE_ID: id_of[source],
                S.TARGET_ID: id_of[target],
                S.DESCRIPTION: "; ".join(_unique(group[S.DESCRIPTION])),
                S.WEIGHT: float(group[S.STRENGTH].sum()),
                S.TEXT_UNIT_IDS: _unique(group[S.TEXT_UNIT_ID]),
                S.DESCRIPTIONS: _by_frequency(group[S.DESCRIPTION]),
            }
        )
    ends = [S.SOURCE_ENTITY, S.TARGET_ENTITY, S.SOURCE_ID, S.TARGET_ID]
    columns = [S.ID, *ends, S.DESCRIPTION, S.WEIGHT, S.TEXT_UNIT_IDS]
    return pd.DataFrame(rows, columns=columns + [S.DESCRIPTIONS] * keep_descriptions)


def merge_graph_mentions(
    entity_mentions: pd.DataFrame,
    relationship_mentions: pd.DataFrame,
    text_units: pd.DataFrame,
    settings: IndexSettings,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships, dropped) merged from the mentions, aliases merged, grounding
    and sentence edges as the settings ask."""
    dropped = pd.DataFrame(columns=S.DROPPED_COLUMNS)
    if settings.ground_descriptions:
        entity_mentions, lost_entities = ground_mentions(entity_mentions, text_units, [S.TITLE])
        relationship_mentions, lost_relationships = ground_mentions(
            relationship_mentions, text_units, [S.SOURCE_KEY, S.TARGET_KEY]
        )
        dropped = pd.concat([lost_entities, lost_relationships], ignore_index=True)
    pairs = find_alias_pairs(entity_mentions, text_units)
    entity_mentions, relationship_mentions, loops = merge_alias_mentions(
        entity_mentions, relationship_mentions, pairs
    )
    dropped = pd.concat([dropped, loops], ignore_index=True)
    entities = merge_entities(entity_mentions, by_frequency=True)
    relationships = merge_relationships(relationship_mentions, entities, keep_descriptions=True)
    relationships = add_sentence_edges(
        relationships, entities, entity_mentions, text_units, settings.sentence_edges_max_entities
    )
    return entities, relationships, dropped


def needs_summary(descriptions: list[str], threshold_tokens: int) -> bool:
    """Return whether the joined descriptions exceed ``threshold_tokens`` (0: always)."""
    if threshold_tokens <= 0:
        return True
    return tokens.count_tokens(" ".join(descriptions)) > threshold_tokens


def packed_descriptions(descriptions: list[str], budget: int) -> list[str]:
    """Return the descriptions, in order, that still fit ``budget`` tokens as "- " bullets."""
    return [descriptions[i] for i in tokens.pack(descriptions, budget, overhead=2)]


def _summarize_rows(
    frame, rows: list[int], messages: list[Messages], fallback, stage, llm, progress
):
    """Return each row's description (``fallback`` unless summarized) and the error rows: a
    failed or empty summary keeps the fallback and is an errors row, so the next run asks."""
    calls = [
        llm.atext(m, name="description_summary", max_tokens=SUMMARY_MAX_TOKENS) for m in messages
    ]
    results, errors = run_llm_stage(stage, [frame[S.ID].iloc[i] for i in rows], calls, progress)
    descriptions = list(fallback)
    for i, result in zip(rows, results, strict=True):
        if result:
            descriptions[i] = result
        elif result is not None:  # an empty summary is no summary: keep the joined text
            errors.append(error_row(stage, frame[S.ID].iloc[i], "empty summary"))
    return descriptions, errors


def fact_texts(relationships: pd.DataFrame) -> list[str]:
    """Return each relationship as a fact, "source -> target: description" (for PPR)."""
    columns = (relationships[c] for c in (S.SOURCE_ENTITY, S.TARGET_ENTITY, S.DESCRIPTION))
    return [f"{s} -> {t}: {d}" for s, t, d in zip(*columns, strict=True)]


def summarize_entities(
    entities: pd.DataFrame, llm: ChatLLM, settings: IndexSettings, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities with one ``description``, errors): the LLM merges several descriptions
    when joined they exceed ``summary_threshold_tokens``; the rest are joined as they are."""
    entities = entities.copy()
    several = [
        i
        for i, d in enumerate(entities[S.DESCRIPTIONS])
        if len(d) > 1 and needs_summary(d, settings.summary_threshold_tokens)
    ]
    messages = []
    for i in several:
        title = entities[S.TITLE].iloc[i]
        listed = packed_descriptions(entities[S.DESCRIPTIONS].iloc[i], SUMMARY_INPUT_TOKENS)
        language = lang.detect(" ".join([title, *listed]))
        messages.append(prompts.summarize_descriptions(title, listed, SUMMARY_WORDS, language))
    joined = [" ".join(d) for d in entities[S.DESCRIPTIONS]]
    descriptions, errors = _summarize_rows(
        entities, several, messages, joined, "summarize", llm, progress
    )
    entities[S.DESCRIPTION] = descriptions
    return entities.drop(columns=[S.DESCRIPTIONS]), error_table(errors)


def summarize_relationships(
    relationships: pd.DataFrame, llm: ChatLLM, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (relationships with one ``description``, errors): a pair with many or long
    descriptions gets an LLM summary; the rest keep the "; " join."""
    many = [
        i
        for i, d in enumerate(relationships[S.DESCRIPTIONS])
        if len(d) > RELATIONSHIP_SUMMARY_MIN
        or (len(d) > 1 and tokens.count_tokens("; ".join(d)) > RELATIONSHIP_SUMMARY_TOKENS)
    ]
    messages = []
    for i in many:
        source = relationships[S.SOURCE_ENTITY].iloc[i]
        target = relationships[S.TARGET_ENTITY].iloc[i]
        listed = packed_descriptions(relationships[S.DESCRIPTIONS].iloc[i], SUMMARY_INPUT_TOKENS)
        language = lang.detect(" ".join([source, target, *listed]))
        messages.append(
            prompts.summarize_relationship(source, target, listed, SUMMARY_WORDS, language)
        )
    joined, stage = list(relationships[S.DESCRIPTION]), "summarize_relationships"
    descriptions, errors = _summarize_rows(
        relationships, many, messages, joined, stage, llm, progress
    )
    relationships = relationships.assign(**{S.DESCRIPTION: descriptions})
    return relationships.drop(columns=[S.DESCRIPTIONS]), error_table(errors)


def build_graph(entities: pd.DataFrame, relationships: pd.DataFrame) -> nx.Graph:
    """Return the undirected entity graph as networkx (for plots, notebooks and GraphML):
    nodes keyed by entity id, edges weighted."""
    graph = nx.Graph()
    node_data = entities.set_index(S.ID)[[S.TITLE, S.TYPE, S.DESCRIPTION]]
    graph.add_nodes_from(node_data.to_dict("index").items())
    for row in relationships.itertuples(index=False):
        data = {c: getattr(row, c) for c in (S.ID, S.WEIGHT, S.DESCRIPTION)}
        graph.add_edge(getattr(row, S.SOURCE_ID), getattr(row, S.TARGET_ID), **data)
    return graph


def entity_edges(entities: pd.DataFrame, relationships: pd.DataFrame) -> list[Edge]:
    """Return one edge per entity pair (its last row's weight), in the order a networkx graph of the
    tables lists them: Leiden reads edges in order, so communities stay those first built."""
    adjacency: dict[str, dict[str, float]] = {e: {} for e in entities[S.ID]}
    rows = (relationships[c] for c in (S.SOURCE_ID, S.TARGET_ID, S.WEIGHT))
    for source, target, weight in zip(*rows, strict=True):
        adjacency.setdefault(source, {})[target] = weight
        adjacency.setdefault(target, {})[source] = weight
    edges, seen = [], set()
    for node, neighbours in adjacency.items():
        edges += [(node, n, w) for n, w in neighbours.items() if n not in seen]
        seen.add(node)
    return edges


def node_degrees(entities: pd.DataFrame, edges: list[Edge]) -> dict[str, int]:
    """Return each node's degree in the igraph graph of ``edges``."""
    graph = IGraphStore(list(entities[S.ID]), edges)
    return dict(zip(graph.nodes(), graph.graph.degree(), strict=True))


def add_degrees(
    entities: pd.DataFrame, relationships: pd.DataFrame, degree: dict[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tables with node degree and relationship combined degree filled in."""
    entities = entities.assign(**{S.DEGREE: entities[S.ID].map(degree).fillna(0).astype(int)})
    ends = zip(relationships[S.SOURCE_ID], relationships[S.TARGET_ID], strict=True)
    combined = [degree.get(s, 0) + degree.get(t, 0) for s, t in ends]
    relationships = relationships.assign(**{S.COMBINED_DEGREE: combined})
    for frame in (entities, relationships):
        frame.insert(1, S.HUMAN_ID, range(len(frame)))
    return entities, relationships
