"""docs/cost.md: the dry run's estimate against the actual run on the demo, every number
computed here (``python -m studies.cost_model --compare``; replay, no model is called).

Three comparisons: indexing the demo from the recorded cache (the estimate's calls and tokens
against the run summary's), an evaluation the cache holds whole (against the calls the run
counts), and the committed cold live index runs (an empty cache: the estimate's time against
their wall seconds; the same runs the assumptions and the speed were measured on, so this
row checks the arithmetic, not a forecast).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

from graphrag.llm.client import ChatLLM
from graphrag.llm.cost import CostEstimate, embedded_speed, measured
from graphrag.llm.progress import duration
from graphrag.llm.usage import track_usage
from graphrag.settings import REPO_ROOT, Settings, load_settings
from workbench.eval.dry_run import estimate_index
from workbench.session import Workbench

PAGE = REPO_ROOT / "docs" / "cost.md"
DEMO = REPO_ROOT / "data" / "kestrel_bay"
COLD_RUNS = sorted(
    (REPO_ROOT / "studies" / "benchmarks" / "records" / "kestrel_bay_cold").glob("run*")
)
EVAL_OPTIONS = dict(
    methods=["naive", "local", "global"],
    metrics=["answer_relevancy"],
    judge_controls=0,
    pairwise_pairs="global:naive",
)
COMMAND = "python -m studies.cost_model --compare"
FIRST = REPO_ROOT / "studies" / "benchmarks" / "records" / "first_answer.json"
# studies/benchmarks/llm_throughput.py's default row as docs/benchmarks.md records it (a live
# run, not repeatable here): 6 recorded extraction requests of 864 prompt tokens, max_tokens
# 96, 2 slots, 4 in flight, 55.5 s wall
THROUGHPUT_ROW = {"calls": 6, "prompt_tokens": 6 * 864, "completion_tokens": 6 * 96, "wall": 55.5}


def demo_settings(folder: Path, mode: str, cache: Path) -> Settings:
    empty = folder / "empty.toml"
    empty.touch()
    overrides = {
        "llm": {"base_url": "", "max_retries": 0},
        "cache": {"mode": mode, "path": str(cache)},
        "embeddings": {"cache_path": str(folder / "embeddings.sqlite")},
    }
    return load_settings(path=empty, env={}, overrides=overrides)


def ratio(estimate: float, actual: float) -> str:
    return f"{estimate / actual:.2f}" if actual else "-"


def index_rows(estimate: CostEstimate, stages: dict[str, dict]) -> list[str]:
    rows = [
        "| stage | calls est. | calls actual | tokens est. | tokens actual | ratio (tokens) |",
        "|---|---|---|---|---|---|",
    ]
    for s in [*estimate.stages, estimate.total()]:
        actual = stages.get(s.stage) or {
            k: sum(v[k] for v in stages.values())
            for k in ("calls", "prompt_tokens", "completion_tokens")
        }
        if not s.calls and not actual["calls"]:
            continue
        tokens = s.prompt_tokens + s.completion_tokens
        real = actual["prompt_tokens"] + actual["completion_tokens"]
        rows.append(
            f"| {s.stage} | {s.calls:.1f} | {actual['calls']:.0f} | {tokens:,.0f} | {real:,.0f} "
            f"| {ratio(tokens, real)} |"
        )
    return rows


def eval_rows(estimate: CostEstimate, records: pd.DataFrame, total: dict) -> list[str]:
    rows = [
        "| part | calls est. | calls actual | tokens est. | tokens actual | ratio (tokens) |",
        "|---|---|---|---|---|---|",
    ]
    counted = {"calls": 0, "tokens": 0}
    for s in estimate.stages:
        if s.stage.startswith("answer "):
            own = records[records["method"] == s.stage.removeprefix("answer ")]
            calls, tokens = (
                own["llm_calls"].sum(),
                (own["prompt_tokens"] + own["completion_tokens"]).sum(),
            )
        elif s.stage.startswith("judge "):
            metric = s.stage.removeprefix("judge ")
            calls, tokens = records[f"{metric}_calls"].sum(), None  # the records keep no prompt
        else:
            continue
        counted["calls"] += calls
        counted["tokens"] += tokens or 0
        estimated = s.prompt_tokens + s.completion_tokens
        shown = f"{tokens:,.0f}" if tokens is not None else "(not kept per record)"
        rows.append(
            f"| {s.stage} | {s.calls:.1f} | {calls:.0f} | {estimated:,.0f} | {shown} | "
            f"{ratio(estimated, tokens) if tokens else '-'} |"
        )
    judged = [s for s in estimate.stages if s.stage in ("pairwise", "closed-book")]
    if judged:
        calls = sum(s.calls for s in judged)
        rows.append(
            f"| pairwise and closed-book | {calls:.1f} | {total['calls'] - counted['calls']:.0f} "
            f"| {sum(s.prompt_tokens + s.completion_tokens for s in judged):,.0f} | "
            "(the rest of the total) | - |"
        )
    whole = estimate.total()
    tokens = total["prompt_tokens"] + total["completion_tokens"]
    estimated = whole.prompt_tokens + whole.completion_tokens
    rows.append(
        f"| **total** (the run's own count) | {whole.calls:.1f} | {total['calls']:.0f} | "
        f"{estimated:,.0f} | {tokens:,.0f} | {ratio(estimated, tokens)} |"
    )
    return rows


def cold_rows(folder: Path) -> list[str]:
    """The estimate with an empty cache (every call live) against each cold live run."""
    settings = demo_settings(folder, "on", folder / "empty_cache")
    estimate = estimate_index(DEMO / "docs", settings, ChatLLM(settings), embedded_speed(settings))
    total = estimate.total()
    rows = [
        "| run | calls | prompt tok | completion tok | wall s (stages) |",
        "|---|---|---|---|---|",
        f"| **estimate, empty cache** | {total.calls:.1f} | {total.prompt_tokens:,.0f} | "
        f"{total.completion_tokens:,.0f} | {total.seconds:,.0f} ({duration(total.seconds)}) |",
    ]
    for run in COLD_RUNS:
        stages = json.loads((run / "index.json").read_text())["summary"]["stages"].values()
        sums = {
            k: sum(s[k] for s in stages)
            for k in ("calls", "prompt_tokens", "completion_tokens", "wall_seconds")
        }
        rows.append(
            f"| {run.name} | {sums['calls']:.0f} | {sums['prompt_tokens']:,.0f} | "
            f"{sums['completion_tokens']:,.0f} | {sums['wall_seconds']:,.0f} |"
        )
    return rows


def speed_lines(folder: Path) -> list[str]:
    """The embedded model's measured speed, per slot, and the throughput benchmark's
    workload timed with it."""
    speed = embedded_speed(demo_settings(folder, "on", folder / "empty_cache"))
    row = THROUGHPUT_ROW
    seconds = speed.seconds(row["prompt_tokens"], row["completion_tokens"], row["calls"])
    return [
        f"The embedded model's speed (`graphrag/llm/embedded/speed.json`): "
        f"{speed.prompt_tokens_per_second:.1f} prompt and {speed.completion_tokens_per_second:.1f}"
        f" completion tokens per second with the server's {speed.parallel} slots busy "
        f"({speed.prompt_tokens_per_second / speed.parallel:.1f} and "
        f"{speed.completion_tokens_per_second / speed.parallel:.1f} per slot), measured as "
        f"{measured('graphrag.llm.embedded', 'speed.json')['source']}. Timed with these rates, the",
        f"throughput benchmark's default workload (`studies/benchmarks/llm_throughput.py`, "
        f"docs/benchmarks.md:"
        f" {row['calls']} extraction requests, {row['prompt_tokens']:,} prompt and "
        f"{row['completion_tokens']} completion tokens) takes {seconds:.0f} s; it took "
        f"{row['wall']} s (its prompts share a prefix the server reuses).",
    ]


def first_answer_lines(record: dict | None) -> list[str]:
    """The live run on a new corpus (studies/benchmarks/first_answer.py): the estimate made
    before it against what it did, and its time to a first answer."""
    if record is None:
        return ["Not measured yet: `python -m studies.benchmarks.first_answer` (live)."]
    rows = [
        "| stage | calls est. | calls actual | tokens est. | tokens actual | time est. "
        "| time actual |",
        "|---|---|---|---|---|---|---|",
    ]
    total = {"est": [0.0] * 4, "act": [0.0] * 4}
    for stage, est in record["estimate"].items():
        act = record["actual"].get(stage, {})
        e = [
            est["calls"],
            est["prompt_tokens"] + est["completion_tokens"],
            est["seconds"] or 0.0,
        ]
        a = [
            act.get("calls", 0),
            act.get("prompt_tokens", 0) + act.get("completion_tokens", 0),
            act.get("wall_seconds", 0.0),
        ]
        total["est"] = [t + v for t, v in zip(total["est"], e, strict=False)]
        total["act"] = [t + v for t, v in zip(total["act"], a, strict=False)]
        rows.append(
            f"| {stage} | {e[0]:.1f} | {a[0]:.0f} | {e[1]:,.0f} | {a[1]:,.0f} "
            f"| {duration(e[2])} | {duration(a[2])} |"
        )
    e, a = total["est"], total["act"]
    rows.append(
        f"| **total** | {e[0]:.1f} | {a[0]:.0f} | {e[1]:,.0f} | {a[1]:,.0f} "
        f"| {duration(e[2])} | {duration(a[2])} |"
    )
    local, naive = record["answers"]["local"], record["answers"]["naive"]
    return [
        f"{record['corpus']}: {record['documents']} documents, {record['words']:,} words, a new",
        "project (`init`), an empty cache, the defaults; the estimate was made before the run,",
        f"on {record['machine']} (`{record['command']}`).",
        "",
        *rows,
        "",
        f"Time to a first answer: the model started in {record['server_start_seconds']:.0f} s,",
        f"the index took {record['index_seconds']:.0f} s, and local search answered "
        f"{record['question']!r}",
        f"in {local['seconds']:.0f} s ({local['calls']} call): **"
        f"{duration(record['first_answer_seconds'])}** from the start. Naive RAG's answer then "
        f"took {naive['seconds']:.0f} s. The machine's load average over the run's last five",
        f"minutes was {record['load_average_after']} (the model server's 2 threads alone keep it",
        "near 2 on 2 cores).",
    ]


def write_page() -> None:
    """Build the demo's index and evaluation in replay, estimate both, write docs/cost.md."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        settings = demo_settings(folder, "replay", REPO_ROOT / "data" / "llm_cache")
        with Workbench(settings=settings) as bench:
            index_estimate = bench.estimate_index(DEMO / "docs")
            summary = bench.index(DEMO / "docs", folder / "index", progress=False)
            questions = DEMO / "questions.jsonl"
            eval_estimate = bench.estimate_evaluation(questions, **EVAL_OPTIONS)
            with track_usage() as usage:
                bench.evaluate(questions, out=folder / "report", progress=False, **EVAL_OPTIONS)
            records = pd.read_parquet(folder / "report" / "records.parquet")
        lines = page(
            index_estimate,
            summary.stages,
            eval_estimate,
            records,
            usage.to_dict(),
            cold_rows(folder) + ["", *speed_lines(folder)],
        )
    record = json.loads(FIRST.read_text(encoding="utf-8")) if FIRST.is_file() else None
    lines += [
        "",
        "## A new corpus, live: the estimate before the run, and the time to a first answer",
        "",
        *first_answer_lines(record),
    ]
    PAGE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO_ROOT)}")


