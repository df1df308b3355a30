"""Replay re-index of the demo corpus from the recorded LLM cache: where the wall time goes.

Run: .venv/bin/python -m studies.benchmarks.replay_index [--warm] [--input data/kestrel_bay/docs]
     [--config data/musique/graphrag.toml]

The index is rebuilt into a temporary folder with ``cache.mode = "replay"`` (no model is
started; a request missing from the cache ends the run with exit code 2) and a fresh
embeddings cache, twice: first with no recorded vectors, so every vector is computed (cold),
then reading the committed packs (``embeddings.recorded_path``) as a clean checkout does.
``--warm`` adds a third pass that reuses the cold pass's embeddings cache.

In replay every LLM call is answered from disk, so "time inside LLM calls" is the cache
look-up time (hash the request, read and parse one JSON file, build the openai response) and
the share of wall time outside LLM calls is the pipeline's own overhead: chunking, merging,
clustering, embedding and writing the index. Nothing is asserted; the target is printed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from graphrag.index.pipeline import build_index
from graphrag.index.run_summary import IndexSummary
from graphrag.llm.client import CacheMissError, ChatLLM, LLMError
from graphrag.settings import REPO_ROOT, Settings, load_settings

TARGET_OUTSIDE_SHARE = 0.10


def _no_live_calls() -> str:
    raise LLMError("replay benchmark: a live LLM call was attempted; none is allowed here")


class TimedLLM(ChatLLM):
    """A ChatLLM that records when each call started and ended (the stages call ``achat``).

    ``Usage.seconds`` counts only time waited on a live endpoint (0 for a cache hit), so the
    look-up time of a replay is measured here instead.
    """

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, upstream=_no_live_calls)
        self.intervals: list[tuple[float, float]] = []

    async def achat(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - same as ChatLLM
        started = time.monotonic()
        try:
            return await super().achat(*args, **kwargs)
        finally:
            self.intervals.append((started, time.monotonic()))

    def chat(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN201 - same as ChatLLM
        started = time.monotonic()
        try:
            return super().chat(*args, **kwargs)
        finally:
            self.intervals.append((started, time.monotonic()))

    def in_flight_seconds(self) -> float:
        """Return the wall time during which at least one call was running (calls overlap)."""
        total, end = 0.0, float("-inf")
        for start, stop in sorted(self.intervals):
            if stop <= end:
                continue
            total += stop - max(start, end)
            end = stop
        return total


def replay(input_path: Path, config: Path | None, embeddings: dict[str, str], label: str) -> None:
    settings = load_settings(
        config, overrides={"cache": {"mode": "replay"}, "embeddings": embeddings}
    )
    llm = TimedLLM(settings)
    with tempfile.TemporaryDirectory(prefix="replay_index_") as out:
        started = time.monotonic()
        try:
            summary = build_index(input_path, out, settings, llm=llm, progress=False)
        except CacheMissError as err:
            cache = settings.resolve_path(settings.cache.path)
            recorded = sum(1 for _ in cache.glob("*/*.json"))
            print(
                f"{label}: the recorded cache {cache} is incomplete ({recorded} "
                "responses recorded so far), so this corpus cannot be replayed yet. A live "
                "`python -m graphrag index` run records the missing calls; re-run this "
                f"benchmark when it has finished.\nfirst miss: {err}",
                file=sys.stderr,
            )
            sys.exit(2)
        finally:
            llm.close()
        wall = time.monotonic() - started
    print(render(summary, wall, llm.in_flight_seconds(), settings, label))


def render(
    summary: IndexSummary, wall: float, in_flight: float, settings: Settings, label: str
) -> str:
    stages = summary.stages
    usage_seconds = sum(s["seconds"] for s in stages.values())
    model_seconds = sum(s["model_seconds"] for s in stages.values())
    embed = stages["embed"]["wall_seconds"]
    outside = wall - in_flight
    share = outside / wall if wall else 0.0
    verdict = "PASS" if share < TARGET_OUTSIDE_SHARE else "MISS"
    lines = [
        f"== {label} ==",
        f"{'stage':<12}{'calls':>7}{'hits':>7}{'Usage s':>9}{'wall s':>9}",
        *(
            f"{name:<12}{s['calls']:>7.0f}{s['cache_hits']:>7.0f}{s['seconds']:>9.2f}"
            f"{s['wall_seconds']:>9.2f}"
            for name, s in stages.items()
        ),
        f"total wall seconds                        {wall:8.2f}",
        f"LLM seconds, sum of Usage.seconds         {usage_seconds:8.2f}"
        "  (live waits only: 0 for a cache hit)",
        f"LLM seconds, calls in flight (look-ups)   {in_flight:8.2f}",
        f"embedding seconds (embed stage wall)      {embed:8.2f}",
        f"outside LLM calls                         {outside:8.2f}  = {share:.1%} of wall"
        f"  target < {TARGET_OUTSIDE_SHARE:.0%}: {verdict}",
    ]
    if model_seconds:
        # The recorded seconds of concurrent calls overlap; dividing by the concurrency they were
        # recorded with approximates the wall time a live run would spend waiting on the model.
        live = model_seconds / settings.llm.concurrency
        lines.append(
            f"recorded model seconds {model_seconds:.0f} (÷ llm.concurrency "
            f"{settings.llm.concurrency} ≈ {live:.0f} s live): overhead would be about "
            f"{outside / (outside + live):.1%} of a live run (estimate)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", type=Path, default=REPO_ROOT / "data" / "kestrel_bay" / "docs")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="settings the corpus's index was recorded with (default: the defaults, which "
        "the demo's is recorded with)",
    )
    parser.add_argument(
        "--warm", action="store_true", help="time a second pass that reuses the embeddings cache"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay_embeddings_") as folder:
        computed = {"cache_path": str(Path(folder) / "embeddings.sqlite"), "recorded_path": ""}
        replay(args.input, args.config, computed, "cold replay (every vector computed)")
        recorded = {"cache_path": str(Path(folder) / "fresh.sqlite")}  # packs as configured
        replay(args.input, args.config, recorded, "replay reading the recorded vectors")
        if args.warm:
            replay(args.input, args.config, computed, "warm replay (embeddings cache reused)")


if __name__ == "__main__":
    main()
