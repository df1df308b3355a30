"""Settings of indexing: ``[chunking]`` and ``[index]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class ChunkingSettings:
    """How documents are cut into text units, the pieces extraction and retrieval read."""

    size: int = 600
    """Tokens in a text unit (the answer model's tokenizer)."""
    overlap: int = 100
    """Tokens consecutive text units of a document share; smaller than ``size``."""
    max_document_tokens: int = 200_000
    """A longer document is refused with an error naming it (split it, or raise this)."""


@dataclass
class IndexSettings:
    """How the graph, its communities and their reports are built."""

    entity_types: list[str] = field(
        default_factory=lambda: ["person", "organization", "geo", "event", "technology"]
    )
    """Entity types the extraction prompt asks for."""
    aliases: dict[str, str] = field(default_factory=dict)
    """Names merged into another entity: {alias: canonical name}, e.g. {"KBMI": "Kestrel ..."}."""
    max_cluster_size: int = 10
    """Entities a community may hold before hierarchical Leiden splits it into sub-communities."""
    report_context_tokens: int = 2000
    """Tokens of entities, relationships and sub-community reports a community report reads."""
    # why 3 findings of 2 sentences: docs/defaults-provenance.md
    report_max_findings: int = 3
    """Findings a community report may list."""
    report_explanation_sentences: int = 2
    """Sentences a report finding's explanation is asked to stay within."""
    method: Literal["llm", "nlp"] = "llm"
    """Graph from LLM extraction ("llm"), or with no LLM ("nlp": named spans, co-occurrence)."""
    nlp_min_chunks: int = 1
    """NLP graph: chunks a name must appear in to be kept (or share a sentence with another)."""
    summary_threshold_tokens: int = 100
    """Several descriptions of an entity get an LLM summary only past this many tokens (0: all)."""
    # pipe: the same fields in fewer tokens; tuple: data/musique/llm_index.toml's recorded index
    record_style: Literal["tuple", "pipe"] = "pipe"
    """Records: Microsoft GraphRAG's ("entity"<|>name<|>type<|>...) or pipes (entity|name|...)."""
    relationships_follow_up: bool = True
    """Records: a reply naming two or more entities and no relationship is asked for them."""
    drop_clause_names: bool = True
    """Drop extracted names that are clauses ("20 people have died on ...") and their edges."""
    # off: on re-records every graph method's answers (studies/benchmarks/description_grounding.py)
    ground_descriptions: bool = False
    """Keep only description sentences whose names and numbers their chunk contains."""
    stop_repeats: bool = True
    """Records: stream each reply and end it where a repetition loop starts."""
    # the model copied the worked example, or a packed reply skipped the unit
    reextract_empty: bool = True
    """Records: ask again, alone and with another example, for a unit left with no entity."""
    pack_documents_tokens: int = 600
    """Records: whole documents shorter than this share one extraction call (0: one each)."""
    # a small community's report mostly restates its entities' descriptions
    min_report_entities: int = 5
    """Communities with fewer entities get a template report, with no LLM call (0: none)."""
    lazy_reports: bool = False
    """Write LLM reports when a query first reads them, not while indexing."""
    sentence_edges_max_entities: int = 4
    """Relate two entities a sentence naming at most this many of them names together (0: off)."""
