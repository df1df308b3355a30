"""Time to a first answer on a new 20-document corpus with the embedded model, live, beside
the dry run's estimate made before it (a forecast: nothing here was fitted on this corpus).

    python -m studies.benchmarks.first_answer            # ~10 min on 2 cores; writes the record
    python -m studies.cost_model --compare               # docs/cost.md quotes the record

A new project is made with ``init_project`` in a temporary folder, the first 20 documents of
MuSiQue's corpus (data/musique/docs, by name; CC BY 4.0, see its README) are copied into its
``input/``, and with an empty cache and the defaults the run goes: estimate, start the model,
index, ask local search one question, then naive RAG the same. Run it on an idle machine: the
seconds are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

from graphrag.settings import REPO_ROOT
from workbench.project import init_project
from workbench.session import Workbench

RECORD = REPO_ROOT / "studies" / "benchmarks" / "records" / "first_answer.json"
SOURCE = REPO_ROOT / "data" / "musique" / "docs"
QUESTION = "Which teams played in the 2017 World Series?"


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def measure(count: int, question: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "first-project"
        init_project(root)
        documents = sorted(SOURCE.glob("*.md"))[:count]
        for path in documents:
            shutil.copy(path, root / "input" / path.name)
        words = sum(len(p.read_text(encoding="utf-8").split()) for p in documents)
        with Workbench(root=root, cache="on") as bench:
            estimate = bench.estimate_index()
            started = time.monotonic()
            bench.llm.server.ensure_running()
            server = time.monotonic() - started
            summary = bench.index(progress=False)
            indexed = time.monotonic() - started
            answers = {}
            for method in ("local", "naive"):
                answer = bench.query(question, method=method)
                answers[method] = {
                    "seconds": answer.seconds,
                    "calls": answer.usage.calls,
                    "prompt_tokens": answer.usage.prompt_tokens,
                    "completion_tokens": answer.usage.completion_tokens,
                    "text": answer.text,
                }
                if method == "local":
                    first = time.monotonic() - started
    return {
        "command": "python -m studies.benchmarks.first_answer",
        "load_average_after": round(os.getloadavg()[1], 2),  # over the last 5 minutes
        "machine": f"{cpu_name()}, {os.cpu_count()} cores",
        "corpus": f"the first {count} documents of data/musique/docs by name (MuSiQue, CC BY 4.0)",
        "documents": len(documents),
        "words": words,
        "question": question,
        "estimate": {
            s.stage: {
                "calls": s.calls,
                "prompt_tokens": s.prompt_tokens,
                "completion_tokens": s.completion_tokens,
                "seconds": s.seconds,
            }
            for s in estimate.stages
        },
        "actual": summary.stages,
        "server_start_seconds": server,
        "index_seconds": indexed - server,
        "first_answer_seconds": first,
        "answers": answers,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20, help="documents in the corpus")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--out", type=Path, default=RECORD)
    args = parser.parse_args(argv)
    record = measure(args.count, args.question)
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(
        f"first answer after {record['first_answer_seconds']:.0f} s (model start "
        f"{record['server_start_seconds']:.0f} s, index {record['index_seconds']:.0f} s); "
        f"wrote {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
