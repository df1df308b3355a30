"""What a run will cost before it starts (``index --dry-run``, ``eval --dry-run``), calling no
model. Counted for real: chunks, calls, each first extraction request (looked up in the cache),
questions, judge sample, controls, pairwise prompts. What only the replies decide is measured on
recorded runs (``cost_assumptions.json``, ``studies.cost_model``); each stage names its basis.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.extract import stage as extraction
from graphrag.index.extract.record_calls import records_request, texts_language
from graphrag.index.extract.records import RECORD_STOP
from graphrag.index.reports.write import REPORT_MAX_TOKENS, REPORT_SCHEMA_NAME
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.llm.cost import CostEstimate, ModelSpeed, StageEstimate, measured, stage
from graphrag.llm.replies import json_request
from graphrag.llm.stream import StopRuleFactory
from graphrag.query.registry import planned_cost, split_variant
from graphrag.query.rerank import planned_rerank_cost
from graphrag.settings import IndexSettings, Settings
from graphrag.text import lang
from graphrag.text.documents import chunk_documents, load_documents
from graphrag.text.tokens import count_tokens, message_tokens
from workbench.eval import pairwise, runner
from workbench.eval.judge import ANSWER_RELEVANCY_STRICTNESS, SAMPLED_METRICS
from workbench.eval.judge_validity import CONTROLS, DEFAULT_PAIRS
from workbench.eval.judge_windows import CONTEXT_PRECISION_DEPTH
from workbench.eval.questions import MethodLimit, limited_to

ASSUMPTIONS = "cost_assumptions.json"  # beside this module: its "index" and "eval" figures
MEASURED = "measured on recorded runs"
# the last note of an estimate in replay (no speed: no model is called)
REPLAY_NOTE = ["cache.mode is replay: no model is called, each call is read from the cache"]
# the judge's calls of one judgement, by the kinds the assumptions measure
JUDGEMENT_CALLS = {
    "faithfulness": ("faithfulness_statements", "faithfulness_verdicts"),
    "answer_relevancy": ("answer_relevancy",),
    "context_recall": ("context_recall",),
    # one call per context judged, the first CONTEXT_PRECISION_DEPTH (at most)
    "context_precision": ("context_precision",) * CONTEXT_PRECISION_DEPTH,
    "context_utilization": ("context_precision",) * CONTEXT_PRECISION_DEPTH,
}
FALLBACK_METHOD = "naive"
STAND_IN = "context_recall"  # the judge call kind an unrecorded one is costed as
COST_KEYS = ("calls", "prompt_tokens", "completion_tokens")  # as Method.planned_cost gives them
# the evaluation's options an estimate reads (run_evaluation's keyword arguments)
ESTIMATED_OPTIONS = ("types", "method_limits", "judge_sample", "judge_controls")
ESTIMATED_OPTIONS += ("pairwise_pairs", "pairwise_controls")


def _recorded_usage(llm: ChatLLM, body: dict, stop: StopRuleFactory | None = None) -> dict | None:
    """Return the recorded usage of the request ``body`` (``{}`` if none kept), None if the
    cache would not answer it."""
    record = llm.recorded(body, stop)
    return None if record is None else (record["response"].get("usage") or {})


def assumptions(part: str) -> dict[str, Any]:
    """Return the committed figures of a dry run, ``index`` or ``eval``."""
    return measured("workbench.eval", ASSUMPTIONS)[part]


def extraction_request(
    llm: ChatLLM, texts: list[str], settings: Settings
) -> tuple[dict, StopRuleFactory | None]:
    """Return the body and stop rule of the first extraction request of ``texts``, as the
    run sends it (one chunk or packed documents)."""
    index = settings.index
    messages, room = records_request(llm, texts, index, texts_language(texts))
    return llm.request_body(messages, room), RECORD_STOP if index.stop_repeats else None


def _more_calls(index: IndexSettings, figures: dict, first_prompt: float) -> tuple[float, ...]:
    """Return (calls per first call, prompt and reply tokens of each) of the calls after an
    extraction's first: follow-ups asking for relationships, and re-asks."""
    rate = figures["again_calls_per_call"] if index.reextract_empty else 0.0
    rate += figures["follow_up_calls_per_call"] if index.relationships_follow_up else 0.0
    extra = first_prompt + figures["follow_up_extra_prompt_tokens"]
    return rate, extra, figures["follow_up_completion_tokens"]


