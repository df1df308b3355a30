"""The measurements a dry run (``graphrag index --dry-run``, ``eval --dry-run``) reads, taken
from committed recorded runs, and the comparison of its estimate with the actual replay.

    python -m studies.cost_model --write     # the two measurement files below, from records
    python -m studies.cost_model --compare   # docs/cost.md: estimate against replay, the demo

``--write`` reads only committed records (no model is called) and writes

- ``graphrag/llm/embedded/speed.json``: the embedded default server's tokens per second on
  2 cores: completion tok/s fitted on the wall seconds of the LLM stages of the cold live
  index runs (``studies/benchmarks/records``), the prompt/completion speed ratio from a
  regression of each recorded call's seconds on its tokens (``data/llm_cache``, the cold
  runs' machine type);
- ``workbench/eval/cost_assumptions.json`` (read by workbench/eval/dry_run.py): under
  ``index``, per extraction call, its reply tokens per chunk token, follow-up and re-asked
  calls; summaries and reports per 1,000 corpus tokens, their context and reply tokens; the
  LLM-free stages' seconds (the cold runs' caches and summaries); under ``eval``, per method,
  calls and tokens per answer (the committed demo reports' records); per judge call kind,
  prompt and reply tokens (the recorded judge calls in ``data/llm_cache``).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from graphrag import prompts
from graphrag.llm.cache import canonical_json
from graphrag.settings import REPO_ROOT, IndexSettings
from graphrag.text.tokens import count_tokens, message_tokens
from studies.cost_compare import write_page

RECORDS = REPO_ROOT / "studies" / "benchmarks" / "records"
COLD_RUNS = sorted((RECORDS / "kestrel_bay_cold").glob("run*"))
DEMO_CACHE = REPO_ROOT / "data" / "llm_cache"
DEMO_REPORTS = ["kestrel_bay", "kestrel_bay_heldout", "kestrel_bay_second_heldout"]
SPEED_FILE = REPO_ROOT / "graphrag" / "llm" / "embedded" / "speed.json"
ASSUMPTIONS_FILE = REPO_ROOT / "workbench" / "eval" / "cost_assumptions.json"
# the cold runs' machine type: its recorded calls give the prompt/completion speed ratio
RATIO_HOST = "AMD EPYC, 2 cores"
# the calls the committed speed was fitted on: those recorded up to its last measurement.
# Later recordings ran beside other jobs on the same 2 cores (the 7 December Text-to-Cypher
# recording wrote 0.1-0.5 tokens/s at load 15-20): they would move the ratio by contention,
# not by the model. A new measurement on a quiet machine moves this date with it.
RATIO_RECORDED_BY = "2026-12-07T00:00"
LLM_FREE_STAGES = ("chunk", "graph", "communities", "embed")
# the opening of each judge call's last message, as ragas 0.4 and our prompts write it
JUDGE_CALL_KINDS = {
    "answer_relevancy": "Generate a question for the given answer",
    "faithfulness_statements": "Given a question and an answer, analyze the complexity",
    "faithfulness_verdicts": "Your task is to judge the faithfulness",
    "context_recall": "Given a context and an answer, analyze each statement",
    # context precision and context utilization: one prompt, one call per context
    "context_precision": "Given question, answer and context verify if the context was useful",
}
GRADE_OPENING = "You grade one answer to a question on one criterion"
CLOSED_BOOK_OPENING = "Write a short passage"


def records(folder: Path) -> Iterator[dict[str, Any]]:
    """Yield each answered record of a cache folder once (a reply kept under two stop rules,
    by the format-1 migration, is one call)."""
    seen = set()
    for path in sorted(folder.glob("??/*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("status", 200) != 200 or not record["response"].get("usage"):
            continue
        key = canonical_json([record["request"], record["response"]])
        if key not in seen:
            seen.add(key)
            yield record


def _usage(record: dict[str, Any]) -> tuple[int, int]:
    usage = record["response"]["usage"]
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _last(record: dict[str, Any]) -> str:
    content = record["request"]["messages"][-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def index_call_kind(record: dict[str, Any], fixed: dict[str, list[dict]]) -> str | None:
    """Return which indexing call a record is: first, follow_up, again, summary or report."""
    messages = record["request"]["messages"]
    schema = (record["request"].get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "community_report":
        return "report"
    if messages[0]["content"].startswith("You merge several descriptions"):
        return "summary"
    for kind, turns in fixed.items():
        if messages[: len(turns) - 1] == turns[:-1] and len(messages) == len(turns):
            return kind
    if len(messages) > 4 and messages[1] == fixed["first"][1]:
        return "follow_up"
    return None


def index_assumptions() -> dict[str, Any]:
    """Return the indexing figures a dry run reads, measured on the cold live runs."""
    settings = IndexSettings()
    fixed = {
        kind: prompts.in_pipe_style(build("", settings.entity_types))
        for kind, build in (
            ("first", prompts.extract_graph_records),
            ("again", prompts.extract_graph_records_again),
        )
    }
    empty_text = count_tokens(fixed["first"][-1]["content"])
    calls: dict[str, list[tuple[int, int, int]]] = defaultdict(list)  # (prompt, reply, text)
    corpus, walls = 0, defaultdict(list)
    for run in COLD_RUNS:
        manifest = json.loads((run / "index.json").read_text(encoding="utf-8"))
        corpus += manifest["summary"]["counts"]["corpus_tokens"]
        for stage, cost in manifest["summary"]["stages"].items():
            if stage in LLM_FREE_STAGES and not cost["calls"]:
                walls[stage].append(cost["wall_seconds"])
        for record in records(run / "cache"):
            kind = index_call_kind(record, fixed)
            text = count_tokens(_last(record)) - empty_text if kind == "first" else 0
            sent = message_tokens(record["request"]["messages"])
            calls[kind or "other"].append((sent, _usage(record)[1], text))
    first = calls["first"]
    report_fixed = message_tokens(
        prompts.community_report(
            "", settings.report_max_findings, settings.report_explanation_sentences
        )
    )
    per_k = 1000 / corpus
    follow = calls["follow_up"]
    return {
        "source": (
            f"{len(COLD_RUNS)} cold live index runs of the demo with the defaults "
            f"(studies/benchmarks/records/kestrel_bay_cold/run*: their index.json and cache), "
            "written by python -m studies.cost_model --write"
        ),
        "corpus_tokens": corpus,
        "extract": {
            "first_calls": len(first),
            "completion_per_text_token": sum(c for _, c, _ in first) / sum(t for *_, t in first),
            "follow_up_calls_per_call": len(follow) / len(first),
            "follow_up_extra_prompt_tokens": statistics.mean(p for p, _, _ in follow)
            - statistics.mean(p for p, _, _ in first),
            "follow_up_completion_tokens": statistics.mean(c for _, c, _ in follow),
            "again_calls_per_call": len(calls["again"]) / len(first),
        },
        "summaries": _per_call(calls["summary"], per_k),
        "reports": {
            **_per_call(calls["report"], per_k),
            "context_tokens": statistics.mean(p for p, _, _ in calls["report"]) - report_fixed,
        },
        "llm_free_seconds": {stage: statistics.median(w) for stage, w in walls.items()},
        "unclassified_calls": len(calls["other"]),
    }


def _per_call(calls: list[tuple[int, int, int]], per_k: float) -> dict[str, float]:
    return {
        "calls_per_1k_corpus_tokens": len(calls) * per_k,
        "prompt_tokens": statistics.mean(p for p, _, _ in calls) if calls else 0.0,
        "completion_tokens": statistics.mean(c for _, c, _ in calls) if calls else 0.0,
    }


def speed_figures() -> dict[str, Any]:
    """Return the embedded server's prompt and completion tokens per second (aggregate over
    its slots): the ratio from the recorded calls, the scale from the cold runs' stage walls."""
    rows = [
        (*_usage(r), float(r["seconds"]))
        for r in records(DEMO_CACHE)
        if r.get("host") == RATIO_HOST
        and r.get("seconds")
        and (r.get("created") or "") < RATIO_RECORDED_BY
    ]
    matrix = np.array(rows, dtype=float)
    inverse, *_ = np.linalg.lstsq(matrix[:, :2], matrix[:, 2], rcond=None)
    ratio = float(inverse[1] / inverse[0])  # prompt tok/s over completion tok/s
    prompt = completion = wall = 0.0
    stages = 0
    for run in [*COLD_RUNS, RECORDS / "kestrel_bay_live_lean"]:
        manifest = json.loads((run / "index.json").read_text(encoding="utf-8"))
        for cost in manifest["summary"]["stages"].values():
            if cost["calls"] and not cost["cache_hits"]:
                prompt += cost["prompt_tokens"]
                completion += cost["completion_tokens"]
                wall += cost["wall_seconds"]
                stages += 1
    completion_rate = (prompt / ratio + completion) / wall
    defaults = json.loads((COLD_RUNS[0] / "index.json").read_text())["settings"]["embedded"]
    return {
        "prompt_tokens_per_second": round(completion_rate * ratio, 1),
        "completion_tokens_per_second": round(completion_rate, 1),
        "measured_on": "2 cores, the default server (2 slots, 4 requests in flight)",
        "server": {"parallel": defaults["parallel"], "threads": defaults["threads"]},
        "source": (
            f"{stages} live LLM stages of {len(COLD_RUNS) + 1} cold index runs "
            f"(studies/benchmarks/records), prompt/completion ratio {ratio:.2f} from {len(rows)} "
            f"recorded calls on {RATIO_HOST}; python -m studies.cost_model --write"
        ),
    }


