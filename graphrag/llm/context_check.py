"""How much context a chat endpoint really keeps, checked once at start-up.

Ollama's OpenAI-compatible endpoint cuts a prompt longer than its context (``num_ctx``: 2,048
or 4,096 tokens by default, depending on the version and the memory) without an error; vLLM
and llama.cpp refuse one. So before a run that may call an endpoint (``llm.base_url`` or
``judge.base_url`` set, the cache not in replay), one request is sent: a prompt of a known
number of words, each at least one token in any tokenizer, asking for one token back. The
prompt tokens the endpoint reports say whether it kept the prompt whole. The request bypasses
the recorded cache; an endpoint that cannot answer it is named and the run goes on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import httpx

from graphrag.llm.identity import endpoint_host
from graphrag.settings import Settings

# What the prompts are sized for when llm.context_tokens is 0: the embedded model's slot
# (embedded.ctx_size 16,384 over 2 slots), which the judge's longest prompt fits
PROMPT_WINDOW = 8192
PROBE_MARGIN = 256  # tokens left to the chat template and the reply
PROBE_INSTRUCTION = "Context check: reply with one word."
PROBE_WORD = " the"  # one token in the tokenizers of Llama, Qwen, Mistral, Gemma and OpenAI
PROBE_TIMEOUT = 120.0
# the limit a refusal states: vLLM "maximum context length is 4096 tokens", llama.cpp n_ctx
STATED_LIMIT = re.compile(r"(?:maximum context length is|n_ctx\W+)\s*(\d+)")


@dataclass
class ContextCheck:
    """What the check found: the line to print, whether it is a warning, and the tokens the
    endpoint kept of the probe (None when it could not tell)."""

    line: str
    warning: bool = False
    kept: int | None = None


def probe_messages(words: int) -> list[dict[str, str]]:
    """Return the probe's messages: the instruction and ``words`` filler words."""
    return [{"role": "user", "content": PROBE_INSTRUCTION + PROBE_WORD * words}]


def check_context(settings: Settings, setting: str = "llm.base_url") -> ContextCheck | None:
    """Return what the endpoint of ``settings.llm`` keeps of a prompt as long as the run
    needs (``llm.context_tokens``, else :data:`PROMPT_WINDOW`); None when there is nothing to
    check (the embedded model, or a replay). ``setting`` names the endpoint in the line."""
    llm = settings.llm
    if not llm.base_url or settings.cache.mode == "replay":
        return None
    wanted = llm.context_tokens or PROMPT_WINDOW
    need = (
        f"llm.context_tokens = {wanted:,}"
        if llm.context_tokens
        else f"the {wanted:,} tokens the prompts are sized for (llm.context_tokens = 0)"
    )
    words = wanted - PROBE_MARGIN
    name = f"{setting} {endpoint_host(llm.base_url)} ({llm.model})"
    api_key = os.environ.get(llm.api_key_env) or "sk-no-key-required"
    try:
        response = httpx.post(
            llm.base_url.rstrip("/") + "/chat/completions",
            json={
                "model": llm.model,
                "messages": probe_messages(words),
                "max_tokens": 1,
                "temperature": 0.0,
            },
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=PROBE_TIMEOUT,
        )
        payload = response.json()
    except (httpx.HTTPError, ValueError) as err:
        return ContextCheck(f"graphrag: {name}: context window not checked ({err})")
    if response.status_code != 200:
        return _refused(name, response.status_code, payload, wanted)
    kept = (payload.get("usage") or {}).get("prompt_tokens") if isinstance(payload, dict) else None
    if not isinstance(kept, int):
        return ContextCheck(f"graphrag: {name}: context window not checked (no usage reported)")
    if kept >= words:
        return ContextCheck(
            f"graphrag: {name} keeps a {kept:,}-token prompt whole: enough for {need}", kept=kept
        )
    return ContextCheck(
        f"graphrag: WARNING: {name} cut a {words:,}-word prompt to {kept:,} tokens: it keeps "
        f"about {kept:,} tokens of context, fewer than {need}, and cuts longer prompts "
        f"silently. Fix: serve a larger context ({_fix(wanted)}), or set llm.context_tokens = "
        f"{kept} so that the prompts fit",
        warning=True,
        kept=kept,
    )


def _refused(name: str, status: int, payload: object, wanted: int) -> ContextCheck:
    """Return the check of an endpoint that refused the probe: a warning when the refusal
    states a limit below ``wanted`` (not silent, but every longer prompt would fail)."""
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message", "") if isinstance(error, dict) else str(error or payload)
    stated = STATED_LIMIT.search(f"{message} {error if isinstance(error, dict) else ''}")
    if stated is None or int(stated.group(1)) >= wanted:
        short = " ".join(str(message).split())[:160]
        return ContextCheck(f"graphrag: {name}: context window not checked ({status}: {short})")
    limit = int(stated.group(1))
    return ContextCheck(
        f"graphrag: WARNING: {name} holds {limit:,} tokens of context and refuses longer "
        f"prompts, fewer than the {wanted:,} the run needs. Fix: serve a larger context "
        f"({_fix(wanted)}), or set llm.context_tokens = {limit} so that the prompts fit",
        warning=True,
        kept=limit,
    )


def _fix(wanted: int) -> str:
    return (
        f"Ollama: OLLAMA_CONTEXT_LENGTH={wanted} ollama serve, or PARAMETER num_ctx {wanted} "
        f"in a Modelfile; vLLM: --max-model-len {wanted}; llama.cpp: -c {wanted} times its slots"
    )
