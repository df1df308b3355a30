"""Throughput of the embedded server, side by side: slots, concurrency, threads, prefix reuse.

Run: .venv/bin/python -m studies.benchmarks.llm_throughput [--requests 8] [--tokens 128]
         [--configs old,default,...] [--index-demo] [--question]

Each configuration starts its own server and sends the same workload: the demo's recorded
extraction requests (real prompts: fixed instructions and worked example first, then the
chunk), live, with ``max_tokens`` capped so a run takes minutes. The figures come from the
server's own ``timings`` (prompt tokens actually evaluated, tokens served from a slot's KV
cache, tokens generated) and the wall clock. "No prefix reuse" sends ``cache_prompt: false``,
as the old default effectively had for the prefix. Nothing here is asserted; it prints.

(The README's row for an old llama-server binary came from a ``--binary PATH`` option, removed
with the ``embedded.engine = "llama-server"`` path: a llama.cpp server of one's own is an
``llm.base_url`` endpoint now.)
``--index-demo`` and ``--question`` time the live work end to end with the new default: index
the demo corpus with an empty cache, then answer and judge one question with all five methods.

``--determinism`` asks why a live re-index never repeats the recorded one (same prompts,
seed 7, temperature 0): it sends one recorded extraction request to the default server
(2 slots) again and again, fresh (``cache_prompt: false``), then with the slot's KV cache
reused, then beside a second request decoding in the other slot, and prints whether each
reply is the same text as the first fresh one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from graphrag.llm.embedded.server import EmbeddedServer
from graphrag.settings import REPO_ROOT, load_settings


@dataclass(frozen=True)
class Config:
    name: str
    parallel: int
    concurrency: int
    threads: int = 2
    reuse: bool = True


CONFIGS = {
    "old": Config("old default: 4 slots, 4 concurrent, no prefix reuse", 4, 4, reuse=False),
    "4x4": Config("4 slots, 4 concurrent, prefix reuse", 4, 4),
    "2x4": Config("2 slots, 4 concurrent, prefix reuse", 2, 4),
    "2x2": Config("2 slots, 2 concurrent, prefix reuse", 2, 2),
    "1x1": Config("1 slot, 1 concurrent, prefix reuse", 1, 1),
    "1x1-noreuse": Config("1 slot, 1 concurrent, no prefix reuse", 1, 1, reuse=False),
    "2x2-t1": Config("2 slots, 2 concurrent, 1 thread, prefix reuse", 2, 2, threads=1),
}


def extraction_requests(limit: int) -> list[dict]:
    """The demo's recorded first-round extraction request bodies, in a fixed order."""
    bodies = []
    for path in sorted((REPO_ROOT / "data" / "llm_cache").glob("*/*.json")):
        body = json.loads(path.read_text())["request"]
        messages = body["messages"]
        if len(messages) == 4 and messages[0]["content"].startswith("You build a knowledge"):
            bodies.append(body)
    return bodies[:limit]


async def run_workload(url: str, bodies: list[dict], concurrency: int, tokens: int, reuse: bool):
    gate = asyncio.Semaphore(concurrency)
    timings: list[dict] = []

    async def one(client: httpx.AsyncClient, body: dict) -> None:
        async with gate:
            payload = {**body, "max_tokens": tokens, "cache_prompt": reuse}
            reply = await client.post(f"{url}/v1/chat/completions", json=payload)
            reply.raise_for_status()
            timings.append(reply.json()["timings"])

    async with httpx.AsyncClient(timeout=3600) as client:
        await one(client, {"messages": [{"role": "user", "content": "Say hi."}]})  # warm-up
        timings.clear()
        started = time.monotonic()
        await asyncio.gather(*(one(client, b) for b in bodies))
        wall = time.monotonic() - started
    return wall, timings


def measure(config: Config, bodies: list[dict], tokens: int) -> str:
    settings = load_settings(
        env={},
        overrides={
            "cache": {"mode": "off"},
            "embedded": {
                "parallel": config.parallel,
                "threads": config.threads,
                "ctx_size": 4096 * config.parallel,
            },
        },
    )
    server = EmbeddedServer(settings, reuse=False)  # its own server, not another process's
    try:
        server.ensure_running()
        wall, timings = asyncio.run(
            run_workload(server.url, bodies, config.concurrency, tokens, config.reuse)
        )
    finally:
        server.stop()
    evaluated = sum(t["prompt_n"] for t in timings)
    reused = sum(t.get("cache_n", 0) for t in timings)
    generated = sum(t["predicted_n"] for t in timings)
    n = len(timings)
    return (
        f"{config.name:<52} {wall:>7.1f} {generated / wall:>10.1f} {evaluated / wall:>9.1f} "
        f"{(evaluated + generated) / wall:>8.1f} {evaluated / n:>10.0f} {reused / n:>8.0f}"
    )