def _extract(
    units: pd.DataFrame, settings: Settings, llm: ChatLLM, speed: ModelSpeed | None, figures: dict
) -> StageEstimate:
    """Return the extraction stage: each first request built, counted and looked up."""
    index = settings.index
    texts, groups = list(units[S.TEXT]), extraction.extraction_calls(units, index)
    rate = figures["completion_per_text_token"]
    live_prompt = live_completion = first_prompts = 0.0
    cached = cached_prompt = cached_completion = 0
    for group in groups:
        body, stop = extraction_request(llm, [texts[i] for i in group], settings)
        prompt = message_tokens(body["messages"])
        first_prompts += prompt
        usage = _recorded_usage(llm, body, stop)
        if usage is not None:
            cached += 1
            cached_prompt += int(usage.get("prompt_tokens") or prompt)
            cached_completion += int(usage.get("completion_tokens") or 0)
            continue
        text_tokens = sum(count_tokens(texts[i]) for i in group)
        live_prompt += prompt
        live_completion += min(body["max_tokens"], text_tokens * rate)
    n = max(len(groups), 1)
    extra_calls, extra_prompt, extra_completion = _more_calls(index, figures, first_prompts / n)
    extra_calls *= len(groups)
    prompt = live_prompt + extra_calls * extra_prompt
    completion = live_completion + extra_calls * extra_completion
    basis = (
        f"{len(groups)} first calls built and looked up ({cached} recorded); "
        f"{extra_calls:.1f} more calls (follow-ups and re-asks) and replies {MEASURED}"
    )
    calls, recorded = len(groups) + extra_calls, (cached_prompt, cached_completion)
    return stage("extract", calls, prompt, completion, speed, basis, cached, recorded)


def _per_corpus(
    name: str, figures: dict, corpus: int, prompt: float, speed: ModelSpeed | None, cap: int
) -> StageEstimate:
    """Return a stage of calls per 1,000 corpus tokens, each of ``prompt`` tokens and the
    measured reply (at most ``cap``)."""
    calls = figures["calls_per_1k_corpus_tokens"] * corpus / 1000
    completion = calls * min(figures["completion_tokens"], cap)
    what = "summaries" if name == "graph" else name
    basis = f"{what} per 1,000 corpus tokens {MEASURED}"
    return stage(name, calls, calls * prompt, completion, speed, basis)


