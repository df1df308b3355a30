"""The embedded model's server process: llama.cpp's HTTP server through ``xllamacpp``, whose
wheel runs on any x86-64 CPU with AVX2. A child process of graphrag/llm/embedded/server.py, so a
native crash ends the server, not the run or Jupyter kernel. It exits when its parent dies: it
reads a pipe whose only write end the parent holds, and polls the parent pid.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time


def _exit_when_parent_dies(parent_fd: int, parent_pid: int) -> None:
    def wait_pipe() -> None:
        try:
            while os.read(parent_fd, 1):
                pass
        except OSError:
            pass
        os._exit(0)

    def poll_pid() -> None:
        while True:
            time.sleep(2.0)
            if os.getppid() != parent_pid:
                os._exit(0)

    threading.Thread(target=wait_pipe, daemon=True).start()
    threading.Thread(target=poll_pid, daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="serve a GGUF model with xllamacpp on 127.0.0.1")
    for flag in ("--model", "--alias", "--ready-file"):  # the ready file gets {url, pid}
        parser.add_argument(flag, required=True)
    for flag in "ctx-size parallel threads batch-size parent-fd parent-pid".split():
        parser.add_argument(f"--{flag}", type=int, required=True)
    parser.add_argument("--cache-reuse", type=int, default=0)
    args = parser.parse_args(argv)
    _exit_when_parent_dies(args.parent_fd, args.parent_pid)

    import xllamacpp  # here: only this child process needs the [embedded] extra's engine

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the server binds a free port itself: no race between choosing and binding
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_batch = args.batch_size
    params.cache_prompt = True  # reuse a slot's KV cache for a shared prompt prefix
    params.n_cache_reuse = args.cache_reuse
    server = xllamacpp.Server(params)
    ready = {"url": server.listening_address, "pid": os.getpid()}
    tmp = f"{args.ready_file}.{os.getpid()}.tmp"
    with open(tmp, "w") as handle:
        json.dump(ready, handle)
    os.replace(tmp, args.ready_file)
    print(f"graphrag.llm.embedded.serve: ready {json.dumps(ready)}", file=sys.stderr, flush=True)
    threading.Event().wait()  # serve until killed or orphaned
    return 0


if __name__ == "__main__":
    sys.exit(main())
