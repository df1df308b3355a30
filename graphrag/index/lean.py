"""The lean LLM pipeline (issue 13) as one set of ``index.*`` settings.

Each setting cuts LLM work without a new model, and each is off by default so the recorded
demo still replays; this is the set benchmarks/index_cost.py measures as "lean" and that a
live re-index records, before the defaults are flipped to it:

* ``extraction_format = "records"``: a record reply keeps its finished records when cut off;
* ``summary_threshold_tokens = 60``: descriptions short enough are joined, not summarized;
* ``stop_repeats``: a reply ends where its repetition loop starts;
* ``pack_documents_tokens = 600``: short documents share an extraction call;
* ``min_report_entities = 3``: communities of two entities get a template report;
* ``sentence_edges_max_entities = 4``: pairs of extracted entities that a short sentence
  names together are related with no LLM call (the record replies list few relationships:
  relationship recall on the demo's gold graph 0.45 without, 0.62 with);
* ``prompt_version = 2``: the second version of reports and descriptions (issue 14: no
  schema-cut strings, fact-keeping summaries within input/output budgets, sub-community
  substitution, alias merging), so that one live re-index records what both need.
"""

from __future__ import annotations

from typing import Any

LEAN_INDEX_SETTINGS: dict[str, Any] = {
    "extraction_format": "records",
    "summary_threshold_tokens": 60,
    "stop_repeats": True,
    "pack_documents_tokens": 600,
    "min_report_entities": 3,
    "sentence_edges_max_entities": 4,
    "prompt_version": 2,
}
