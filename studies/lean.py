"""The lean LLM pipeline (issue 13): the ``index.*`` defaults that cut LLM work, by name.

These are the defaults (``graphrag.settings.IndexSettings`` holds their values, this module
only names them); studies/benchmarks/index_cost.py measures this set as "lean", and a
researcher can turn each off:

* ``record_style = "pipe"``: ``entity|name|type|description``, the fields of Microsoft's
  tuple records in fewer tokens (on the demo the model also loops less in this style);
* ``relationships_follow_up``: a reply that named entities only is asked for their
  relationships, as a looping reply is;
* ``summary_threshold_tokens``: descriptions short enough are joined, not summarized;
* ``stop_repeats``: a reply ends where its repetition loop starts;
* ``pack_documents_tokens``: short documents share an extraction call;
* ``min_report_entities``: communities smaller than this get a template report;
* ``report_max_findings``, ``report_explanation_sentences``: shorter reports;
* ``sentence_edges_max_entities``: pairs of extracted entities that a short sentence names
  together are related with no LLM call (the record replies list few relationships:
  relationship recall on the demo's gold graph 0.45 without, 0.62 with).
"""

from __future__ import annotations

from typing import Any

from graphrag.settings import IndexSettings

LEAN_SETTING_NAMES = (
    "record_style",
    "relationships_follow_up",
    "summary_threshold_tokens",
    "stop_repeats",
    "pack_documents_tokens",
    "min_report_entities",
    "report_max_findings",
    "report_explanation_sentences",
    "sentence_edges_max_entities",
)

LEAN_INDEX_SETTINGS: dict[str, Any] = {
    name: getattr(IndexSettings(), name) for name in LEAN_SETTING_NAMES
}
