"""A fake OpenAI-compatible endpoint in a process of its own, so a test can SIGKILL it.

Run as ``python fake_endpoint.py PORT_FILE [--die-after N]``: it answers every indexing
prompt with the deterministic scripted model of ``tests/conftest.py`` and writes its port to
PORT_FILE once listening. With ``--die-after N`` it SIGKILLs itself when request N+1 arrives,
as an endpoint killed mid-index would: that request and any in flight get no answer.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: conftest
sys.path.insert(1, str(Path(__file__).resolve().parents[2]))  # the repository: studies/

from conftest import FakeLLM, _handler, indexing_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port_file", type=Path)
    parser.add_argument("--die-after", type=int, default=0)
    args = parser.parse_args()
    lock, served = threading.Lock(), [0]

    def model(body: dict) -> str:
        with lock:
            served[0] += 1
            if args.die_after and served[0] > args.die_after:
                os.kill(os.getpid(), signal.SIGKILL)
        return indexing_model(body)

    state = FakeLLM()
    state.respond_with(model)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.replace(args.port_file)
    server.serve_forever(0.05)


if __name__ == "__main__":
    main()
