"""What an evaluation will cost, without calling a model (``graphrag eval --dry-run``).

Counted for real: the questions the run keeps (types, limit, per-method limits), the judge
sample, the control pairs, the pairwise jobs, each pairwise grade's prompt rendered with the
real question; the closed-book requests (fully determined by the question) are built and
looked up in the cache. What only retrieval and the replies decide is measured on recorded
runs (``cost_assumptions.json``, written by ``python -m studies.cost_model --write``): a
method's calls and tokens per answer, the tokens of each kind of judge call. An answer's
requests depend on its retrieval and earlier replies, so they are not looked up: for them
the time is an upper bound when they are recorded.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from graphrag import prompts
from graphrag import schemas as S
from graphrag.eval import pairwise
from graphrag.eval.judge import SAMPLED_METRICS
from graphrag.eval.judge_validity import CONTROLS, DEFAULT_PAIRS
from graphrag.eval.method_limits import MethodLimit, limited_to
from graphrag.eval.questions import load_questions
from graphrag.eval.runner import (
    ANSWER_STAGE,
    CONTROLS_STAGE,
    PAIRWISE_STAGE,
    interleave_types,
    judge_sample_ids,
)
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.llm.cost import CostEstimate, ModelSpeed, StageEstimate, measured, stage_seconds
from graphrag.query.registry import ALL_METHODS
from graphrag.settings import Settings
from graphrag.text.tokens import message_tokens

ASSUMPTIONS = "cost_assumptions.json"
# the judge's calls of one judgement, by the kinds cost_assumptions.json measures
JUDGEMENT_CALLS = {
    "faithfulness": ("faithfulness_statements", "faithfulness_verdicts"),
    "answer_relevancy": ("answer_relevancy",),
    "context_recall": ("context_recall",),
}
FALLBACK_METHOD = "naive"
COST_KEYS = ("calls", "prompt_tokens", "completion_tokens")  # as Method.planned_cost gives them
# the evaluation's options an estimate reads (run_evaluation's keyword arguments)
ESTIMATED_OPTIONS = (
    "types",
    "method_limits",
    "judge_sample",
    "judge_controls",
    "pairwise_pairs",
    "pairwise_controls",
)


def kept_questions(
    settings: Settings,
    index: Index,
    questions_path: str | Path,
    types: list[str] | None = None,
    limit: int | None = None,
) -> pd.DataFrame:
    """Return the questions an evaluation answers, in its order (as the runner keeps them)."""
    questions = load_questions(questions_path, documents=set(index.documents[S.ID]))
    if types:
        questions = questions[questions["type"].isin(types)]
    questions = interleave_types(questions)
    return questions.head(limit) if limit else questions


def _stage(
    name: str,
    calls: float,
    prompt: float,
    completion: float,
    speed: ModelSpeed | None,
    basis: str,
    cached: int = 0,
    cached_tokens: tuple[float, float] = (0.0, 0.0),
) -> StageEstimate:
    seconds = stage_seconds(speed, prompt, completion, calls - cached)
    total_prompt, total_completion = prompt + cached_tokens[0], completion + cached_tokens[1]
    return StageEstimate(name, calls, cached, total_prompt, total_completion, seconds, basis)


def _judgements(kinds: dict, metric: str, strictness: int) -> tuple[float, float, float]:
    """Return (calls, prompt tokens, completion tokens) of one judgement of ``metric``."""
    repeat = strictness if metric == "answer_relevancy" else 1
    calls = [kinds[k] for k in JUDGEMENT_CALLS[metric]] * repeat
    return (
        len(calls),
        sum(c["prompt_tokens"] for c in calls),
        sum(c["completion_tokens"] for c in calls),
    )


def _closed_book(
    questions: pd.DataFrame, settings: Settings, llm: ChatLLM, kinds: dict, speed: ModelSpeed | None
) -> StageEstimate:
    """Return the closed-book answers of the pairwise judge: built and looked up."""
    max_tokens = settings.query.methods["hyde"].max_tokens
    cached, live_prompt, live_completion, recorded = 0, 0.0, 0.0, [0.0, 0.0]
    for text in questions["question"]:
        messages = prompts.hypothetical_passage(text)
        record = llm.recorded(llm.request_body(messages, max_tokens))
        if record is None:
            live_prompt += message_tokens(messages)
            live_completion += min(max_tokens, kinds["closed_book"]["completion_tokens"])
            continue
        usage = record["response"].get("usage") or {}
        cached += 1
        recorded[0] += usage.get("prompt_tokens") or 0
        recorded[1] += usage.get("completion_tokens") or 0
    basis = f"{len(questions)} requests built and looked up ({cached} recorded)"
    return _stage(
        "closed-book",
        len(questions),
        live_prompt,
        live_completion,
        speed,
        basis,
        cached,
        tuple(recorded),
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
    :func:`graphrag.eval.runner.run_evaluation`)."""
    figures = measured("graphrag.eval", ASSUMPTIONS)
    per_method, kinds = figures["methods"], figures["judge_calls"]
    questions = kept_questions(settings, index, questions_path, types, limit)
    n = len(questions)
    limits = method_limits or {}
    rows = list(questions.iterrows())
    answered = {
        m: [
            str(question["id"])
            for i, (_, question) in enumerate(rows)
            if limited_to(limits.get(m), i, question)
        ]
        for m in methods
    }
    answers = {m: len(ids) for m, ids in answered.items()}
    stages = []
    for method in methods:
        known = per_method.get(method)
        cost = known or per_method[FALLBACK_METHOD]
        k = answers[method]
        basis = f"{k} answers x per-answer cost measured on recorded runs"
        planned = None
        if known is None and method in ALL_METHODS:
            texts = list(questions["question"].head(k))
            planned = ALL_METHODS[method].planned_cost(settings, index, texts)
        if planned is not None:
            cost = {key: cost[key] + part for key, part in zip(COST_KEYS, planned, strict=True)}
            basis = (
                f"{k} answers; not measured: the calls its settings allow before the answer "
                f"(at most), and the answer costed as {FALLBACK_METHOD}"
            )
        elif known is None:
            basis = f"{k} answers; not measured: costed as {FALLBACK_METHOD}"
        stages.append(
            _stage(
                f"answer {method}",
                k * cost["calls"],
                k * cost["prompt_tokens"],
                k * cost["completion_tokens"],
                speed,
                basis,
            )
        )
    size = settings.eval.judge_sample if judge_sample is None else judge_sample
    sample = judge_sample_ids(questions, size, settings.eval.seed)
    strictness = settings.eval.answer_relevancy_strictness
    for metric in metrics:
        everyone = sample is None or metric not in SAMPLED_METRICS
        judged = sum(sum(1 for i in ids if everyone or i in sample) for ids in answered.values())
        calls, prompt, completion = _judgements(kinds, metric, strictness)
        basis = f"{judged} judgements; tokens per call measured on recorded judge calls"
        stages.append(
            _stage(
                f"judge {metric}",
                judged * calls,
                judged * prompt,
                judged * completion,
                judge_speed,
                basis,
            )
        )
    if metrics and judge_controls:
        cases = {m: min(judge_controls, len(CONTROLS[m]) * sum(answers.values())) for m in metrics}
        per_case = {m: _judgements(kinds, m, strictness) for m in metrics}
        calls = sum(cases[m] * per_case[m][0] for m in metrics)
        prompt = sum(cases[m] * per_case[m][1] for m in metrics)
        completion = sum(cases[m] * per_case[m][2] for m in metrics)
        basis = f"up to {judge_controls} control pairs per metric (at most)"
        stages.append(_stage("judge controls", calls, prompt, completion, judge_speed, basis))
    if pairwise_pairs:
        stages += _pairwise(
            settings,
            llm,
            questions,
            methods,
            pairwise_pairs,
            pairwise_controls,
            per_method,
            kinds,
            speed,
            judge_speed,
        )
    notes = [
        f"{n} questions x {len(methods)} methods; metrics: {', '.join(metrics) or 'none'}"
        + (f"; judge sample {len(sample)}" if sample else ""),
        "an answer's requests depend on its retrieval and replies: not looked up in the cache; "
        "their time is an upper bound when they are recorded",
        f"assumptions: {figures['source']}",
    ]
    if speed is None:
        notes.append("cache.mode is replay: no model is called, each call is read from the cache")
    return CostEstimate(f"eval {questions_path}", stages, speed, notes)


