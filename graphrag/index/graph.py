"""Merge entity and relationship mentions into the entities/relationships tables and a graph."""

from __future__ import annotations

import hashlib
from collections import Counter

import networkx as nx
import pandas as pd

from graphrag import prompts, tokens
from graphrag.config import IndexSettings
from graphrag.index import schemas as S
from graphrag.index.llm_stage import error_row, error_table, run_llm_stage
from graphrag.llm import ChatLLM


def _stable_id(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _most_common(values: pd.Series) -> str:
    """Return the most frequent value; ties go to the first seen, so merges are stable."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in values if counts[v] == best)


def _unique(values) -> list:  # noqa: ANN001 - any iterable of hashables
    return list(dict.fromkeys(v for v in values if v))


def merge_entities(mentions: pd.DataFrame) -> pd.DataFrame:
    """Return one row per name key: display title, type, distinct descriptions, text units.

    The title is the most frequent surface form and the type the most frequent known type;
    ``S.DESCRIPTIONS`` keeps every distinct description until :func:`summarize_entities`.
    """
    rows = []
    for key, group in mentions.groupby(S.NAME_KEY, sort=True):
        known = group[group[S.TYPE] != "unknown"][S.TYPE]
        rows.append(
            {
                S.ID: _stable_id("entity", key),
                S.TITLE: _most_common(group[S.TITLE]),
                S.NAME_KEY: key,
                S.TYPE: _most_common(known) if len(known) else "unknown",
                S.DESCRIPTIONS: _unique(group[S.DESCRIPTION]),
                S.TEXT_UNIT_IDS: _unique(group[S.TEXT_UNIT_ID]),
            }
        )
    frame = pd.DataFrame(
        rows, columns=[S.ID, S.TITLE, S.NAME_KEY, S.TYPE, S.DESCRIPTIONS, S.TEXT_UNIT_IDS]
    )
    frame[S.FREQUENCY] = frame[S.TEXT_UNIT_IDS].map(len)
    return frame


def merge_relationships(mentions: pd.DataFrame, entities: pd.DataFrame) -> pd.DataFrame:
    """Return one row per unordered entity pair; weight is the sum of mention strengths."""
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
                S.ID: _stable_id("relationship", *pair),
                S.SOURCE_ENTITY: title_of[source],
                S.TARGET_ENTITY: title_of[target],
                S.SOURCE_ID: id_of[source],
                S.TARGET_ID: id_of[target],
                S.DESCRIPTION: "; ".join(_unique(group[S.DESCRIPTION])),
                S.WEIGHT: float(group[S.STRENGTH].sum()),
                S.TEXT_UNIT_IDS: _unique(group[S.TEXT_UNIT_ID]),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            S.ID,
            S.SOURCE_ENTITY,
            S.TARGET_ENTITY,
            S.SOURCE_ID,
            S.TARGET_ID,
            S.DESCRIPTION,
            S.WEIGHT,
            S.TEXT_UNIT_IDS,
        ],
    )


async def _summary(llm: ChatLLM, title: str, descriptions: list[str], max_tokens: int) -> str:
    return await llm.atext(
        prompts.summarize_descriptions(title, descriptions),
        name="description_summary",
        max_tokens=max_tokens,
    )


def needs_summary(descriptions: list[str], threshold_tokens: int) -> bool:
    """Return whether the joined descriptions exceed ``threshold_tokens`` (0: always)."""
    if threshold_tokens <= 0:
        return True
    return tokens.count_tokens(" ".join(descriptions)) > threshold_tokens


def summarize_entities(
    entities: pd.DataFrame, llm: ChatLLM, settings: IndexSettings, progress: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities with one ``description``, errors): the LLM merges several, and only then.

    With ``settings.summary_threshold_tokens`` > 0, several descriptions are merged by the LLM
    only when their joined text is longer than that many tokens; shorter ones are joined as
    they are (nano-graphrag's rule: a call saved where the joined text is short anyway).
    A summary that fails (or comes back empty, or cut off) keeps the joined descriptions, so
    no fact is lost, and is an errors row (stage "summarize"), so the next run asks again.
    """
    entities = entities.copy()
    several = [
        i
        for i, d in enumerate(entities[S.DESCRIPTIONS])
        if len(d) > 1 and needs_summary(d, settings.summary_threshold_tokens)
    ]
    results, errors = run_llm_stage(
        "summarize",
        [entities[S.ID].iloc[i] for i in several],
        [
            _summary(
                llm,
                entities[S.TITLE].iloc[i],
                entities[S.DESCRIPTIONS].iloc[i],
                settings.summary_max_tokens,
            )
            for i in several
        ],
        progress,
    )
    descriptions = [" ".join(d) for d in entities[S.DESCRIPTIONS]]
    for i, result in zip(several, results, strict=True):
        if result:
            descriptions[i] = result
        elif result is not None:  # an empty summary is no summary: keep the joined text
            errors.append(error_row("summarize", entities[S.ID].iloc[i], "empty summary"))
    entities[S.DESCRIPTION] = descriptions
    return entities.drop(columns=[S.DESCRIPTIONS]), error_table(errors)


def build_graph(entities: pd.DataFrame, relationships: pd.DataFrame) -> nx.Graph:
    """Return the undirected entity graph: nodes keyed by entity id, edges weighted."""
    graph = nx.Graph()
    graph.add_nodes_from(
        (node, {S.TITLE: title, S.TYPE: kind, S.DESCRIPTION: description})
        for node, title, kind, description in zip(
            entities[S.ID],
            entities[S.TITLE],
            entities[S.TYPE],
            entities[S.DESCRIPTION],
            strict=True,
        )
    )
    graph.add_edges_from(
        (source, target, {S.ID: rid, S.WEIGHT: weight, S.DESCRIPTION: description})
        for source, target, rid, weight, description in zip(
            relationships[S.SOURCE_ID],
            relationships[S.TARGET_ID],
            relationships[S.ID],
            relationships[S.WEIGHT],
            relationships[S.DESCRIPTION],
            strict=True,
        )
    )
    return graph


def add_degrees(
    entities: pd.DataFrame, relationships: pd.DataFrame, graph: nx.Graph
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the tables with node degree and relationship combined degree filled in."""
    degree = dict(graph.degree())
    entities = entities.assign(**{S.DEGREE: entities[S.ID].map(degree).fillna(0).astype(int)})
    relationships = relationships.assign(
        **{
            S.COMBINED_DEGREE: [
                degree.get(s, 0) + degree.get(t, 0)
                for s, t in zip(relationships[S.SOURCE_ID], relationships[S.TARGET_ID], strict=True)
            ]
        }
    )
    for frame in (entities, relationships):
        frame.insert(1, S.HUMAN_ID, range(len(frame)))
    return entities, relationships
