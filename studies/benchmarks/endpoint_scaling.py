"""Does the pipeline scale with the endpoint, not with our process? Requests kept in flight and
throughput against a scripted OpenAI-compatible endpoint with a fixed latency.

    .venv/bin/python -m studies.benchmarks.endpoint_scaling [--latency 1] [--concurrency 1,16,64]

A user who outgrows this machine points ``llm.base_url`` at a served cluster (vLLM, a hosted
API); what then bounds a run is how many requests the workbench keeps in flight
(``llm.concurrency``) and what each call costs in our own process. The endpoint here answers
every request after ``--latency`` seconds, whatever it holds, so one-at-a-time throughput is
1 / latency and an ideal pipeline at concurrency c is c times that. Each row prints the most
requests the endpoint held at once, the throughput, its ratio to concurrency 1, and the
pipeline's own time per call (the wall time beyond what the endpoint's latency explains, per
request). The cache is off: every request reaches the endpoint and nothing is recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from graphrag.llm.client import ChatLLM
from graphrag.settings import load_settings


@dataclass
class Endpoint:
    """A scripted chat endpoint on 127.0.0.1 that answers each request after ``latency`` s."""

    latency: float
    in_flight: int = 0
    max_in_flight: int = 0
    served: int = 0

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.in_flight += 1
                    endpoint.max_in_flight = max(endpoint.max_in_flight, endpoint.in_flight)
                time.sleep(endpoint.latency)
                with endpoint.lock:
                    endpoint.in_flight -= 1
                    endpoint.served += 1
                reply = json.dumps(
                    {
                        "id": "scripted",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": "ok"},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # the default backlog of 5 would refuse a burst of 64

        self.server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reset(self) -> None:
        with self.lock:
            self.in_flight = self.max_in_flight = self.served = 0

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Row:
    concurrency: int
    requests: int
    max_in_flight: int
    seconds: float
    latency: float

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds

    @property
    def overhead_ms(self) -> float:
        """Wall time beyond the endpoint's latency, per request, in milliseconds."""
        waves = math.ceil(self.requests / self.concurrency)
        return max(self.seconds - waves * self.latency, 0.0) / self.requests * 1000


def measure(endpoint: Endpoint, concurrency: int, requests: int) -> Row:
    """Send ``requests`` distinct chat requests through one ChatLLM at ``concurrency``."""
    settings = load_settings(
        env={},
        overrides={
            "llm": {"base_url": endpoint.base_url, "model": "scripted", "concurrency": concurrency},
            "cache": {"mode": "off"},
        },
    )
    llm = ChatLLM(settings)

    async def run() -> None:
        prompts = [[{"role": "user", "content": f"request {i}"}] for i in range(requests)]
        await asyncio.gather(*(llm.achat(p, max_tokens=4) for p in prompts))

    endpoint.reset()
    started = time.perf_counter()
    asyncio.run(run())
    seconds = time.perf_counter() - started
    llm.close()
    if endpoint.served != requests:
        raise RuntimeError(f"the endpoint served {endpoint.served} of {requests} requests")
    return Row(concurrency, requests, endpoint.max_in_flight, seconds, endpoint.latency)


def rows(latency: float, levels: list[int], waves: int = 2) -> list[Row]:
    """Return one row per concurrency level, each sending ``waves`` times as many requests."""
    endpoint = Endpoint(latency)
    try:
        return [measure(endpoint, c, max(waves * c, 4)) for c in levels]
    finally:
        endpoint.close()


def table(measured: list[Row]) -> list[str]:
    base = measured[0].throughput / measured[0].concurrency
    lines = [
        "| concurrency | requests | max in flight | seconds | requests/s | x one at a time "
        "| pipeline ms/call |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in measured:
        lines.append(
            f"| {r.concurrency} | {r.requests} | {r.max_in_flight} | {r.seconds:.2f} "
            f"| {r.throughput:.1f} | {r.throughput / base:.1f} | {r.overhead_ms:.1f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per reply")
    parser.add_argument("--concurrency", default="1,16,64", help="levels, comma-separated")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    print(f"scripted endpoint, {args.latency:g} s a reply, cache off")
    print("\n".join(table(rows(args.latency, levels))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
