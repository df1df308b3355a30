"""Aggregate completion tokens/s of the embedded server by parallel slots and concurrent requests.

Run: .venv/bin/python benchmarks/llm_throughput.py [--requests 4] [--tokens 64]
The cache is off here: every request is a live call. Prints one row per (slots, concurrency).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from graphrag.config import load_settings
from graphrag.llm import ChatLLM, track_usage

TOPICS = [
    "a lighthouse",
    "a kelp farm",
    "a harbour storm",
    "a fishing cooperative",
    "a research vessel",
    "a coastal festival",
    "a tidal turbine",
    "a seabird survey",
]


async def one_config(
    slots: int, concurrency: int, requests: int, tokens: int
) -> tuple[float, float]:
    settings = load_settings(
        overrides={
            "cache": {"mode": "off"},
            "embedded": {"parallel": slots, "ctx_size": 2048 * slots},
            "llm": {"concurrency": concurrency, "temperature": 0.0},
        }
    )
    llm = ChatLLM(settings)
    try:
        llm.server.ensure_running()
        await llm.achat([{"role": "user", "content": "Say hi."}], max_tokens=4)  # warm-up
        prompts = [
            f"Write a long, detailed description of {TOPICS[i % len(TOPICS)]} "
            f"(variant {i}, slots {slots}, concurrency {concurrency})."
            for i in range(requests)
        ]
        started = time.monotonic()
        with track_usage() as usage:
            await asyncio.gather(
                *(llm.achat([{"role": "user", "content": p}], max_tokens=tokens) for p in prompts)
            )
        wall = time.monotonic() - started
        return usage.completion_tokens / wall, usage.prompt_tokens / wall
    finally:
        llm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--slots", default="1,2,4")
    parser.add_argument("--concurrency", default="1,2,4")
    args = parser.parse_args()
    print(f"{'slots':>5} {'concurrent':>10} {'completion tok/s':>17} {'prompt tok/s':>13}")
    for slots in map(int, args.slots.split(",")):
        for conc in map(int, args.concurrency.split(",")):
            completion, prompt = asyncio.run(one_config(slots, conc, args.requests, args.tokens))
            print(f"{slots:>5} {conc:>10} {completion:>17.1f} {prompt:>13.1f}", flush=True)


if __name__ == "__main__":
    main()
