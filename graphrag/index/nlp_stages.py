"""The stages of ``index.method = "nlp"``: extraction, graph and template reports with no LLM
call; the other stages are the LLM pipeline's, so every query method reads the index alike.
"""

from __future__ import annotations

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.nlp import (
    DESCRIPTION_CHARS,
    extract_graph_nlp,
    keep_frequent,
    pmi_weights,
    trim_text,
)
from graphrag.index.graph.merge import (
    add_degrees,
    entity_edges,
    merge_entities,
    merge_relationships,
    node_degrees,
)
from graphrag.index.run_summary import Tables
from graphrag.index.stages import IndexContext, template_reports, with_graph


def nlp_extract_stage(tables: Tables, ctx: IndexContext) -> Tables:
    settings = ctx.settings.index
    entity_mentions, relationship_mentions, errors, dropped = extract_graph_nlp(
        tables["text_units"], settings
    )
    entity_mentions, relationship_mentions = keep_frequent(
        entity_mentions, relationship_mentions, settings.nlp_min_chunks
    )
    n_chunks = len(tables["text_units"])
    relationship_mentions = pmi_weights(relationship_mentions, entity_mentions, n_chunks)
    return {
        **tables,
        "entity_mentions": entity_mentions,
        "relationship_mentions": relationship_mentions,
        "dropped": dropped,
        "errors": errors,
    }


def nlp_graph(
    entity_mentions: pd.DataFrame, relationship_mentions: pd.DataFrame, description_chars: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships): merged mentions, descriptions joined and trimmed."""
    entities = merge_entities(entity_mentions)
    relationships = merge_relationships(relationship_mentions, entities)
    entities[S.DESCRIPTION] = [
        trim_text(" ".join(d), description_chars) for d in entities["descriptions"]
    ]
    entities = entities.drop(columns=["descriptions"])
    degrees = node_degrees(entities, entity_edges(entities, relationships))
    return add_degrees(entities, relationships, degrees)


def nlp_graph_stage(tables: Tables, ctx: IndexContext) -> Tables:
    entities, relationships = nlp_graph(
        tables["entity_mentions"], tables["relationship_mentions"], 2 * DESCRIPTION_CHARS
    )
    return with_graph(tables, entities, relationships)


def template_reports_stage(tables: Tables, ctx: IndexContext) -> Tables:
    reports = template_reports(tables["communities"], tables, "co-occurrence ")
    return {**tables, "community_reports": reports}
