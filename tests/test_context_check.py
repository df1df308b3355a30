"""The start-up check of an endpoint's context window, against a fake endpoint that cuts long
prompts as Ollama does, one that refuses them as vLLM does, and ones that cannot answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import NO_ENDPOINT, FakeLLM, Reply

from graphrag.llm.context_check import (
    PROBE_INSTRUCTION,
    PROBE_MARGIN,
    PROMPT_WINDOW,
    check_context,
    probe_messages,
)
from graphrag.text import tokens
from workbench import Workbench


def probes(endpoint: FakeLLM) -> list[dict]:
    return [b for b in endpoint.requests if PROBE_INSTRUCTION in b["messages"][-1]["content"]]


def test_an_endpoint_that_cuts_long_prompts_is_named_with_the_fix(
    fake_llm: FakeLLM, make_settings, tmp_path: Path
) -> None:
    fake_llm.context = 2048  # Ollama's default num_ctx of older versions
    fake_llm.respond_with(lambda body: "ok")
    settings = make_settings(fake_llm.base_url)

    check = check_context(settings)

    assert check is not None and check.warning and check.kept == 2048
    assert check.line.startswith("graphrag: WARNING: llm.base_url 127.0.0.1:")
    assert "cut a 7,936-word prompt to 2,048 tokens" in check.line
    assert "OLLAMA_CONTEXT_LENGTH=8192" in check.line and "num_ctx 8192" in check.line
    assert "set llm.context_tokens = 2048" in check.line
    assert "\n" not in check.line
    # one small request: one reply token, not recorded in the cache
    (probe,) = fake_llm.requests
    assert probe["max_tokens"] == 1 and probe["model"] == settings.llm.model
    assert not list((tmp_path / "llm_cache").glob("*/*.json"))


def test_a_context_large_enough_is_said_in_one_line(fake_llm: FakeLLM, make_settings) -> None:
    fake_llm.respond_with(lambda body: "ok")  # keeps every token
    check = check_context(make_settings(fake_llm.base_url, llm={"context_tokens": 4096}))

    assert check is not None and not check.warning
    assert check.kept >= 4096 - PROBE_MARGIN
    assert "keeps a" in check.line and "enough for llm.context_tokens = 4,096" in check.line


def test_a_context_setting_larger_than_the_endpoint_keeps_is_warned(
    fake_llm: FakeLLM, make_settings
) -> None:
    fake_llm.context = 8192
    fake_llm.respond_with(lambda body: "ok")
    check = check_context(make_settings(fake_llm.base_url, llm={"context_tokens": 16384}))

    assert check.warning and check.kept == 8192
    assert "fewer than llm.context_tokens = 16,384" in check.line
    assert "OLLAMA_CONTEXT_LENGTH=16384" in check.line


LLAMA_CPP_REFUSAL = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 7945,
        "n_ctx": 4096,
    }
}
VLLM_REFUSAL = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens. However, you "
        "requested 7946 tokens (7945 in the messages, 1 in the completion).",
        "type": "BadRequestError",
    }
}


@pytest.mark.parametrize("refusal", [VLLM_REFUSAL, LLAMA_CPP_REFUSAL], ids=["vllm", "llama.cpp"])
def test_an_endpoint_that_refuses_long_prompts_states_its_limit(
    fake_llm: FakeLLM, make_settings, refusal: dict
) -> None:
    fake_llm.script(Reply(status=400, raw=json.dumps(refusal).encode()))
    check = check_context(make_settings(fake_llm.base_url))

    assert check.warning and check.kept == 4096
    assert "holds 4,096 tokens of context and refuses longer prompts" in check.line


@pytest.mark.parametrize("broken", ["unreachable", "no route", "no usage"])
def test_an_endpoint_that_cannot_answer_the_probe_never_stops_the_run(
    fake_llm: FakeLLM, make_settings, broken: str
) -> None:
    base_url = NO_ENDPOINT if broken == "unreachable" else fake_llm.base_url
    if broken == "no route":
        base_url = fake_llm.base_url.removesuffix("/v1") + "/nothing"
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}
    fake_llm.script(Reply(raw=json.dumps(body).encode()))

    check = check_context(make_settings(base_url))

    assert check is not None and not check.warning and check.kept is None
    assert "context window not checked" in check.line


def test_no_check_in_replay_nor_for_the_embedded_model(fake_llm: FakeLLM, make_settings) -> None:
    assert check_context(make_settings(fake_llm.base_url, cache={"mode": "replay"})) is None
    assert check_context(make_settings("")) is None
    assert fake_llm.calls == 0


def test_the_workbench_checks_the_answerer_and_a_judge_of_its_own_at_start_up(
    fake_llm: FakeLLM, judge_endpoint: FakeLLM, make_settings, capsys
) -> None:
    fake_llm.respond_with(lambda body: "ok")
    judge_endpoint.context = 4096
    judge_endpoint.respond_with(lambda body: "ok")
    judge = {"base_url": judge_endpoint.base_url, "model": "judge-model"}
    with Workbench(settings=make_settings(fake_llm.base_url, judge=judge)) as bench:
        assert bench.llm is bench.llm and bench.judge_llm is bench.judge_llm

    lines = capsys.readouterr().err.splitlines()
    assert len(probes(fake_llm)) == len(probes(judge_endpoint)) == 1  # once each
    (answerer,) = [line for line in lines if "llm.base_url" in line]
    (judged,) = [line for line in lines if "judge.base_url" in line]
    assert "keeps a" in answerer and "WARNING" not in answerer
    assert "WARNING" in judged and "(judge-model) cut" in judged


def test_the_probe_fits_the_window_it_checks_and_counts_a_token_a_word() -> None:
    """Under the Qwen2.5 tokenizer (the default model's, shipped with the package) each filler
    word is one token, and the probe with its chat template and reply fits the window it
    checks: a server that honours the window keeps it whole."""
    words = PROMPT_WINDOW - PROBE_MARGIN
    (message,) = probe_messages(words)
    assert words <= tokens.count_tokens(message["content"]) <= words + 16
    assert tokens.message_tokens([message]) + 1 <= PROMPT_WINDOW
