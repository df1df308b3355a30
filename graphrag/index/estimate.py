"""What indexing a corpus will cost, without calling a model (``graphrag index --dry-run``).

Counted for real: the documents, the chunks (the real chunker and tokenizer), the extraction
calls (document packing included) and each one's prompt, rendered and tokenized; each first
extraction request is built exactly as the run will send it and looked up in the cache (a
recorded one costs no model time, and its recorded tokens are used). What only the replies
decide is taken from recorded runs (``cost_assumptions.json``, written by
``python -m studies.cost_model --write``): reply tokens per chunk token, follow-up calls,
summaries and reports per 1,000 corpus tokens; their requests cannot be looked up before the
replies exist, so their cache share is not checked (their time is an upper bound).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract.record_calls import records_request
from graphrag.index.extract.records import RECORD_STOP
from graphrag.index.extract.stage import (
    MAX_ENTITIES_PER_CHUNK,
    MAX_RELATIONSHIPS_PER_CHUNK,
    extraction_calls,
)
from graphrag.index.reports.write import REPORT_MAX_TOKENS, REPORT_SCHEMA_NAME
from graphrag.llm.client import ChatLLM
from graphrag.llm.cost import CostEstimate, ModelSpeed, StageEstimate, measured, stage_seconds
from graphrag.llm.replies import json_request
from graphrag.llm.stream import StopRuleFactory
from graphrag.settings import IndexSettings, Settings
from graphrag.text.documents import chunk_documents, load_documents
from graphrag.text.tokens import count_tokens, message_tokens

ASSUMPTIONS = "cost_assumptions.json"
MEASURED = "measured on recorded runs"


def extraction_request(
    llm: ChatLLM, texts: list[str], settings: Settings
) -> tuple[dict, StopRuleFactory | None]:
    """Return the body and stop rule of the first extraction request of ``texts``, as the
    run sends it (records or JSON; one chunk or packed documents)."""
    index = settings.index
    if index.extraction_format == "records":
        messages, room = records_request(llm, texts, index)
        stop = RECORD_STOP if index.stop_repeats else None
        return llm.request_body(messages, room), stop
    schema = prompts.extraction_schema(
        index.entity_types, MAX_ENTITIES_PER_CHUNK, MAX_RELATIONSHIPS_PER_CHUNK
    )
    base = prompts.extract_graph(texts[0], index.entity_types)
    messages, fields = json_request(settings.llm.json_mode, base, schema, "graph_extraction")
    budget = settings.llm.max_tokens
    limit = llm.context_limit()
    if limit is not None:
        budget = min(budget, max(limit - message_tokens(messages), 1))
    return llm.request_body(messages, budget, response_format=fields.get("response_format")), None


def reply_rate(index: IndexSettings) -> str:
    """Return the figure of an extraction reply's tokens per chunk token of this format."""
    records = index.extraction_format == "records"
    return "completion_per_text_token" if records else "json_completion_per_text_token"


def _more_calls(
    index: IndexSettings, figures: dict, first_prompt: float, first_reply: float
) -> tuple[float, float, float]:
    """Return (calls per first call, prompt and reply tokens of each) of the calls after an
    extraction's first: records' follow-ups and re-asks, JSON's re-asks with more room and
    gleaning rounds (all rounds counted)."""
    if index.extraction_format == "records":
        rate = figures["again_calls_per_call"] if index.reextract_empty else 0.0
        rate += figures["follow_up_calls_per_call"] if index.relationships_follow_up else 0.0
        extra = first_prompt + figures["follow_up_extra_prompt_tokens"]
        return rate, extra, figures["follow_up_completion_tokens"]
    reasked, gleanings = figures["json_reasked_per_call"], float(index.gleanings)
    if not reasked + gleanings:
        return 0.0, 0.0, 0.0
    # a gleaning round reads the first exchange; its reply, half the first (none recorded)
    prompt = reasked * first_prompt + gleanings * (first_prompt + first_reply)
    completion = reasked * figures["json_reasked_completion_tokens"] + gleanings * first_reply / 2
    return reasked + gleanings, prompt / (reasked + gleanings), completion / (reasked + gleanings)


