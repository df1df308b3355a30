"""The lean LLM pipeline (issue 13): the ``index.*`` defaults that cut LLM work, by name.

These are the defaults now (graphrag/config.py holds their values, this module only names
them); the demo's first recording was made before them, and data/kestrel_bay/v1.toml pins
each back for the tests of that pipeline. benchmarks/index_cost.py measures this set as
"lean" against that first pipeline:

* ``extraction_format = "records"``: a record reply keeps its finished records when cut off;
* ``summary_threshold_tokens``: descriptions short enough are joined, not summarized;
* ``stop_repeats``: a reply ends where its repetition loop starts;
* ``pack_documents_tokens``: short documents share an extraction call;
* ``min_report_entities``: communities smaller than this get a template report;
* ``sentence_edges_max_entities``: pairs of extracted entities that a short sentence names
  together are related with no LLM call (the record replies list few relationships:
  relationship recall on the demo's gold graph 0.45 without, 0.62 with);
* ``prompt_version = 2``: the second version of reports and descriptions (issue 14: no
  schema-cut strings, fact-keeping summaries within input/output budgets, sub-community
  substitution, alias merging), so that one live re-index records what both need.
"""

from __future__ import annotations

import tomllib
from typing import Any

from graphrag.config import V1_CONFIG, IndexSettings

LEAN_SETTING_NAMES = (
    "extraction_format",
    "summary_threshold_tokens",
    "stop_repeats",
    "pack_documents_tokens",
    "min_report_entities",
    "sentence_edges_max_entities",
    "prompt_version",
)

LEAN_INDEX_SETTINGS: dict[str, Any] = {
    name: getattr(IndexSettings(), name) for name in LEAN_SETTING_NAMES
}


def recorded_index_settings() -> dict[str, Any]:
    """Return the ``index.*`` settings of the demo's first (v1) recorded index, where they
    differ from the defaults (data/kestrel_bay/v1.toml's [index] table): the pipeline
    the lean one is measured against."""
    with V1_CONFIG.open("rb") as file:
        return dict(tomllib.load(file).get("index", {}))
