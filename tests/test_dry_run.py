"""The dry run (``index --dry-run``, ``eval --dry-run``) against the actual run, and the
progress lines of a run: the issue's test is that on the demo in replay the estimate of calls
and of tokens is within a factor of 1.5 of what the run counts."""

from __future__ import annotations

import asyncio

import pytest
from conftest import (
    DEMO_DOCS,
    RECORDED_CACHE,
    UNPACKED,
    FakeLLM,
    Reply,
    indexing_model,
)

from graphrag import prompts
from graphrag.index.pipeline import build_index
from graphrag.llm.cache import LLMError
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import gather_with_progress, run_sync
from graphrag.llm.cost import PROBE_PROMPT, CostEstimate, embedded_speed, probe_speed
from graphrag.llm.progress import RunProgress
from graphrag.llm.usage import track_usage
from graphrag.settings import load_settings
from graphrag.text.tokens import message_tokens
from workbench.cli import main
from workbench.eval.dry_run import _report_prompt_tokens, estimate_eval, estimate_index
from workbench.session import Workbench

FACTOR = 1.5  # the bound on estimate / actual, either way
QUESTIONS = DEMO_DOCS.parent / "questions.jsonl"
# a method set whose answers and judgements the committed cache holds (data/kestrel_bay/recorded_*)
EVAL_OPTIONS = dict(
    methods=["naive", "local", "global"],
    metrics=["answer_relevancy"],
    limit=12,
    judge_controls=0,
    pairwise_pairs="global:naive",
)


def within(estimate: float, actual: float) -> bool:
    return actual / FACTOR <= estimate <= actual * FACTOR


def test_the_index_estimate_is_within_half_again_of_the_replayed_demo(
    demo_index, replay_settings
) -> None:
    estimate = estimate_index(DEMO_DOCS, replay_settings, ChatLLM(replay_settings), None)
    actual = demo_index.manifest["summary"]["stages"]
    calls = sum(s["calls"] for s in actual.values())
    tokens = sum(s["prompt_tokens"] + s["completion_tokens"] for s in actual.values())
    total = estimate.total()
    assert within(total.calls, calls), (total.calls, calls)
    assert within(total.prompt_tokens + total.completion_tokens, tokens)
    extract = next(s for s in estimate.stages if s.stage == "extract")
    # every first extraction request is built as the run sends it: each one is in the cache
    assert extract.cached_calls == 12 == len(demo_index.text_units)
    assert within(extract.calls, actual["extract"]["calls"])


def test_the_eval_estimate_is_within_half_again_of_the_replayed_demo(
    demo_index, replay_settings, replay_embedder, tmp_path
) -> None:
    with Workbench(settings=replay_settings) as bench:
        bench.__dict__["embedder"] = replay_embedder
        bench.load(demo_index.path)
        estimate = bench.estimate_evaluation(QUESTIONS, **EVAL_OPTIONS)
        with track_usage() as actual:
            bench.evaluate(QUESTIONS, out=tmp_path / "report", progress=False, **EVAL_OPTIONS)
    total = estimate.total()
    assert actual.calls == actual.cache_hits > 100  # all replayed, the judge's included
    assert within(total.calls, actual.calls), (total.calls, actual.calls)
    tokens = actual.prompt_tokens + actual.completion_tokens
    assert within(total.prompt_tokens + total.completion_tokens, tokens)
    closed_book = next(s for s in estimate.stages if s.stage == "closed-book")
    assert closed_book.cached_calls == closed_book.calls > 0  # built as sent, found recorded


def closed_book_count(estimate: CostEstimate) -> int:
    return sum(1 for s in estimate.stages if s.stage == "closed-book")


def test_the_eval_estimate_follows_the_options(demo_index, replay_settings) -> None:
    llm = ChatLLM(replay_settings)

    def estimate(**options: object) -> CostEstimate:
        return estimate_eval(
            replay_settings, llm, demo_index, QUESTIONS, ["naive", "drift"], [], None, None,
            **options,
        )  # fmt: skip

    plain, limited = estimate(limit=6), estimate(limit=6, method_limits={"drift": 2})
    drift = [s.calls for e in (plain, limited) for s in e.stages if s.stage == "answer drift"]
    assert drift[1] == pytest.approx(drift[0] / 3)
    assert closed_book_count(plain) == 0 < closed_book_count(estimate(pairwise_pairs="all"))


def test_context_precision_costs_a_call_per_context_judged(demo_index, replay_settings) -> None:
    """Context precision judges up to 5 contexts an answer, one call each: five times the
    calls of context recall's one, and the basis says whether
    its calls were measured."""
    llm = ChatLLM(replay_settings)
    metrics = ["context_recall", "context_precision"]
    estimate = estimate_eval(
        replay_settings, llm, demo_index, QUESTIONS, ["naive"], metrics, None, None,
        limit=6, judge_sample=0, judge_controls=0,
    )  # fmt: skip
    judged = {s.stage: s for s in estimate.stages if s.stage.startswith("judge ")}
    recall, precision = judged["judge context_recall"], judged["judge context_precision"]
    assert precision.calls == pytest.approx(5 * recall.calls) and recall.calls > 0
    assert "judgements" in precision.basis and "measured" in precision.basis


