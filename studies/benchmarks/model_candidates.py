"""Compare candidate GGUF models: install size, completion tokens/s, entities extracted.

Run: .venv/bin/python -m studies.benchmarks.model_candidates [--extra NAME=/path/to/model.gguf ...]
The default model is always measured. Extraction is scored on the first two paragraphs of
the demo corpus's first document against the gold entities those paragraphs name. The cache
is off: every figure is a live call.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from graphrag.index.extract.names import name_key
from graphrag.index.extract.record_calls import extract_chunk_records
from graphrag.llm.client import ChatLLM, run_sync, track_usage
from graphrag.llm.embedded.weights import assemble_weights
from graphrag.settings import load_settings

ROOT = Path(__file__).resolve().parents[2]  # the repository (studies/benchmarks/ is two down)
DOC = ROOT / "data/kestrel_bay/docs/01_kbmi_profile.md"
GOLD = ROOT / "data/kestrel_bay/gold_graph.json"


def paragraph_and_expected() -> tuple[str, set[str]]:
    paragraphs = [p for p in DOC.read_text().split("\n\n") if p and not p.startswith("#")]
    text = "\n\n".join(paragraphs[:2])
    expected = set()
    for entity in json.loads(GOLD.read_text())["entities"]:
        for surface in [entity["name"], *entity.get("aliases", [])]:
            if re.search(rf"\b{re.escape(surface)}\b", text):
                expected.add(entity["name"])
    return text, expected


def measure(name: str, gguf: Path) -> dict:
    settings = load_settings(
        env={},
        overrides={
            "cache": {"mode": "off"},
            "embedded": {"model_file": str(gguf), "parallel": 1, "ctx_size": 4096},
            "llm": {"concurrency": 1},
        },
    )
    llm = ChatLLM(settings)
    try:
        llm.server.ensure_running()
        with track_usage() as usage:
            started = time.monotonic()
            llm.chat(
                [{"role": "user", "content": "Describe a coastal research institute in detail."}],
                max_tokens=128,
            )
            speed = usage.completion_tokens / (time.monotonic() - started)
        text, expected = paragraph_and_expected()
        started = time.monotonic()
        result = run_sync(extract_chunk_records(llm, text, settings.index))
        seconds = time.monotonic() - started
        gold_keys = {name_key(e): e for e in expected}
        found = {
            gold_keys[k]
            for k in (name_key(e["name"]) for e in result["entities"])
            if k in gold_keys
        }
        return {
            "model": name,
            "size_mb": gguf.stat().st_size / 1e6,
            "tok_s": speed,
            "found": len(found),
            "expected": len(expected),
            "extracted": len(result["entities"]),
            "seconds": seconds,
            "missed": sorted(expected - found),
        }
    finally:
        llm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--extra", action="append", default=[], help="NAME=/path/model.gguf")
    args = parser.parse_args()
    candidates = [("qwen2.5-coder-1.5b-instruct-q4_k_m", assemble_weights())]
    candidates += [(e.split("=", 1)[0], Path(e.split("=", 1)[1])) for e in args.extra]
    print(
        f"{'model':<38}{'GGUF MB':>9}{'compl tok/s':>12}{'entities found':>16}"
        f"{'extracted':>10}{'extract s':>10}"
    )
    for name, gguf in candidates:
        r = measure(name, gguf)
        print(
            f"{r['model']:<38}{r['size_mb']:>9.0f}{r['tok_s']:>12.1f}"
            f"{r['found']:>9}/{r['expected']:<6}{r['extracted']:>10}{r['seconds']:>10.0f}"
            f"   missed: {', '.join(r['missed']) or '-'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
