"""What indexing costs in LLM traffic per 1,000 corpus tokens, and what JSON formatting costs.

Run: .venv/bin/python -m studies.benchmarks.index_cost [--index output/kestrel_bay]
     .venv/bin/python -m studies.benchmarks.index_cost --json-formats [--cache data/llm_cache]
     .venv/bin/python -m studies.benchmarks.index_cost --modes [--lean]
     [--corpus data/kestrel_bay/docs]

``--modes`` indexes the corpus once per ``index.method`` ("nlp" with no LLM; "lean", the LLM
pipeline's defaults, replayed from the recorded cache; "tuple", the defaults before the lean
pipeline wrote its records in the pipe style: Microsoft's tuple records, no relationships-
only follow-up, longer reports and fewer templates, replayed too; "compact", lean with the
reports asked for as compact JSON, ``llm.json_mode = "llguidance"``; "lines", lean with the
reports asked for as plain lines, ``index.report_format = "lines"``) and prints, per mode: LLM
calls, prompt and completion tokens, the model seconds recorded for those calls, this run's
wall seconds (per 1,000 corpus tokens), and entity and relationship recall against the gold
graph; then how many description summaries each ``index.summary_threshold_tokens`` leaves. A
mode whose replies are not all recorded says how many requests are missing (nothing calls a
model). With ``--lean`` it adds the extraction calls with document packing on the corpus and
on ``--packing-corpus`` (the MuSiQue paragraphs), and how many tokens of the recorded JSON
extraction replies come after the point where the repeat detector would have stopped them.

The first form reads an index folder's ``index.json`` and prints, per stage and in total,
the LLM calls and the prompt tokens, completion tokens and model seconds per 1,000 corpus
tokens: the figures GraphRAG systems are compared by. Tokens and model seconds are what the
endpoint reported when each response was recorded, so an index built from the replayed cache
reports what it cost to make.

``--json-formats`` makes no LLM call: it re-serializes the recorded extraction replies in
four formats and counts their tokens, to show how much of the completion budget goes to
layout (indentation) and to fields (relationship strength and description, long
descriptions) rather than to the facts extracted; then the same replies as tuple-delimited
records, with and without their repeated records; and the share of the recorded community
reports' tokens that is layout (line breaks and indentation) rather than content, and what
the copy rule (report_copy_rule.py, removed from the index) would have saved on those reports.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from statistics import mean
from typing import Any

from graphrag.settings import REPO_ROOT, repo_relative
from graphrag.text.tokens import count_tokens
from studies.benchmarks.report_copy_rule import COPY_CHARS, MIN_JUDGED, ReportCopyStop, normalized
from studies.lean import LEAN_INDEX_SETTINGS
from studies.recorded import recorded_replies

PER = 1000  # costs are per this many corpus tokens
EXTRACTION_SCHEMA_NAME = "graph_extraction"
REPORT_SCHEMA_NAME = "community_report"
COMPLETE_MARK = "<|COMPLETE|>"
COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "model_seconds", "wall_seconds")


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
    # A run that asked the model every call (an empty cache) shows its stages' wall seconds:
    # a replayed call's are a cache look-up and say nothing about speed.
    live = totals["calls"] > 0 and not any(s.get("cache_hits", 0) for s in stages.values())
    lines = [
        f"index {index}: {corpus_tokens:,} corpus tokens, model {manifest.get('llm_model', '?')}",
        f"{'stage':<12}{'calls':>7}{'calls/1k':>10}{'prompt/1k':>11}{'compl./1k':>11}"
        f"{'model s/1k':>12}" + (f"{'wall s/1k':>11}" if live else ""),
    ]
    for name, stage in [*stages.items(), ("total", totals)]:
        if name == "total":
            lines.append("-" * (74 if live else 63))
        lines.append(
            f"{name:<12}{stage.get('calls', 0):>7.0f}{stage.get('calls', 0) * scale:>10.2f}"
            f"{stage.get('prompt_tokens', 0) * scale:>11.0f}"
            f"{stage.get('completion_tokens', 0) * scale:>11.0f}"
            f"{stage.get('model_seconds', 0) * scale:>12.1f}"
            + (f"{stage.get('wall_seconds', 0) * scale:>11.1f}" if live else "")
        )
    # Model seconds are each call's own duration; calls run concurrently (llm.concurrency), so
    # their sum is the model's busy time, not the wall time of the run.
    lines.append(
        f"per 1,000 corpus tokens (x{scale:.4f}); model seconds are summed per call, "
        "so concurrent calls overlap"
        + ("; wall seconds: each stage's, in this run" if live else "")
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
    for record in _extraction_records(cache):
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
        "tokens counted with graphrag.text.tokens.count_tokens (the Qwen2.5 vocabulary); "
        "the ratio is "
        "mean tokens over mean recorded completion_tokens"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- modes


LEAN = LEAN_INDEX_SETTINGS  # the lean LLM pipeline (the defaults): studies/lean.py
# the defaults until the pipe style: tuple records, no relationships-only follow-up, reports
# of 4 findings of up to 3 sentences, a template below 3 entities
TUPLE = {
    **LEAN,
    "record_style": "tuple",
    "relationships_follow_up": False,
    "min_report_entities": 3,
    "report_max_findings": 4,
    "report_explanation_sentences": 3,
}
MODES: dict[str, dict[str, Any]] = {
    "nlp": {"method": "nlp"},
    "lean": LEAN,
    "tuple": TUPLE,
}


def _mode_row(mode: str, corpus: Path, gold: Path | None, cache: Path) -> dict[str, Any]:
    """Index ``corpus`` with one mode's index settings (LLM calls replayed from ``cache``) into
    a temporary folder; return its cost, times and recall, or what the cache is missing."""
    import tempfile
    import time

    from graphrag.index.extract.quality import extraction_quality, load_gold_graph
    from graphrag.index.pipeline import build_index
    from graphrag.index.store import load_index
    from graphrag.llm.client import CacheMissError, ChatLLM
    from graphrag.settings import load_settings

    with tempfile.TemporaryDirectory(prefix=f"index_cost_{mode}_") as folder:
        settings = load_settings(
            overrides={
                "index": MODES[mode],
                "cache": {"mode": "replay", "path": str(cache)},
                "embeddings": {"cache_path": str(Path(folder) / "embeddings.sqlite")},
            }
        )
        llm = ChatLLM(settings)
        wall, cpu = time.monotonic(), time.process_time()
        try:
            summary = build_index(corpus, Path(folder) / "index", settings, llm, progress=False)
        except CacheMissError:
            return {"mode": mode, "missing": len(llm.cache.misses)}
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
        "mode": mode,
        "corpus_tokens": summary.counts["corpus_tokens"],
        "calls": sum(s["calls"] for s in stages.values()),
        "stage_calls": {name: s["calls"] for name, s in stages.items() if s["calls"]},
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


def modes(corpus: Path, gold: Path | None, cache: Path, names: tuple[str, ...]) -> str:
    """Return one table comparing the index modes on ``corpus``, per 1,000 corpus tokens; a
    mode whose LLM replies are not all recorded yet is listed with what is missing."""
    rows = [_mode_row(m, corpus, gold, cache) for m in names]
    measured = [row for row in rows if "missing" not in row]
    corpus_tokens = measured[0]["corpus_tokens"] if measured else _corpus_tokens(corpus)
    lines = [
        f"corpus {repo_relative(corpus)}: {corpus_tokens:,} tokens; per 1,000 corpus tokens "
        "except the counts",
        f"{'mode':<8}{'calls':>8}{'prompt':>9}{'compl.':>8}{'model s':>9}{'wall s':>8}"
        f"{'graph s':>9}{'entities':>10}{'rels':>6}{'ent. rec.':>11}{'rel. rec.':>11}",
    ]
    for row in rows:
        if "missing" in row:
            lines.append(
                f"{row['mode']:<8} not recorded yet: {row['missing']} requests of its first "
                f"unrecorded stage miss {repo_relative(cache)} (record them with a live run: "
                "GRAPHRAG_CACHE=on and the mode's index settings)"
            )
            continue
        scale = PER / row["corpus_tokens"]
        quality = row["quality"]
        recall = (
            f"{quality.entity_recall:>11.2f}{quality.relationship_recall:>11.2f}"
            if quality
            else f"{'-':>11}{'-':>11}"
        )
        lines.append(
            f"{row['mode']:<8}{row['calls'] * scale:>8.2f}{row['prompt_tokens'] * scale:>9.0f}"
            f"{row['completion_tokens'] * scale:>8.0f}{row['model_seconds'] * scale:>9.1f}"
            f"{row['wall'] * scale:>8.2f}{row['graph_wall'] * scale:>9.3f}"
            f"{row['entities']:>10}{row['relationships']:>6}{recall}"
        )
    lines.append(
        "model s: the endpoint's seconds when each reply was recorded (live cost; the lean "
        "row replays them); wall s: this run, replayed, embedding model load and clustering "
        "included; graph s: chunk + extract + graph + reports stages of this run"
    )
    for row in measured:
        calls = ", ".join(f"{name} {n:.0f}" for name, n in row["stage_calls"].items())
        lines.append(
            f"{row['mode']}: calls {calls or 'none'}; this run {row['wall']:.1f} s wall, "
            f"{row['cpu']:.1f} s CPU (embed {row['embed_wall']:.1f} s, communities "
            f"{row['cluster_wall']:.1f} s, graph stages {row['graph_wall']:.2f} s)"
        )
    if "lean" in names:
        lines.append("lean preset (index.*): " + ", ".join(f"{k}={v}" for k, v in LEAN.items()))
    if "tuple" in names:
        lines.append(
            "tuple: lean with "
            + ", ".join(f"{k}={v}" for k, v in TUPLE.items() if LEAN.get(k) != v)
        )
    return "\n".join(lines)


def _text_units(corpus: Path) -> Any:
    from graphrag.settings import load_settings
    from graphrag.text.documents import chunk_documents, load_documents

    chunking = load_settings(env={}).chunking
    documents = load_documents(corpus, chunking.max_document_tokens).documents
    return chunk_documents(documents, chunking.size, chunking.overlap)


def _corpus_tokens(corpus: Path) -> int:
    from graphrag import schemas as S

    return int(_text_units(corpus)[S.N_TOKENS].sum())


def packing(corpora: list[Path], budgets: tuple[int, ...]) -> str:
    """Return the extraction calls of each corpus with document packing off and at each
    budget (no LLM call: packing depends only on the chunks' token counts)."""
    from graphrag import schemas as S
    from graphrag.index.extract.record_calls import pack_text_units

    lines = []
    for corpus in corpora:
        units = _text_units(corpus)
        scale = PER / int(units[S.N_TOKENS].sum())
        calls = [len(units)] + [len(pack_text_units(units, b)) for b in budgets]
        lines.append(
            f"extraction calls, {repo_relative(corpus)} ({len(units)} chunks, "
            f"{int(units[S.N_TOKENS].sum()):,} tokens): packing off {calls[0]} "
            f"({calls[0] * scale:.2f}/1k); "
            + "; ".join(
                f"{b} tokens {n} ({n * scale:.2f}/1k)"
                for b, n in zip(budgets, calls[1:], strict=True)
            )
        )
    return "\n".join(lines)


def _item_starts(reply: str) -> list[int]:
    """Return where each entity or relationship object of a JSON extraction reply starts, in
    order (the order records_from_json_reply gives them as record lines)."""
    decoder, starts = json.JSONDecoder(), []
    for start in (m.start() for m in re.finditer(r"\{", reply)):
        try:
            item, _ = decoder.raw_decode(reply, start)
        except ValueError:
            continue
        if isinstance(item, dict) and ({"name", "type"} <= item.keys() or "source" in item):
            starts.append(start)
    return starts


EXAMPLE_COPIED = "worked example copied"


def example_copy_stop(body: dict[str, Any]) -> Any:
    """Return the loop rule that also stops at the first record naming an entity of the
    prompt's worked example (the records of its earlier assistant turns) that the text (its
    last message) does not mention: the arm ``index.stop_example_copies`` that was tried and
    left off, kept here to measure what it would lose."""
    from graphrag.index.extract.names import mentioned, name_key
    from graphrag.index.extract.records import RECORD, RecordStop, parse_record

    def names(kind: str, record: dict[str, Any]) -> list[str]:
        return [record["name"]] if kind == "entity" else [record["source"], record["target"]]

    def records(text: str) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for part in (p.strip() for line in text.splitlines() for p in line.split(RECORD)):
            record, kind, _ = parse_record(part) if part else (None, "", [])
            if record is not None:
                found.append((kind, record))
        return found

    messages = body.get("messages") or []
    text = str(messages[-1].get("content", "")) if messages else ""
    example = {
        name_key(n)
        for m in messages[:-1]
        if m.get("role") == "assistant"
        for kind, record in records(str(m.get("content", "")))
        for n in names(kind, record)
        if not mentioned(n, text)
    }

    class ExampleCopyStop(RecordStop):
        def __init__(self) -> None:
            super().__init__()
            self._scanned = 0

        def check(self, partial: str) -> tuple[int, str] | None:
            while (end := partial.find("\n", self._scanned)) >= 0:
                start, self._scanned = self._scanned, end + 1
                for kind, record in records(partial[start:end]):
                    if any(name_key(n) in example for n in names(kind, record)):
                        return start, EXAMPLE_COPIED
                if (cut := super().check(partial[: end + 1])) is not None:
                    return cut
            return None

    return ExampleCopyStop()


def loop_cut(cache: Path) -> str:
    """Return what the repeat detector (``index.stop_repeats``) would have cut from the
    recorded extraction replies: each reply as records, read by the stop rule for its own
    chunk; the tokens from the stop on are counted in the recorded JSON reply itself (what
    the model generated), and the grounded records after the stop (names the chunk mentions,
    not repeats of kept ones) are what the stop would lose."""
    from graphrag import prompts
    from graphrag.index.extract.records import RECORD_STOP
    from graphrag.settings import load_settings
    from studies.json_extraction import records_from_json_reply

    types = load_settings(env={}).index.entity_types
    records = _extraction_records(cache)
    recorded = sum(int(r["response"]["usage"]["completion_tokens"]) for r in records)
    lines = []
    for rule_name, make_rule in (
        ("loops (stop_repeats)", RECORD_STOP),
        ("loops + example copies (stop_example_copies)", example_copy_stop),
    ):
        stopped = json_cut = lost_entities = lost_relationships = 0
        reasons: dict[str, int] = {}
        for record in records:
            chunk = record["request"]["messages"][3]["content"].removeprefix("Text:\n")
            reply = record["response"]["choices"][0]["message"]["content"] or ""
            text = records_from_json_reply(reply).removesuffix(COMPLETE_MARK) + "\n"
            body = {"messages": prompts.extract_graph_records(chunk, types)}
            cut = make_rule(body).check(text)
            if cut is None:
                continue
            offset, reason = cut
            stopped += 1
            reasons[reason] = reasons.get(reason, 0) + 1
            starts = _item_starts(reply)
            kept_items = text[:offset].count("\n")
            json_cut += count_tokens(reply[starts[kept_items] :]) if kept_items < len(starts) else 0
            entities, relationships = _grounded_lost(text, offset, chunk)
            lost_entities += entities
            lost_relationships += relationships
        why = ", ".join(f"{n} at a {reason}" for reason, n in sorted(reasons.items()))
        lines.append(
            f"repeat detector, {rule_name}: {stopped} of {len(records)} recorded extraction "
            f"replies end early ({why}); {json_cut:,} of {recorded:,} completion tokens "
            f"({json_cut / recorded:.0%}) come after the stop; grounded records after it: "
            f"{lost_entities} entities, {lost_relationships} relationships"
        )
    lines.append(
        "(the JSON schema caps entities at 20, so a JSON reply whose entity list loops still "
        "reaches its relationships; a record reply loops to the token cap instead, which is "
        "why a reply stopped before any relationship asks once more for the relationships)"
    )
    return "\n".join(lines)


def _grounded_lost(text: str, offset: int, chunk: str) -> tuple[int, int]:
    """Return (entities, relationships) after ``offset`` of a record reply that its chunk
    grounds and that the text before ``offset`` does not already hold."""
    from graphrag.index.extract.names import mentioned
    from graphrag.index.extract.records import parse_records

    def grounded(part: str, kind: str) -> set[str]:
        parsed = parse_records(part)
        items = parsed.entities if kind == "entity" else parsed.relationships
        names = ("name",) if kind == "entity" else ("source", "target")
        return {
            json.dumps(item, sort_keys=True)
            for item in items
            if all(mentioned(item[n], chunk) for n in names)
        }

    return tuple(
        len(grounded(text, kind) - grounded(text[:offset], kind))
        for kind in ("entity", "relationship")
    )


def _extraction_records(cache: Path) -> list[dict[str, Any]]:
    """Return the recorded JSON extraction calls of ``cache`` (request and response)."""
    return recorded_replies(cache, EXTRACTION_SCHEMA_NAME)


def _report_replies(cache: Path) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
    """Return (record, reply text, parsed report) of every recorded JSON community report
    whose reply parses as a JSON object."""
    found = []
    for record in recorded_replies(cache, REPORT_SCHEMA_NAME):
        text = record["response"]["choices"][0]["message"]["content"] or ""
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append((record, text, value))
    return found


def format_report_lines(report: dict) -> str:
    """Return a report dict as plain lines (``# title``, the summary, ``Rating: n - why``, a
    ``- summary: explanation`` line per finding; a missing field left empty): what the
    recorded JSON reports would cost in the plain-lines form that was tried and left off
    (docs/research-log.md, "Reports as plain lines")."""
    findings = report.get("findings") or []
    return "\n".join(
        [
            f"# {report.get('title', '')}",
            str(report.get("summary", "")),
            f"Rating: {report.get('rating', '')} - {report.get('rating_explanation', '')}",
            *(f"- {f.get('summary', '')}: {f.get('explanation', '')}" for f in findings),
        ]
    )


def report_layout(cache: Path) -> str:
    """Return how many completion tokens the recorded community reports spend on layout: the
    prompt asks for JSON on one line, the model mostly pretty-prints it anyway; and how many
    the same reports take as plain lines (no keys, quotes or brackets either)."""
    returned = compact = lines = replies = 0
    for _, text, value in _report_replies(cache):
        replies += 1
        returned += count_tokens(text)
        compact += count_tokens(_compact(value))
        lines += count_tokens(format_report_lines(value))
    if not replies:
        return f"no parseable community report replies in {cache}"
    return (
        f"{replies} community report replies in {cache}: {returned:,} tokens as returned, "
        f"{compact:,} as compact JSON ({1 - compact / returned:.1%} layout), "
        f"{lines:,} as plain lines ({1 - lines / returned:.1%} fewer)"
    )


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _norm(text: Any) -> str:
    """Normalize as the copy rule does (``report_stop.normalized``), for any JSON value."""
    return normalized(str(text))


def _report_texts(report: dict[str, Any], findings: list[dict[str, Any]]) -> list[str]:
    """Return the report's summary and rating explanation and each of ``findings``' summary
    and explanation, whitespace collapsed and case folded."""
    texts = [report.get("summary", ""), report.get("rating_explanation", "")]
    return [_norm(t) for t in texts + [f[k] for f in findings for k in ("summary", "explanation")]]


def _copied(report: dict[str, Any], index: int) -> bool:
    """Whether finding ``index`` starts as (the first 60 characters of) an earlier text of
    its report: the summary, the rating explanation or another finding's texts."""
    finding = report["findings"][index]
    earlier = _report_texts(report, report["findings"][:index])
    heads = [_norm(finding[k])[:COPY_CHARS] for k in ("summary", "explanation")]
    return any(len(h) >= MIN_JUDGED and any(e[: len(h)] == h for e in earlier) for h in heads)


def _new_sentences(report: dict[str, Any], findings: list[dict[str, Any]], kept: int) -> set:
    """Return the sentences (20+ characters) of ``findings[kept:]`` that neither the report's
    summary and rating explanation nor its first ``kept`` findings hold."""
    known = " ".join(_report_texts(report, findings[:kept]))
    return {
        sentence
        for f in findings[kept:]
        for k in ("summary", "explanation")
        for sentence in map(_norm, _SENTENCE.split(str(f[k])))
        if len(sentence) >= 20 and sentence not in known
    }


def _copy_rule(cache: Path) -> dict[str, int]:
    """Stream every recorded JSON report reply of ``cache`` to the copy rule, one token at a
    time, and count: replies, findings, findings that start as earlier text, replies ended,
    findings kept, completion tokens recorded and saved (generated after the rule saw the
    copy), finding sentences the summary does not hold, and those a stop leaves out."""
    from graphrag.text.tokens import decode, encode

    n = dict.fromkeys(
        ("replies", "findings", "copies", "stopped", "kept", "recorded", "saved", "new", "lost"), 0
    )
    for record, text, report in _report_replies(cache):
        count = len(report["findings"])
        generated = int(record["response"]["usage"]["completion_tokens"])
        n["replies"] += 1
        n["findings"] += count
        n["recorded"] += generated
        n["copies"] += sum(_copied(report, i) for i in range(count))
        n["new"] += len(_new_sentences(report, report["findings"], 0))
        rule, partial, seen, cut = ReportCopyStop(), "", 0, None
        for token in encode(text):
            partial, seen = partial + decode([token]), seen + 1
            if (cut := rule.check(partial)) is not None:
                break
        left = count if cut is None else len(json.loads(rule.close(text[: cut[0]]))["findings"])
        n["kept"] += left
        if cut is not None:
            n["stopped"] += 1
            n["saved"] += max(generated - seen, 0)
            n["lost"] += len(_new_sentences(report, report["findings"], left))
    return n


def report_copies(cache: Path) -> str:
    """Return what the copy rule (report_copy_rule.py, removed from the index) would have saved
    on the recorded JSON community reports: the tokens the model generated after the rule saw
    the copy are what it saves; the findings' sentences that the kept report does not already
    hold, left out by a stop, are what it loses."""
    n = _copy_rule(cache)
    if not n["replies"]:
        return f"no parseable community report replies in {cache}"
    return (
        f"copy rule over {n['replies']} community report replies "
        f"in {cache}: {n['copies']} of {n['findings']} findings start as earlier text of their "
        f"report; the rule ends {n['stopped']} replies, keeps {n['kept']} findings and saves "
        f"{n['saved']:,} of {n['recorded']:,} completion tokens "
        f"({n['saved'] / n['recorded']:.1%}); of the {n['new']} finding sentences the summary "
        f"does not hold, {n['lost']} are left out"
    )


def stop_rules(index: Path, cache: Path) -> str:
    """Return what today's stop rules would have saved on a live run's own recorded replies
    (``cache``, the run's cache folder): each record reply read by the loop rule
    (``index.stop_repeats``: repeats and mirrored entities) and each JSON report streamed to
    the copy rule; the run's completion tokens per 1,000 corpus tokens before and after."""
    from graphrag.index.extract.records import RecordStop, parse_records

    manifest = json.loads((index / "index.json").read_text())
    corpus_tokens = int(manifest["summary"]["counts"]["corpus_tokens"])
    completion = sum(s.get("completion_tokens", 0) for s in manifest["summary"]["stages"].values())
    ended = saved = 0
    for record in recorded_replies(cache):
        if record["request"].get("response_format") or record.get("stopped_early"):
            continue
        text = (record["response"]["choices"][0]["message"]["content"] or "") + "\n"
        parsed = parse_records(text)
        if not (parsed.entities or parsed.relationships):
            continue
        cut = RecordStop().check(text)
        if cut is not None:
            ended += 1
            saved += count_tokens(text[cut[0] :])
    reports = _copy_rule(cache)
    after = completion - saved - reports["saved"]
    return (
        f"today's stop rules over {index}'s recorded replies: {ended} record replies end "
        f"earlier ({saved:,} completion tokens after the stop), {reports['stopped']} reports "
        f"({reports['saved']:,}); completion tokens per 1,000 corpus tokens "
        f"{completion * PER / corpus_tokens:,.0f} as run, {after * PER / corpus_tokens:,.0f} "
        "with the rules"
    )


def records_cost(cache: Path) -> str:
    """Return what the recorded JSON extraction replies would cost as record lines, with and
    without their repeated records (every reply, cut-off ones included)."""
    from graphrag.index.extract.records import parse_records
    from studies.json_extraction import records_from_json_reply, to_records

    recorded = as_records = unique = repeats = records = cut = 0
    for record in _extraction_records(cache):
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
    from graphrag.index.extract.stage import extract_graph
    from graphrag.index.graph.merge import merge_entities, needs_summary
    from graphrag.llm.client import ChatLLM
    from graphrag.settings import load_settings
    from graphrag.text.documents import chunk_documents, load_documents

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
    parser.add_argument(
        "--lean",
        action="store_true",
        help="with --modes: add the extraction calls with document packing, and what the "
        "repeat detector would cut from the recorded JSON extraction replies",
    )
    parser.add_argument("--packing-corpus", default="data/musique/docs")
    parser.add_argument("--corpus", default="data/kestrel_bay/docs")
    parser.add_argument("--gold", default="data/kestrel_bay/gold_graph.json")
    parser.add_argument(
        "--cache",
        help="the recorded cache (default data/llm_cache; with --stop-rules, INDEX/cache)",
    )
    parser.add_argument(
        "--stop-rules",
        action="store_true",
        help="with --index: what today's stop rules would have saved on that live run's own "
        "replies, read from --cache",
    )
    args = parser.parse_args()
    cache = _repo_path(args.cache or "data/llm_cache")
    if args.json_formats:
        print(json_formats(cache))
        print(records_cost(cache))
        print(report_layout(cache))
        print(report_copies(cache))
    elif args.modes:
        gold = _repo_path(args.gold) if args.gold else None
        corpus = _repo_path(args.corpus)
        print(modes(corpus, gold, cache, ("nlp", "lean", "tuple")))
        print(summary_threshold(cache, corpus, (0, 30, 60, 100)))
        if args.lean:
            print(packing([corpus, _repo_path(args.packing_corpus)], (300, 600, 1000)))
            print(loop_cut(cache))
    else:
        index = _repo_path(args.index)
        print(index_cost(index))
        if args.stop_rules:
            print(stop_rules(index, _repo_path(args.cache) if args.cache else index / "cache"))


if __name__ == "__main__":
    main()