def _extract(
    units: pd.DataFrame, settings: Settings, llm: ChatLLM, speed: ModelSpeed | None
) -> StageEstimate:
    """Return the extraction stage: each first request built, counted and looked up."""
    figures = measured("graphrag.index", ASSUMPTIONS)["extract"]
    index = settings.index
    texts = list(units[S.TEXT])
    groups = extraction_calls(units, index)
    live_prompt = live_completion = 0.0
    cached = cached_prompt = cached_completion = 0
    first_prompts = 0.0
    for group in groups:
        body, stop = extraction_request(llm, [texts[i] for i in group], settings)
        record = llm.recorded(body, stop)
        prompt = message_tokens(body["messages"])
        first_prompts += prompt
        if record is not None:
            usage = record["response"].get("usage") or {}
            cached += 1
            cached_prompt += int(usage.get("prompt_tokens") or prompt)
            cached_completion += int(usage.get("completion_tokens") or 0)
            continue
        text_tokens = sum(count_tokens(texts[i]) for i in group)
        live_prompt += prompt
        live_completion += min(body["max_tokens"], text_tokens * figures[reply_rate(index)])
    n = max(len(groups), 1)
    extra_calls, extra_prompt, extra_completion = _more_calls(
        index, figures, first_prompts / n, (live_completion + cached_completion) / n
    )
    extra_calls *= len(groups)
    prompt = live_prompt + extra_calls * extra_prompt
    completion = live_completion + extra_calls * extra_completion
    live_calls = len(groups) - cached + extra_calls
    return StageEstimate(
        "extract",
        len(groups) + extra_calls,
        cached,
        prompt + cached_prompt,
        completion + cached_completion,
        stage_seconds(speed, prompt, completion, live_calls),
        f"{len(groups)} first calls built and looked up ({cached} recorded); "
        f"{extra_calls:.1f} more calls (follow-ups, re-asks, gleanings) and replies {MEASURED}",
    )


def _per_corpus(
    name: str,
    figures: dict,
    corpus_tokens: int,
    prompt_tokens: float,
    speed: ModelSpeed | None,
    basis: str,
    completion_cap: int,
) -> StageEstimate:
    calls = figures["calls_per_1k_corpus_tokens"] * corpus_tokens / 1000
    prompt = calls * prompt_tokens
    completion = calls * min(figures["completion_tokens"], completion_cap)
    seconds = stage_seconds(speed, prompt, completion, calls)
    return StageEstimate(name, calls, 0, prompt, completion, seconds, basis)


def _report_prompt_tokens(settings: Settings, context_tokens: float) -> float:
    """Return a report call's prompt tokens: the prompt rendered for real with an empty
    context (JSON instructions as ``llm.json_mode`` sends them), plus the context measured."""
    index = settings.index
    messages = prompts.community_report(
        "", index.report_max_findings, index.report_explanation_sentences
    )
    schema = prompts.report_schema(index.report_max_findings)
    messages, _ = json_request(settings.llm.json_mode, messages, schema, REPORT_SCHEMA_NAME)
    return message_tokens(messages) + min(context_tokens, index.report_context_tokens)


def estimate_index(
    input_path: str | Path,
    settings: Settings,
    llm: ChatLLM,
    speed: ModelSpeed | None,
    skip_bad: bool = False,
) -> CostEstimate:
    """Return the estimate of indexing the corpus at ``input_path`` with ``settings``."""
    loaded = load_documents(input_path, settings.chunking.max_document_tokens, skip_bad)
    chunking, index = settings.chunking, settings.index
    units = chunk_documents(loaded.documents, chunking.size, chunking.overlap)
    corpus = int(units[S.N_TOKENS].sum())
    figures = measured("graphrag.index", ASSUMPTIONS)
    free = figures["llm_free_seconds"]
    llm_graph = index.method == "llm"
    stages = [StageEstimate("chunk", seconds=free["chunk"], basis="no LLM call")]
    if llm_graph:
        stages.append(_extract(units, settings, llm, speed))
        summary = _per_corpus(
            "graph",
            figures["summaries"],
            corpus,
            figures["summaries"]["prompt_tokens"],
            speed,
            f"summaries per 1,000 corpus tokens {MEASURED}",
            settings.llm.max_tokens,
        )
        summary.seconds = (summary.seconds or 0.0) + free["graph"]
        stages.append(summary)
    else:
        stages += [
            StageEstimate(s, seconds=free["graph"], basis="nlp: no LLM call")
            for s in ("extract", "graph")
        ]
    stages.append(StageEstimate("communities", seconds=free["communities"], basis="no LLM call"))
    if llm_graph and not index.lazy_reports:
        reports = figures["reports"]
        stages.append(
            _per_corpus(
                "reports",
                reports,
                corpus,
                _report_prompt_tokens(settings, reports["context_tokens"]),
                speed,
                f"reports per 1,000 corpus tokens {MEASURED}",
                REPORT_MAX_TOKENS,
            )
        )
    else:
        why = (
            "lazy reports: written by the queries that read them"
            if index.lazy_reports
            else "templates, no LLM call"
        )
        stages.append(StageEstimate("reports", basis=why))
    stages.append(
        StageEstimate("embed", seconds=free["embed"], basis="no LLM call (local embedder)")
    )
    notes = [
        f"{len(loaded.documents)} documents, {len(units)} chunks, {corpus:,} corpus tokens"
        + "".join(f"\n  skipped {why}" for _, why in loaded.skipped),  # why names the file
        "calls after the first extraction depend on the replies: not looked up in the cache, "
        "their time is an upper bound when they are recorded",
        f"the LLM-free stages' seconds are the demo's (5,150 tokens); assumptions: "
        f"{figures['source']}",
    ]
    if speed is None:
        notes.append("cache.mode is replay: no model is called, each call is read from the cache")
    return CostEstimate(f"index {input_path}", stages, speed, notes)
