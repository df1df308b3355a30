"""What indexing costs in LLM traffic per 1,000 corpus tokens, and what JSON formatting costs.

Run: .venv/bin/python benchmarks/index_cost.py [--index output/kestrel_bay]
     .venv/bin/python benchmarks/index_cost.py --json-formats [--cache data/llm_cache]

The first form reads an index folder's ``index.json`` and prints, per stage and in total,
the LLM calls and the prompt tokens, completion tokens and model seconds per 1,000 corpus
tokens: the figures GraphRAG systems are compared by. Tokens and model seconds are what the
endpoint reported when each response was recorded, so an index built from the replayed cache
reports what it cost to make.

``--json-formats`` makes no LLM call: it re-serializes the recorded extraction replies in
four formats and counts their tokens, to show how much of the completion budget goes to
layout (indentation) and to fields (relationship strength and description, long
descriptions) rather than to the facts extracted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import mean
from typing import Any

from graphrag.config import REPO_ROOT
from graphrag.tokens import count_tokens

PER = 1000  # costs are per this many corpus tokens
EXTRACTION_SCHEMA_NAME = "graph_extraction"
COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "model_seconds")


def _repo_path(value: str) -> Path:
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path


# --------------------------------------------------------------------------- cost per corpus


def index_cost(index: Path) -> str:
    """Return the per-stage cost table of the index in ``index``."""
    manifest_file = index / "index.json"
    if not manifest_file.is_file():
        print(
            f"{manifest_file} does not exist: build the index first with\n"
            f"  .venv/bin/python -m graphrag index --input data/kestrel_bay/docs --out {index}\n"
            "(with GRAPHRAG_CACHE=replay it is rebuilt from the recorded cache, no model needed)",
            file=sys.stderr,
        )
        sys.exit(2)
    manifest = json.loads(manifest_file.read_text())
    stages: dict[str, dict[str, float]] = manifest["summary"]["stages"]
    corpus_tokens = int(manifest["summary"]["counts"]["corpus_tokens"])
    scale = PER / corpus_tokens
    totals = {c: sum(s.get(c, 0) for s in stages.values()) for c in COLUMNS}
    lines = [
        f"index {index}: {corpus_tokens:,} corpus tokens, model {manifest.get('llm_model', '?')}",
        f"{'stage':<12}{'calls':>7}{'calls/1k':>10}{'prompt/1k':>11}{'compl./1k':>11}"
        f"{'model s/1k':>12}",
    ]
    for name, stage in [*stages.items(), ("total", totals)]:
        if name == "total":
            lines.append("-" * 63)
        lines.append(
            f"{name:<12}{stage.get('calls', 0):>7.0f}{stage.get('calls', 0) * scale:>10.2f}"
            f"{stage.get('prompt_tokens', 0) * scale:>11.0f}"
            f"{stage.get('completion_tokens', 0) * scale:>11.0f}"
            f"{stage.get('model_seconds', 0) * scale:>12.1f}"
        )
    # Model seconds are each call's own duration; calls run concurrently (llm.concurrency), so
    # their sum is the model's busy time, not the wall time of the run.
    lines.append(
        f"per 1,000 corpus tokens (x{scale:.4f}); model seconds are summed per call, "
        "so concurrent calls overlap"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- JSON formats


def _without_relationship_detail(value: dict[str, Any]) -> dict[str, Any]:
    relationships = [
        {k: v for k, v in r.items() if k not in ("strength", "description")}
        for r in value.get("relationships", [])
    ]
    return {**value, "relationships": relationships}


def _descriptions_capped(value: dict[str, Any], limit: int = 80) -> dict[str, Any]:
    def cap(item: dict[str, Any]) -> dict[str, Any]:
        description = item.get("description")
        if isinstance(description, str):
            return {**item, "description": description[:limit]}
        return item

    return {key: [cap(item) for item in items] for key, items in value.items()}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


VARIANTS: dict[str, Callable[[dict[str, Any]], str]] = {
    "(a) pretty, indent=2": lambda v: json.dumps(v, ensure_ascii=False, indent=2),
    "(b) compact": _compact,
    "(c) compact, no rel. strength/description": lambda v: _compact(
        _without_relationship_detail(v)
    ),
    "(d) compact, descriptions <= 80 chars": lambda v: _compact(_descriptions_capped(v)),
}


def _extraction_replies(cache: Path) -> tuple[list[tuple[str, dict[str, Any], int]], int]:
    """Return (reply text, parsed reply, completion tokens) of every recorded extraction reply
    that parses as JSON, and how many extraction replies did not (cut off at max_tokens)."""
    replies, unparsed = [], 0
    for file in sorted(cache.glob("*/*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        response_format = record["request"].get("response_format") or {}
        if response_format.get("json_schema", {}).get("name") != EXTRACTION_SCHEMA_NAME:
            continue
        text = record["response"]["choices"][0]["message"]["content"] or ""
        try:
            value = json.loads(text)
        except ValueError:
            unparsed += 1
            continue
        if not isinstance(value, dict):
            unparsed += 1
            continue
        completion = int((record["response"].get("usage") or {}).get("completion_tokens") or 0)
        replies.append((text, value, completion))
    return replies, unparsed


def json_formats(cache: Path) -> str:
    """Return the token cost of each serialization of the recorded extraction replies."""
    replies, unparsed = _extraction_replies(cache)
    if not replies:
        print(
            f"no parseable extraction replies (response_format name {EXTRACTION_SCHEMA_NAME!r}) "
            f"in {cache} yet ({unparsed} cut off); record some with a live "
            "`python -m graphrag index` run",
            file=sys.stderr,
        )
        sys.exit(2)
    recorded = mean(c for _, _, c in replies)
    rows = {"recorded reply (as returned)": [count_tokens(text) for text, _, _ in replies]}
    for name, serialize in VARIANTS.items():
        rows[name] = [count_tokens(serialize(value)) for _, value, _ in replies]
    entities = mean(len(v.get("entities", [])) for _, v, _ in replies)
    relationships = mean(len(v.get("relationships", [])) for _, v, _ in replies)
    lines = [
        f"{len(replies)} extraction replies from {cache} ({unparsed} cut off at max_tokens and "
        f"left out); {entities:.1f} entities and {relationships:.1f} relationships per reply; "
        f"recorded completion_tokens {recorded:.0f} per reply",
        f"{'format':<44}{'tokens/reply':>13}{'/ recorded':>12}",
    ]
    for name, counts in rows.items():
        lines.append(f"{name:<44}{mean(counts):>13.0f}{mean(counts) / recorded:>12.2f}")
    lines.append(
        "tokens counted with graphrag.tokens.count_tokens (the Qwen2.5 vocabulary); the ratio is "
        "mean tokens over mean recorded completion_tokens"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", default="output/kestrel_bay")
    parser.add_argument("--json-formats", action="store_true")
    parser.add_argument("--cache", default="data/llm_cache")
    args = parser.parse_args()
    if args.json_formats:
        print(json_formats(_repo_path(args.cache)))
    else:
        print(index_cost(_repo_path(args.index)))


if __name__ == "__main__":
    main()