def _pairwise(
    settings: Settings,
    llm: ChatLLM,
    questions: pd.DataFrame,
    methods: list[str],
    pairs_text: str,
    controls: int,
    per_method: dict,
    kinds: dict,
    speed: ModelSpeed | None,
    judge_speed: ModelSpeed | None,
) -> list[StageEstimate]:
    """Return the pairwise judge's stages: the graded answers, and the closed-book answers."""
    pairs = pairwise.parse_pairs(pairs_text, methods)
    kept = settings.eval.pairwise_types
    judged = questions[questions["type"].isin(kept)] if kept else questions
    involved = list(dict.fromkeys(m for pair in pairs for m in pair))
    # each rating: one grade call per criterion; the answer's length as the method's replies
    ratings = {m: len(judged) * sum(m in pair for pair in pairs) for m in involved}
    ratings = {m: r + min(controls, len(judged)) * 2 for m, r in ratings.items()}
    stages = []
    closed_book = settings.eval.pairwise_closed_book and len(judged) > 0
    if closed_book:
        ratings = {m: r + len(judged) for m, r in ratings.items()}
    base = sum(
        message_tokens(prompts.answer_rating(q, "", c))
        for q in judged["question"]
        for c in pairwise.CRITERIA
    ) / max(len(judged) * len(pairwise.CRITERIA), 1)
    calls = prompt = 0.0
    for method, count in ratings.items():
        answer_tokens = per_method.get(method, per_method[FALLBACK_METHOD])["completion_tokens"]
        calls += count * len(pairwise.CRITERIA)
        prompt += count * len(pairwise.CRITERIA) * (base + answer_tokens)
    if closed_book:  # the closed-book answer is rated against each method
        count = len(judged) * len(involved) * len(pairwise.CRITERIA)
        calls += count
        prompt += count * (base + kinds["closed_book"]["completion_tokens"])
    basis = f"{len(judged)} questions, {len(pairs)} pairs; grade prompts rendered"
    stages.append(_stage("pairwise", calls, prompt, calls, judge_speed, basis))
    if closed_book:
        stages.append(_closed_book(judged, settings, llm, kinds, speed))
    return stages


def eval_stage_parts(estimate: CostEstimate) -> dict[str, list[str]]:
    """Return the estimate's rows under each stage of the run's progress lines."""
    rows = [s.stage for s in estimate.stages]
    return {
        ANSWER_STAGE: [
            r for r in rows if r.startswith(("answer ", "judge ")) and r != "judge controls"
        ],
        CONTROLS_STAGE: [r for r in rows if r == "judge controls"],
        PAIRWISE_STAGE: [r for r in rows if r in ("pairwise", "closed-book")],
    }