def eval_assumptions() -> dict[str, Any]:
    """Return per method its calls and tokens per answer (the demo's committed reports), per
    judge call kind its tokens (the recorded judge calls)."""
    frames = [pd.read_parquet(REPO_ROOT / "reports" / r / "records.parquet") for r in DEMO_REPORTS]
    answered = pd.concat(frames, ignore_index=True)
    answered = answered[answered["answer_error"].isna() & (answered["llm_calls"] > 0)]
    methods = answered.groupby("method")[["llm_calls", "prompt_tokens", "completion_tokens"]]
    per_method = {
        m: {"calls": row.llm_calls, "prompt_tokens": row.prompt_tokens,
            "completion_tokens": row.completion_tokens, "answers": int(n)}
        for (m, row), n in zip(methods.mean().iterrows(), methods.size(), strict=True)
    }  # fmt: skip
    kinds: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for record in records(DEMO_CACHE):
        last, first = _last(record), record["request"]["messages"][0]["content"]
        for kind, opening in JUDGE_CALL_KINDS.items():
            if last.startswith(opening):
                kinds[kind].append(_usage(record))
        if isinstance(first, str) and first.startswith(GRADE_OPENING):
            kinds["pairwise_grade"].append(_usage(record))
        if isinstance(first, str) and first.startswith(CLOSED_BOOK_OPENING):
            kinds["closed_book"].append(_usage(record))
    judge = {
        kind: {
            "prompt_tokens": statistics.mean(p for p, _ in calls),
            "completion_tokens": statistics.mean(c for _, c in calls),
            "calls": len(calls),
        }
        for kind, calls in kinds.items()
    }
    return {
        "source": (
            f"answers: reports/{{{','.join(DEMO_REPORTS)}}}/records.parquet; judge calls: "
            "data/llm_cache; written by python -m studies.cost_model --write"
        ),
        "methods": per_method,
        "judge_calls": judge,
    }


def assumptions() -> dict[str, Any]:
    """Return the dry runs' figures: the indexing ones and the evaluation ones."""
    return {"index": index_assumptions(), "eval": eval_assumptions()}


def write_json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(REPO_ROOT)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write the measurement files")
    parser.add_argument("--compare", action="store_true", help="write docs/cost.md (replay)")
    args = parser.parse_args(argv)
    if args.write:
        write_json(SPEED_FILE, speed_figures())
        write_json(ASSUMPTIONS_FILE, assumptions())
    if args.compare:
        write_page()


if __name__ == "__main__":
    main()
