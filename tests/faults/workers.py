"""Entry points the fault tests run as separate processes (to kill them, or to race them).

``python workers.py put ROOT KEY N TAG READY GO``: store N records under one cache key, from
when GO exists (READY is created first, so the test starts every writer at once).
``python workers.py ask BASE_URL CACHE READY GO``: one chat call, started when GO exists.
``python workers.py index DOCS OUT BASE_URL CACHE EMBEDDINGS [STALL_AFTER MARKER]``: build an
index; with STALL_AFTER, the write stalls after that many parquet tables (MARKER is created
then), so the test can SIGKILL the process in the middle of writing the index.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from graphrag.llm import client as llm_client  # noqa: E402
from graphrag.settings import load_settings  # noqa: E402

llm_client.RETRY_BACKOFF = 0.01  # a retry costs milliseconds here, as in the tests' own process


def settings(base_url: str, cache: str, embeddings: str, folder: Path):  # noqa: ANN201
    empty = folder / "worker-settings.toml"
    empty.touch()
    return load_settings(
        path=empty,
        env={},
        overrides={
            "llm": {"base_url": base_url, "max_retries": 1},
            "cache": {"path": cache},
            "embeddings": {"cache_path": embeddings},
        },
    )


def put(root: str, key: str, n: str, tag: str, ready: str, go: str) -> None:
    import threading

    from graphrag.llm import cache as llm_cache
    from graphrag.llm.client import ResponseCache

    class SameThreadIds:
        """Thread ids often coincide across processes (the main thread's usually does): the
        cache module sees one that always does, so a name built from it collides for sure."""

        def __getattr__(self, name: str):  # noqa: ANN204
            return getattr(threading, name)

        @staticmethod
        def get_ident() -> int:
            return 1

    llm_cache.threading = SameThreadIds()
    cache = ResponseCache(Path(root), "on")
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.005)
    for i in range(int(n)):
        cache.put(key, {"request": {}, "response": {"tag": tag, "i": i, "pad": "x" * 20000}})


def ask(base_url: str, cache: str, ready: str, go: str) -> None:
    from graphrag.llm.client import ChatLLM

    folder = Path(ready).parent
    llm = ChatLLM(settings(base_url, cache, str(folder / "e.sqlite"), folder))
    Path(ready).touch()
    while not Path(go).exists():
        time.sleep(0.01)
    print(llm.chat([{"role": "user", "content": "the same question"}]).text)


def index(docs: str, out: str, base_url: str, cache: str, embeddings: str, *stall: str) -> None:
    import pandas as pd

    from graphrag.index.pipeline import build_index

    if stall:
        after, marker = int(stall[0]), Path(stall[1])
        write, written = pd.DataFrame.to_parquet, [0]

        def stalling(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            write(self, *args, **kwargs)
            written[0] += 1
            if written[0] == after:
                marker.touch()
                time.sleep(600)  # the test kills us here

        pd.DataFrame.to_parquet = stalling
    build_index(docs, out, settings(base_url, cache, embeddings, Path(out).parent), progress=False)


if __name__ == "__main__":
    {"put": put, "ask": ask, "index": index}[sys.argv[1]](*sys.argv[2:])
