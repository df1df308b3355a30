"""Settings of indexing: ``[chunking]`` and ``[index]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class ChunkingSettings:
    size: int = 600
    overlap: int = 100
    max_document_tokens: int = 200_000


@dataclass
class IndexSettings:
    entity_types: list[str] = field(
        default_factory=lambda: ["person", "organization", "geo", "event", "technology"]
    )
    max_entities_per_chunk: int = 20
    max_relationships_per_chunk: int = 20
    gleanings: int = 0
    aliases: dict[str, str] = field(default_factory=dict)
    max_cluster_size: int = 10
    seed: int = 0xDEADBEEF
    community_algorithm: Literal["graspologic", "leidenalg"] = "graspologic"
    report_context_tokens: int = 2000
    # a report's findings, at most, and each finding's explanation in sentences, at most: the
    # 1.5B model fills the room it is given with restatement (the demo's 7 LLM reports wrote
    # 4,590 completion tokens with 3 sentences, 3,333 with 2; README, "The pipe style")
    report_max_findings: int = 3
    report_explanation_sentences: int = 2
    # "llm": the LLM extracts entities and relationships; "nlp": no LLM for the
    # graph: capitalized spans and acronyms, co-occurrence edges weighted by NPMI, template
    # community reports (graphrag/index/extract/nlp.py, nlp_stages.py)
    method: Literal["llm", "nlp"] = "llm"
    nlp_min_chunks: int = 1  # a name must appear in this many chunks (or share a sentence)
    nlp_top_edges_per_entity: int = 8  # an edge stays if either end ranks it this high
    nlp_description_chars: int = 400  # sentences kept as a description, per chunk
    # LLM summaries of an entity's descriptions only when they exceed this many tokens
    # (0: whenever there are several)
    summary_threshold_tokens: int = 100
    # "records": one tuple-delimited record per line, parsed strictly, repaired locally, repeats
    # dropped (index/records.py); "json": the schema-constrained JSON extraction
    extraction_format: Literal["json", "records"] = "records"
    # records format: "tuple", Microsoft's ("entity"<|>name<|>type<|>description), or "pipe",
    # entity|name|type|description: the same fields in fewer completion tokens (index/records.py)
    record_style: Literal["tuple", "pipe"] = "pipe"
    # records format: a reply that ended with two or more entities and no relationship gets the
    # follow-up call a looping reply gets, asking for the relationships only
    relationships_follow_up: bool = True
    # merge "KBMI" into "Kestrel Bay Marine Institute" when the text defines it or the initials of a
    # co-occurring entity spell it (index/aliases.py)
    merge_aliases: bool = True
    # keep only description sentences whose names and numbers the chunk they were extracted
    # from contains (index/grounding.py; dropped sentences go to the dropped table). Off:
    # turning it on re-records every graph method's answers (benchmarks/description_grounding.py
    # measures what it drops: 3 of 176 demo sentences, 80 of 1,321 MuSiQue sentences)
    ground_descriptions: bool = False
    # records format: stream each extraction reply and end it where a repetition loop starts
    # (two lines in a row repeating earlier ones), keeping what came before (llm_stream.py)
    stop_repeats: bool = True
    # JSON reports: stream each report and end it at the first finding (after the first) that
    # copies the report's summary or another finding, closing the JSON (index/report_stop.py)
    stop_report_copies: bool = True
    # records format: a text unit that the first pass left with no entity or relationship
    # it mentions (the model copied the worked example, as for the demo's cooperative
    # history, or a packed reply skipped it: 26 of MuSiQue's 264 paragraphs) is asked once
    # more, alone, with another worked example
    reextract_empty: bool = True
    # records format: pack consecutive whole documents shorter than this many tokens into one
    # extraction call, each labelled, records mapped back to their own text unit (0: off)
    pack_documents_tokens: int = 600
    # communities with fewer entities than this get a template report, no LLM call (0: off):
    # its findings are its entities' own descriptions, which a 1.5B model's report of four
    # entities mostly restates
    min_report_entities: int = 5
    # write the other reports only when a query first reads them (local, global, DRIFT), then
    # keep them in the LLM cache: indexing pays extraction alone (index/lazy_reports.py). With
    # method "nlp": LLM reports over the LLM-free graph, instead of template reports
    lazy_reports: bool = False
    # relate two of a chunk's extracted entities that one sentence naming at most this many of
    # them names together, the sentence as description, when the LLM did not (0: off; no LLM
    # call; index/sentence_edges.py)
    sentence_edges_max_entities: int = 4
