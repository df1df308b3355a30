"""What indexing costs in LLM traffic per 1,000 corpus tokens, and what JSON formatting costs.

Run: .venv/bin/python benchmarks/index_cost.py [--index output/kestrel_bay]
     .venv/bin/python benchmarks/index_cost.py --json-formats [--cache data/llm_cache]
     .venv/bin/python benchmarks/index_cost.py --modes [--corpus data/kestrel_bay/docs]

``--modes`` indexes the corpus once per ``index.method`` ("llm" replayed from the recorded
cache, "nlp" with no LLM) and prints, per mode: LLM calls, prompt and completion tokens, the
model seconds recorded for those calls, this run's wall seconds (per 1,000 corpus tokens),
and entity and relationship recall against the gold graph; then how many description
summaries each ``index.summary_threshold_tokens`` leaves.

The first form reads an index folder's ``index.json`` and prints, per stage and in total,
the LLM calls and the prompt tokens, completion tokens and model seconds per 1,000 corpus
tokens: the figures GraphRAG systems are compared by. Tokens and model seconds are what the
endpoint reported when each response was recorded, so an index built from the replayed cache
reports what it cost to make.

``--json-formats`` makes no LLM call: it re-serializes the recorded extraction replies in
four formats and counts their tokens, to show how much of the completion budget goes to
layout (indentation) and to fields (relationship strength and description, long
descriptions) rather than to the facts extracted; then the same replies as tuple-delimited
records, with and without their repeated records.
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


# --------------------------------------------------------------------------- modes


def _mode_row(method: str, corpus: Path, gold: Path | None, cache: Path) -> dict[str, Any]:
    """Index ``corpus`` with one ``index.method`` (the LLM one replayed from ``cache``) into a
    temporary folder; return its cost, times and recall."""
    import tempfile
    import time

    from graphrag.config import load_settings
    from graphrag.index.pipeline import build_index
    from graphrag.index.quality import extraction_quality, load_gold_graph
    from graphrag.index.store import load_index
    from graphrag.llm import ChatLLM

    with tempfile.TemporaryDirectory(prefix=f"index_cost_{method}_") as folder:
        settings = load_settings(
            overrides={
                "index": {"method": method},
                "cache": {"mode": "replay", "path": str(cache)},
                "embeddings": {"cache_path": str(Path(folder) / "embeddings.sqlite")},
            }
        )
        llm = ChatLLM(settings)
        wall, cpu = time.monotonic(), time.process_time()
        try:
            summary = build_index(corpus, Path(folder) / "index", settings, llm, progress=False)
        finally:
            llm.close()
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
        index = load_index(Path(folder) / "index")
        quality = (
            extraction_quality(index.entities, index.relationships, load_gold_graph(gold))
            if gold
            else None
        )
    stages = summary.stages
    graph_stages = ("chunk", "extract", "graph", "reports")
    return {
        "mode": method,
        "corpus_tokens": summary.counts["corpus_tokens"],
        "calls": sum(s["calls"] for s in stages.values()),
        "prompt_tokens": sum(s["prompt_tokens"] for s in stages.values()),
        "completion_tokens": sum(s["completion_tokens"] for s in stages.values()),
        "model_seconds": sum(s.get("model_seconds", 0.0) for s in stages.values()),
        "wall": wall,
        "cpu": cpu,
        "graph_wall": sum(stages[n]["wall_seconds"] for n in graph_stages),
        "embed_wall": stages["embed"]["wall_seconds"],
        "cluster_wall": stages["communities"]["wall_seconds"],
        "entities": summary.counts["entities"],
        "relationships": summary.counts["relationships"],
        "quality": quality,
    }


def modes(corpus: Path, gold: Path | None, cache: Path) -> str:
    """Return one table comparing the index methods on ``corpus``, per 1,000 corpus tokens."""
    # nlp first, so its row pays the cold imports (graspologic) that both modes need
    rows = [_mode_row(m, corpus, gold, cache) for m in ("nlp", "llm")]
    lines = [
        f"corpus {corpus}: {rows[0]['corpus_tokens']:,} tokens; per 1,000 corpus tokens except "
        "the counts",
        f"{'mode':<6}{'calls':>8}{'prompt':>9}{'compl.':>8}{'model s':>9}{'wall s':>8}"
        f"{'graph s':>9}{'entities':>10}{'rels':>6}{'ent. rec.':>11}{'rel. rec.':>11}",
    ]
    for row in rows:
        scale = PER / row["corpus_tokens"]
        quality = row["quality"]
        recall = (
            f"{quality.entity_recall:>11.2f}{quality.relationship_recall:>11.2f}"
            if quality
            else f"{'-':>11}{'-':>11}"
        )
        lines.append(
            f"{row['mode']:<6}{row['calls'] * scale:>8.2f}{row['prompt_tokens'] * scale:>9.0f}"
            f"{row['completion_tokens'] * scale:>8.0f}{row['model_seconds'] * scale:>9.1f}"
            f"{row['wall'] * scale:>8.2f}{row['graph_wall'] * scale:>9.3f}"
            f"{row['entities']:>10}{row['relationships']:>6}{recall}"
        )
    lines.append(
        "model s: the endpoint's seconds when each reply was recorded (live cost; the llm "
        "row replays them); wall s: this run, replayed, embedding model load and clustering "
        "included; graph s: chunk + extract + graph + reports stages of this run"
    )
    for row in rows:
        lines.append(
            f"{row['mode']}: this run {row['wall']:.1f} s wall, {row['cpu']:.1f} s CPU "
            f"(embed {row['embed_wall']:.1f} s, communities {row['cluster_wall']:.1f} s, "
            f"graph stages {row['graph_wall']:.2f} s)"
        )
    return "\n".join(lines)


def records_cost(cache: Path) -> str:
    """Return what the recorded JSON extraction replies would cost as record lines, with and
    without their repeated records (every reply, cut-off ones included)."""
    from graphrag.index.records import parse_records, records_from_json_reply, to_records

    recorded = as_records = unique = repeats = records = cut = 0
    for file in sorted(cache.glob("*/*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        response_format = record["request"].get("response_format") or {}
        if response_format.get("json_schema", {}).get("name") != EXTRACTION_SCHEMA_NAME:
            continue
        choice = record["response"]["choices"][0]
        text = records_from_json_reply(choice["message"]["content"] or "")
        parsed = parse_records(text)
        recorded += int(record["response"]["usage"]["completion_tokens"])
        as_records += count_tokens(text)
        unique += count_tokens(to_records(parsed.extraction()))
        repeats += parsed.duplicates
        records += len(parsed.entities) + len(parsed.relationships) + parsed.duplicates
        cut += choice["finish_reason"] == "length"
    return "\n".join(
        [
            f"recorded extraction replies ({cut} cut off at max_tokens): {recorded:,} completion "
            f"tokens as JSON; {records} records of which {repeats} repeat an earlier one "
            f"({repeats / records:.0%})",
            f"as tuple-delimited records: {as_records:,} tokens ({as_records / recorded:.2f}x); "
            f"records with repeats dropped: {unique:,} tokens ({unique / recorded:.2f}x)",
        ]
    )


def summary_threshold(cache: Path, corpus: Path, thresholds: tuple[int, ...]) -> str:
    """Return how many description-summary calls each threshold leaves, from the recorded
    extraction of ``corpus`` (no LLM call: the extraction replies are replayed)."""
    from graphrag.config import load_settings
    from graphrag.documents import chunk_documents, load_documents
    from graphrag.index.extract import extract_graph
    from graphrag.index.graph import merge_entities, needs_summary
    from graphrag.llm import ChatLLM

    settings = load_settings(overrides={"cache": {"mode": "replay", "path": str(cache)}})
    documents = load_documents(corpus, settings.chunking.max_document_tokens).documents
    units = chunk_documents(documents, settings.chunking.size, settings.chunking.overlap)
    llm = ChatLLM(settings)
    try:
        mentions, _, _, _ = extract_graph(units, llm, settings.index, progress=False)
    finally:
        llm.close()
    several = [d for d in merge_entities(mentions)["descriptions"] if len(d) > 1]
    counts = [sum(needs_summary(d, t) for d in several) for t in thresholds]
    return "index.summary_threshold_tokens -> summary calls: " + ", ".join(
        f"{t}: {n}" for t, n in zip(thresholds, counts, strict=True)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--index", default="output/kestrel_bay")
    parser.add_argument("--json-formats", action="store_true")
    parser.add_argument("--modes", action="store_true")
    parser.add_argument("--corpus", default="data/kestrel_bay/docs")
    parser.add_argument("--gold", default="data/kestrel_bay/gold_graph.json")
    parser.add_argument("--cache", default="data/llm_cache")
    args = parser.parse_args()
    cache = _repo_path(args.cache)
    if args.json_formats:
        print(json_formats(cache))
        print(records_cost(cache))
    elif args.modes:
        gold = _repo_path(args.gold) if args.gold else None
        print(modes(_repo_path(args.corpus), gold, cache))
        print(summary_threshold(cache, _repo_path(args.corpus), (0, 30, 60, 100)))
    else:
        print(index_cost(_repo_path(args.index)))


if __name__ == "__main__":
    main()
