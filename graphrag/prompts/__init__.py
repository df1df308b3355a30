"""Every prompt the workbench sends: builders that fill the template files
(``templates/<name>.txt``, overridable by a user's ``prompts.dir``; see docs/prompts.md) and
assemble the messages, the JSON schemas of the replies, and the guards that keep document text
from reading as instructions. Written for a 1.5B model: short instructions, compact JSON.
"""

# ruff: noqa: F401 - this module only re-exports: callers write prompts.<name>.
from __future__ import annotations

from graphrag.prompts.eval import (
    FINAL_ANSWER_INSTRUCTION,
    PAIRWISE_CRITERIA,
    RATING_SCALE,
    answer_rating,
    with_final_answer_line,
)
from graphrag.prompts.guards import FENCE_NOTE, fence_document, neutralize_citations, table_cell
from graphrag.prompts.index import (
    EXAMPLE_PACKED_RECORDS,
    EXAMPLE_RECORDS,
    PACKED_NOTE,
    SECOND_EXAMPLE_RECORDS,
    community_report,
    extract_graph,
    extract_graph_records,
    extract_graph_records_again,
    extract_graph_records_packed,
    glean_more,
    in_pipe_style,
    packed_text,
    pipe_style,
    relationships_after_loop,
    summarize_descriptions,
    summarize_relationship,
)
from graphrag.prompts.json_schemas import (
    REPORT_CAPS,
    drift_step_schema,
    extraction_schema,
    fact_filter_schema,
    generated_question_schema,
    map_points_schema,
    map_sentences_schema,
    query_keywords_schema,
    relevance_schema,
    rephrasings_schema,
    report_schema,
    verdict_schema,
)
from graphrag.prompts.loader import (
    PromptTemplateError,
    export_templates,
    load_template,
    prompt_dir,
    template_names,
    use_prompt_dir,
)
from graphrag.prompts.messages import Messages
from graphrag.prompts.query import (
    NO_DRIFT_ANSWERS,
    NO_RELEVANT_REPORTS,
    answer,
    drift_follow_up,
    drift_primer,
    drift_reduce,
    global_map,
    global_map_sentences,
    global_merge,
    global_reduce,
    hypothetical_passage,
    minirag_keywords,
    recognize_facts,
    relevance_test,
    rephrase,
)
from graphrag.prompts.questions import (
    question_answerable,
    question_bridge,
    question_closed_book,
    question_global,
    question_local,
)