def probing_model(body: dict) -> str | Reply:
    """The indexing model, and a streamed answer to the speed probe."""
    if body["messages"][0]["content"] == PROBE_PROMPT:
        return Reply(pieces=["one", ", two", ", three", ", four"], delay=0.05)
    return indexing_model(body)


def test_a_dry_run_probes_once_and_sees_what_a_run_recorded(
    tmp_path, capsys, fake_llm: FakeLLM, make_settings, replay_embedder, demo_subset
) -> None:
    # no follow-up nor re-ask: their calls are estimated from measured rates, never looked up
    quiet = {"relationships_follow_up": False, "reextract_empty": False}
    settings = make_settings(fake_llm.base_url, index={**UNPACKED, **quiet})
    fake_llm.respond_with(probing_model)
    llm = ChatLLM(settings)
    speed = probe_speed(settings)
    assert fake_llm.calls == 1 and not speed.aggregate
    assert speed.prompt_tokens_per_second > 0 and speed.completion_tokens_per_second > 0
    before = estimate_index(demo_subset, settings, llm, speed)
    assert fake_llm.calls == 1  # the estimate itself calls no model
    build_index(demo_subset, tmp_path / "index", settings, llm, replay_embedder, progress=True)
    lines = capsys.readouterr().err
    assert "[2/6] extract: 3/3 items" in lines and "[6/6] embed: 0/0 (no LLM call)" in lines
    after = estimate_index(demo_subset, settings, llm, speed)
    first, second = (next(s for s in e.stages if s.stage == "extract") for e in (before, after))
    assert first.cached_calls == 0 and second.cached_calls == 3  # one call per document
    assert second.seconds < first.seconds  # a recorded call costs no model time


def test_an_unreachable_endpoint_is_one_clear_error(make_settings) -> None:
    with pytest.raises(LLMError, match=r"could not time the endpoint .* llm.base_url"):
        probe_speed(make_settings())  # the discard port: nothing listens


def test_index_dry_run_prints_the_estimate(tmp_path, capsys, demo_subset, isolated_cwd) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(f'[cache]\npath = "{tmp_path / "llm_cache"}"\n')
    argv = ["--config", str(config), "index", "--input", str(demo_subset), "--out", "unused"]
    assert main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run: index" in out and "extract" in out and "embedded model" in out
    assert not (isolated_cwd / "unused").exists()
    speed = embedded_speed(Workbench(config).settings)  # measured, committed figures
    assert 1 < speed.completion_tokens_per_second < speed.prompt_tokens_per_second


def test_eval_dry_run_prints_the_estimate(tmp_path, capsys, demo_index, isolated_cwd) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(f'[cache]\nmode = "replay"\npath = "{RECORDED_CACHE}"\n')
    argv = ["--config", str(config), "eval", "--index", str(demo_index.path), "--questions"]
    argv += [str(QUESTIONS), "--out", "unused", "--methods", "naive,hyde", "--metrics", "none"]
    assert main([*argv, "--pairwise", "hyde:naive", "--dry-run", "--paired-sd", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "answer naive" in out and "answer hyde" in out and "closed-book" in out
    # the power of its 24 headline questions (all test), from the stated spread
    assert "on the run's 24 headline questions" in out and "paired sd 0.25: detectable" in out
    assert "\njudge " not in out  # --metrics none: no judge call
    assert not (isolated_cwd / "unused").exists()


def test_a_run_shows_one_line_per_stage_with_the_runs_eta(capsys) -> None:
    lines = RunProgress(["extract", "reports"], {"extract": 10.0, "reports": 20.0})
    with lines.stage("extract") as line:
        assert line.eta(0) == pytest.approx(30.0, abs=1.0)  # its estimate and the later one
        run_sync(gather_with_progress([asyncio.sleep(0, i) for i in range(3)], "own bar"))
        run_sync(gather_with_progress([asyncio.sleep(0, i) for i in range(2)], "own bar"))
    with lines.stage("reports"):
        pass
    unknown = RunProgress(["extract", "reports"], {"extract": 10.0, "reports": None})
    with unknown.stage("extract") as line:
        assert line.eta(0) is None and "stage ETA 10s" in line.status()
    err = capsys.readouterr().err
    assert "[1/2] extract: 5/5 items" in err and "ETA" in err
    assert "[2/2] reports: 0/0 (no LLM call)" in err
    assert "own bar" not in err  # a stage's rounds of calls count on its one line


def test_a_chinese_corpus_is_costed_with_the_chinese_report_prompt() -> None:
    """The dry run renders the report prompt a Chinese corpus is sent (community_report_zh),
    not the English one: its fixed part is what the estimate adds to each report's context."""
    settings = load_settings(env={})
    index = settings.index
    fixed = {
        language: message_tokens(
            prompts.community_report(
                "", index.report_max_findings, index.report_explanation_sentences, language
            )
        )
        for language in ("en", "zh")
    }
    assert fixed["en"] != fixed["zh"]
    english, chinese = (_report_prompt_tokens(settings, 100, lang) for lang in ("en", "zh"))
    assert chinese - english == fixed["zh"] - fixed["en"]