DETERMINISM_RUNS = (  # (condition, prompt cache reused, a second request beside it)
    ("fresh", False, False),
    ("fresh again", False, False),
    ("slot's cache reused", True, False),
    ("slot's cache reused, again", True, False),
    ("fresh, beside a second request", False, True),
    ("fresh, beside a second request, again", False, True),
)


def determinism(tokens: int) -> None:
    """Print whether one request's reply depends on prefix reuse and on a concurrent slot."""
    first, second = extraction_requests(2)
    settings = load_settings(env={}, overrides={"cache": {"mode": "off"}})
    server = EmbeddedServer(settings, reuse=False)  # its own server, not another process's
    server.ensure_running()

    async def ask(client: httpx.AsyncClient, body: dict, reuse: bool) -> str:
        payload = {**body, "max_tokens": tokens, "cache_prompt": reuse}
        reply = await client.post(f"{server.url}/v1/chat/completions", json=payload)
        reply.raise_for_status()
        return reply.json()["choices"][0]["message"]["content"]

    async def run() -> list[tuple[str, str]]:
        replies = []
        async with httpx.AsyncClient(timeout=3600) as client:
            for condition, reuse, beside in DETERMINISM_RUNS:
                asks = [ask(client, first, reuse)]
                if beside:
                    asks.append(ask(client, second, False))
                replies.append((condition, (await asyncio.gather(*asks))[0]))
        return replies

    try:
        replies = asyncio.run(run())
    finally:
        server.stop()
    reference = replies[0][1]
    print(f"one recorded extraction request, max_tokens {tokens}, temperature 0, seed 7")
    for condition, text in replies:
        same = "same as the first" if text == reference else "differs from the first"
        print(f"{condition:<40} {len(text):>6} characters  {same}")


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.monotonic()
    subprocess.run(command, check=True, env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def end_to_end(index_demo: bool, question: bool) -> None:
    """Live wall time of the real work with the new default settings, from an empty cache.

    ``index_demo``: index the demo corpus with every LLM call live. ``question``: answer and
    judge one question with the five methods, every call live, over the demo index built
    from the recorded cache (so only the question's own work is timed).
    """
    work = Path(tempfile.mkdtemp(prefix="graphrag-bench-"))
    live = {
        **os.environ,
        "GRAPHRAG_CACHE__PATH": str(work / "cache"),
        "GRAPHRAG_CACHE__MODE": "on",
        "GRAPHRAG_EMBEDDINGS__CACHE_PATH": str(work / "emb.sqlite"),
        "HF_HUB_OFFLINE": "1",
    }
    py = [sys.executable, "-m", "graphrag"]
    docs = ["--input", "data/kestrel_bay/docs", "--quiet"]
    if index_demo:
        seconds = timed([*py, "index", *docs, "--out", str(work / "live_index")], live)
        print(f"index the demo corpus live (12 documents, 5,150 tokens): {seconds:.0f} s")
    if question:
        replay = {
            **live,
            "GRAPHRAG_CACHE__PATH": "data/llm_cache",
            "GRAPHRAG_CACHE__MODE": "replay",
        }
        timed([*py, "index", *docs, "--out", str(work / "index")], replay)
        questions = "data/kestrel_bay/questions.jsonl"
        ev = ["eval", "--index", str(work / "index"), "--questions", questions, "--limit", "1",
              "--out", str(work / "report"), "--judge-controls", "0", "--quiet"]  # fmt: skip
        seconds = timed(py + ev, live)
        print(f"answer and judge one question (q01), five methods, live: {seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--configs", default="old,4x4,2x4,2x2,1x1,1x1-noreuse")
    parser.add_argument("--index-demo", action="store_true")
    parser.add_argument("--question", action="store_true")
    parser.add_argument("--determinism", action="store_true")
    args = parser.parse_args()
    if args.determinism:
        determinism(args.tokens)
        return
    bodies = extraction_requests(args.requests)
    print(
        f"{len(bodies)} recorded extraction requests, max_tokens {args.tokens}, "
        f"{os.cpu_count()} cores\n"
        f"{'configuration':<52} {'wall s':>7} {'gen tok/s':>10} {'prompt/s':>9} {'all/s':>8} "
        f"{'eval/call':>10} {'kv/call':>8}",
        flush=True,
    )
    configs = [CONFIGS[name] for name in args.configs.split(",") if name]
    for config in configs:
        print(measure(config, bodies, args.tokens), flush=True)
    if args.index_demo or args.question:
        end_to_end(args.index_demo, args.question)


if __name__ == "__main__":
    main()