def page(
    index_estimate: CostEstimate,
    index_stages: dict[str, dict],
    eval_estimate: CostEstimate,
    records: pd.DataFrame,
    usage: dict,
    cold: list[str],
) -> list[str]:
    n = records["question_id"].nunique()
    return [
        "# What a run will cost: the dry run against the run",
        "",
        f"Generated by `{COMMAND}` (replay: no model is called); do not edit by hand.",
        "",
        "`graphrag index --dry-run` and `graphrag eval --dry-run` print the LLM calls, prompt and",
        "completion tokens and the time each stage will take, and how many calls the cache",
        "already holds (those cost no model time), without calling a model. What they count",
        "for real: the chunks (the real chunker and tokenizer), the extraction calls (document",
        "packing included), each first extraction prompt rendered and tokenized and its request",
        "looked up in the cache, the questions an evaluation keeps, the judge sample, the",
        "pairwise jobs and their grade prompts, the closed-book requests (looked up). What only",
        "the replies decide is measured on committed recorded runs",
        "(`python -m studies.cost_model --write` writes `workbench/eval/cost_assumptions.json`,",
        "read by `workbench/eval/dry_run.py`, and `graphrag/llm/embedded/speed.json`): reply",
        "tokens per chunk token, follow-up calls, summaries and reports per 1,000 corpus tokens, a",
        "method's calls and tokens per answer, each judge call's tokens, and the embedded",
        "model's speed on 2 cores. An endpoint's speed is probed with one small streamed request.",
        "",
        "**This machine's speed, not another's.** The committed speed was measured on another",
        "machine; with another CPU or another job on the cores the model may run several times",
        "slower. So a run that made at least 3 live calls over 20 s keeps their tokens and wall",
        "time in `measured_speed.json` beside the project's cache (`graphrag/llm/cost.py`),",
        "and the next dry run and ETA scale the committed rates by what this machine did, and say",
        "so (`speed: … (this machine's last live run (N calls, date): 2.40× the time of the",
        "committed figures …)`). A file kept on another CPU, core count or server shape is not",
        "used, and the dry run says it fell back to figures measured elsewhere.",
        "`python -m studies.benchmarks.dry_run_accuracy` measures the dry run against the run",
        "that follows it (live).",
        "",
        "During a run, each stage is one line on stderr (`--quiet` turns them off):",
        "",
        "```",
        "[2/6] extract: 7/12 items, 31.2 tok/s, 2 from cache, ETA 6m40s",
        "```",
        "",
        "items done of those expected, reply tokens per second of the live calls, calls the",
        "cache served, and the ETA of the whole run: this stage's rest at its pace so far plus",
        "the estimate's seconds for the stages to come (with an endpoint, whose speed a run",
        "does not probe, the line gives the stage's ETA). The embedded server's start is said",
        "too: `graphrag: starting the embedded model … (2 slots, 2 threads) …`, then",
        "`graphrag: embedded model ready in N s`.",
        "",
        "## Indexing the demo, replayed (the run summary's counts)",
        "",
        *index_rows(index_estimate, index_stages),
        "",
        "## An evaluation the cache holds whole, replayed",
        "",
        f"Methods {', '.join(EVAL_OPTIONS['methods'])} on the demo's {n} questions, answer",
        f"relevancy, pairwise {EVAL_OPTIONS['pairwise_pairs']} (with its controls and closed-book",
        "answers), no judge control pairs. Per method from the report's records; the total is",
        "every call the run counted (the pairwise judge's included).",
        "",
        *eval_rows(eval_estimate, records, usage),
        "",
        "## The cold live index runs (empty cache)",
        "",
        "The estimate with an empty cache, every call live at the embedded model's measured",
        "speed, beside the committed cold live runs of the demo (`studies/benchmarks/records`).",
        "The assumptions and the speed were measured on these runs, so this checks the",
        "arithmetic, not a forecast.",
        "",
        *cold,
        "",
        "The seconds count the stages only (not the server's start, nor loading the embedder).",
    ]
