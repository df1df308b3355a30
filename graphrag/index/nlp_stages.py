"""The stages of ``index.method = "nlp"``: extraction, graph and template reports with no LLM
call; the other stages are the LLM pipeline's, so every query method reads the index alike."""

from __future__ import annotations

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract import nlp
from graphrag.index.graph import merge
from graphrag.index.run_summary import Tables
from graphrag.index.stages import IndexContext, template_reports, with_graph


def nlp_extract_stage(tables: Tables, ctx: IndexContext) -> Tables:
    settings, units = ctx.settings.index, tables["text_units"]
    entities, relationships, errors, dropped = nlp.extract_graph_nlp(units, settings)
    entities, relationships = nlp.keep_frequent(entities, relationships, settings.nlp_min_chunks)
    relationships = nlp.pmi_weights(relationships, entities, len(units))
    mentions = {"entity_mentions": entities, "relationship_mentions": relationships}
    return {**tables, **mentions, "dropped": dropped, "errors": errors}


def nlp_graph(
    entity_mentions: pd.DataFrame, relationship_mentions: pd.DataFrame, description_chars: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (entities, relationships): merged mentions, descriptions joined and trimmed."""
    entities = merge.merge_entities(entity_mentions)
    relationships = merge.merge_relationships(relationship_mentions, entities)
    descriptions = entities.pop("descriptions")
    entities[S.DESCRIPTION] = [nlp.trim_text(" ".join(d), description_chars) for d in descriptions]
    degrees = merge.node_degrees(entities, merge.entity_edges(entities, relationships))
    return merge.add_degrees(entities, relationships, degrees)


def nlp_graph_stage(tables: Tables, ctx: IndexContext) -> Tables:
    mentions = tables["entity_mentions"], tables["relationship_mentions"]
    return with_graph(tables, *nlp_graph(*mentions, 2 * nlp.DESCRIPTION_CHARS))


def template_reports_stage(tables: Tables, ctx: IndexContext) -> Tables:
    reports = template_reports(tables["communities"], tables, "co-occurrence ")
    return {**tables, "community_reports": reports}