def _report_prompt_tokens(settings: Settings, context_tokens: float, language: str) -> float:
    """Return a report call's prompt tokens: the prompt rendered for real, in the corpus's
    ``language``, with an empty context (JSON instructions as ``llm.json_mode`` sends them),
    plus the context measured."""
    index = settings.index
    messages = prompts.community_report(
        "", index.report_max_findings, index.report_explanation_sentences, language
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
    figures = assumptions("index")
    free, summaries, reports = (figures[k] for k in ("llm_free_seconds", "summaries", "reports"))
    llm_graph = index.method == "llm"
    stages = [StageEstimate("chunk", seconds=free["chunk"], basis="no LLM call")]
    if llm_graph:
        graph = _per_corpus(
            "graph", summaries, corpus, summaries["prompt_tokens"], speed, settings.llm.max_tokens
        )
        graph.seconds = (graph.seconds or 0.0) + free["graph"]
        stages += [_extract(units, settings, llm, speed, figures["extract"]), graph]
    else:
        nlp = StageEstimate("extract", seconds=free["graph"], basis="nlp: no LLM call")
        stages += [nlp, dataclasses.replace(nlp, stage="graph")]
    stages.append(StageEstimate("communities", seconds=free["communities"], basis="no LLM call"))
    if llm_graph and not index.lazy_reports:
        language = lang.detect_corpus(list(units[S.TEXT]))
        prompt = _report_prompt_tokens(settings, reports["context_tokens"], language)
        stages.append(_per_corpus("reports", reports, corpus, prompt, speed, REPORT_MAX_TOKENS))
    else:
        lazy = "lazy reports: written by the queries that read them"
        stages.append(
            StageEstimate("reports", basis=lazy if index.lazy_reports else "templates, no LLM call")
        )
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
    return CostEstimate(f"index {input_path}", stages, speed, notes + REPLAY_NOTE * (not speed))


def _measured(kinds: dict, metric: str) -> bool:
    return all(k in kinds for k in JUDGEMENT_CALLS[metric])


def _judgement(kinds: dict, metric: str, strictness: int) -> tuple[float, float, float]:
    """Return (calls, prompt tokens, completion tokens) of one judgement of ``metric`` (a call
    kind with no recorded calls costed as ``STAND_IN``'s: the basis says so)."""
    calls = [kinds.get(k, kinds[STAND_IN]) for k in JUDGEMENT_CALLS[metric]]
    calls *= strictness if metric == "answer_relevancy" else 1
    prompt, completion = (sum(c[k] for c in calls) for k in COST_KEYS[1:])
    return len(calls), prompt, completion


def _answers(
    method: str, k: int, per_method: dict, settings: Settings, index: Index, questions: list[str]
) -> tuple[dict, str]:
    """Return the cost of one answer of ``method`` and how it was had: measured on recorded
    runs, else the calls its settings allow before the answer (at most) and a naive answer."""
    if method in per_method:
        return per_method[method], f"{k} answers x per-answer cost measured on recorded runs"
    base, reranked = split_variant(method)
    if reranked and base in per_method:  # a measured method and its planned rerank call
        extra = planned_rerank_cost(settings, index, questions[:k])
        cost = {
            key: per_method[base][key] + part for key, part in zip(COST_KEYS, extra, strict=True)
        }
        return cost, f"{k} answers: {base}'s measured cost and the rerank call (at most)"
    cost = per_method[FALLBACK_METHOD]
    planned = planned_cost(method, settings, index, questions[:k])
    if planned is None:
        return cost, f"{k} answers; not measured: costed as {FALLBACK_METHOD}"
    cost = {key: cost[key] + part for key, part in zip(COST_KEYS, planned, strict=True)}
    return cost, (
        f"{k} answers; not measured: the calls its settings allow before the answer "
        f"(at most), and the answer costed as {FALLBACK_METHOD}"
    )


def estimate_eval(
    settings: Settings,
    llm: ChatLLM,
    index: Index,
    questions_path: str | Path,
    methods: list[str],
    metrics: list[str],
    speed: ModelSpeed | None,
    judge_speed: ModelSpeed | None,
    *,
    limit: int | None = None,
    types: list[str] | None = None,
    method_limits: dict[str, MethodLimit] | None = None,
    judge_sample: int | None = None,
    judge_controls: int = DEFAULT_PAIRS,
    pairwise_pairs: str | None = None,
    pairwise_controls: int = pairwise.DEFAULT_CONTROLS,
) -> CostEstimate:
    """Return the estimate of evaluating ``methods`` on the question set (the arguments of
    :func:`workbench.eval.runner.run_evaluation`)."""
    figures = assumptions("eval")
    per_method, kinds = figures["methods"], figures["judge_calls"]
    questions = runner.planned_questions(index, questions_path, types, limit)
    texts, rows, limits = list(questions["question"]), list(questions.iterrows()), method_limits
    answered = {
        m: [
            str(q["id"]) for i, (_, q) in enumerate(rows) if limited_to((limits or {}).get(m), i, q)
        ]
        for m in methods
    }
    stages = []
    for method in methods:
        k = len(answered[method])
        cost, basis = _answers(method, k, per_method, settings, index, texts)
        calls, prompt, completion = (k * cost[key] for key in COST_KEYS)
        stages.append(stage(f"answer {method}", calls, prompt, completion, speed, basis))
    size = settings.eval.judge_sample if judge_sample is None else judge_sample
    sample = runner.judge_sample_ids(questions, size, settings.eval.seed)
    per_judgement = {m: _judgement(kinds, m, ANSWER_RELEVANCY_STRICTNESS) for m in metrics}
    for metric in metrics:
        everyone = sample is None or metric not in SAMPLED_METRICS
        judged = sum(sum(1 for i in ids if everyone or i in sample) for ids in answered.values())
        calls, prompt, completion = (judged * part for part in per_judgement[metric])
        basis = f"{judged} judgements; tokens per call " + (
            "measured on recorded judge calls"
            if _measured(kinds, metric)
            else f"not measured yet: costed as {STAND_IN}'s calls"
        )
        stages.append(stage(f"judge {metric}", calls, prompt, completion, judge_speed, basis))
    if metrics and judge_controls:
        answers = sum(len(ids) for ids in answered.values())
        cases = {m: min(judge_controls, len(CONTROLS[m]) * answers) for m in metrics}
        calls, prompt, completion = (
            sum(cases[m] * per_judgement[m][i] for m in metrics) for i in range(3)
        )
        basis = f"up to {judge_controls} control pairs per metric (at most)"
        stages.append(stage("judge controls", calls, prompt, completion, judge_speed, basis))
    if pairwise_pairs:
        pairs = pairwise.parse_pairs(pairwise_pairs, methods)
        stages += _pairwise(
            settings, llm, questions, pairs, pairwise_controls, figures, (speed, judge_speed)
        )
    notes = [
        f"{len(questions)} questions x {len(methods)} methods; metrics: "
        f"{', '.join(metrics) or 'none'}" + (f"; judge sample {len(sample)}" if sample else ""),
        "an answer's requests depend on its retrieval and replies: not looked up in the cache; "
        "their time is an upper bound when they are recorded",
        f"assumptions: {figures['source']}",
    ]
    return CostEstimate(f"eval {questions_path}", stages, speed, notes + REPLAY_NOTE * (not speed))


def _pairwise(
    settings: Settings,
    llm: ChatLLM,
    questions: pd.DataFrame,
    pairs: list[tuple[str, str]],
    controls: int,
    figures: dict,
    speeds: tuple[ModelSpeed | None, ModelSpeed | None],
) -> list[StageEstimate]:
    """Return the pairwise judge's stages: the graded answers, and the closed-book answers
    (their requests built and looked up)."""
    per_method, kinds = figures["methods"], figures["judge_calls"]
    judged = questions[questions["type"].isin(pairwise.JUDGED_TYPES)]
    involved = list(dict.fromkeys(m for pair in pairs for m in pair))
    # each rating: one grade call per criterion; the answer's length as the method's replies
    ratings = {m: len(judged) * sum(m in pair for pair in pairs) for m in involved}
    ratings = {m: r + min(controls, len(judged)) * 2 for m, r in ratings.items()}
    closed_book = len(judged) > 0  # each judged method is also rated against a closed-book answer
    if closed_book:
        ratings = {m: r + len(judged) for m, r in ratings.items()}
    criteria = len(pairwise.CRITERIA)
    base = sum(
        message_tokens(prompts.answer_rating(q, "", c))
        for q in judged["question"]
        for c in pairwise.CRITERIA
    ) / max(len(judged) * criteria, 1)
    calls = prompt = 0.0
    for method, count in ratings.items():
        answer_tokens = per_method.get(method, per_method[FALLBACK_METHOD])["completion_tokens"]
        calls += count * criteria
        prompt += count * criteria * (base + answer_tokens)
    if closed_book:  # the closed-book answer is rated against each method
        count = len(judged) * len(involved) * criteria
        calls += count
        prompt += count * (base + kinds["closed_book"]["completion_tokens"])
    basis = f"{len(judged)} questions, {len(pairs)} pairs; grade prompts rendered"
    stages = [stage("pairwise", calls, prompt, calls, speeds[1], basis)]
    if not closed_book:
        return stages
    max_tokens = settings.query.methods["hyde"].max_tokens
    cached, live_prompt, live_completion, recorded = 0, 0.0, 0.0, [0.0, 0.0]
    for text in judged["question"]:
        messages = prompts.hypothetical_passage(text)
        usage = _recorded_usage(llm, llm.request_body(messages, max_tokens))
        if usage is None:
            live_prompt += message_tokens(messages)
            live_completion += min(max_tokens, kinds["closed_book"]["completion_tokens"])
            continue
        cached += 1
        recorded[0] += usage.get("prompt_tokens") or 0
        recorded[1] += usage.get("completion_tokens") or 0
    basis = f"{len(judged)} requests built and looked up ({cached} recorded)"
    live = (live_prompt, live_completion)
    return stages + [
        stage("closed-book", len(judged), *live, speeds[0], basis, cached, tuple(recorded))
    ]


def eval_stage_parts(estimate: CostEstimate) -> dict[str, list[str]]:
    """Return the estimate's rows under each stage of the run's progress lines."""
    rows = [s.stage for s in estimate.stages]
    return {
        runner.ANSWER_STAGE: [
            r for r in rows if r.startswith(("answer ", "judge ")) and r != "judge controls"
        ],
        runner.CONTROLS_STAGE: [r for r in rows if r == "judge controls"],
        runner.PAIRWISE_STAGE: [r for r in rows if r in ("pairwise", "closed-book")],
    }
