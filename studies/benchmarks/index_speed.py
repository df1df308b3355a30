"""Seconds per 1,000 corpus tokens of the LLM-free index, by stage, and the embedder's
throughput inside the indexer against its raw limit on this machine.

Run: .venv/bin/python -m studies.benchmarks.index_speed [--input data/musique_full/docs]
     [--config data/musique/graphrag.toml] [--all-artifacts] [--limit N] [--sample 1024]

The index (``index.method = "nlp"``: no LLM call) is built into a temporary folder with an
empty vector cache there and no recorded vectors, so every vector is computed. Printed:

1. each stage's wall seconds and seconds per 1k corpus tokens (the answer model's tokens,
   as the run summary counts them), against the target of 1 s per 1k tokens;
2. each embedding call of the embed stage: texts, word pieces the model read (the texts cut
   into the model's windows, [CLS] and [SEP] included, no padding), seconds, pieces/s;
3. the model alone (sentence-transformers ``encode``) on a seeded sample of those windows
   at several batch sizes, and the physical limit: the model's multiply-adds per word piece
   against the float32 matrix-multiply rate torch reaches on this CPU.

Nothing is asserted; the machine is shared, so a figure is only as quiet as the machine was.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from graphrag.index import pipeline
from graphrag.index.run_summary import IndexSummary
from graphrag.settings import Settings, load_settings
from graphrag.text.embeddings import BATCH_SIZE, LocalEmbedder

TARGET_SECONDS_PER_1K = 1.0
BATCH_SIZES = (8, 16, 32, 64, 128)


class MeteredEmbedder(LocalEmbedder):
    """The local embedder, keeping each ``embed`` call's texts, wall and CPU seconds."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.calls: list[tuple[list[str], float, float]] = []

    def embed(self, texts: list[str]):  # noqa: ANN201 - as LocalEmbedder.embed
        wall, cpu = time.perf_counter(), time.process_time()
        vectors = super().embed(texts)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        self.calls.append((list(texts), wall, cpu))
        return vectors


def metered_stages(cpu: dict[str, float]) -> Callable[[Settings], list]:
    """Return ``pipeline.stages_for`` with each stage's CPU seconds (all threads) kept in
    ``cpu``: on a shared machine, CPU seconds over the cores is what an idle one would take."""
    plain = pipeline.stages_for

    def metered(name: str, stage: Callable) -> Callable:
        def run(tables, ctx):  # noqa: ANN001, ANN202 - a stage
            started = time.process_time()
            try:
                return stage(tables, ctx)
            finally:
                cpu[name] = time.process_time() - started

        return run

    return lambda settings: [(name, metered(name, stage)) for name, stage in plain(settings)]


def word_pieces(embedder: LocalEmbedder, texts: list[str]) -> tuple[list[str], int]:
    """Return the windows the model reads for the distinct ``texts`` and their word pieces
    ([CLS] and [SEP] included)."""
    pieces = [p for t in dict.fromkeys(texts) for p in (embedder.windows(t) if t.strip() else [t])]
    encoded = embedder.model.tokenizer(pieces, truncation=True, max_length=512, verbose=False)
    limit = int(embedder.model.max_seq_length)
    return pieces, sum(min(len(ids), limit) for ids in encoded["input_ids"])


def gemm_gflops(seconds: float = 3.0) -> float:
    """Return the float32 matrix-multiply GFLOP torch does here per CPU second, on the shape
    of the model's feed-forward layer at a batch of 32 windows of 128 pieces."""
    a, b = torch.randn(4096, 384), torch.randn(384, 1536)
    torch.matmul(a, b)
    runs, started, cpu = 0, time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        torch.matmul(a, b)
        runs += 1
    return 2 * 4096 * 384 * 1536 * runs / (time.process_time() - cpu) / 1e9


def flops_per_piece(embedder: LocalEmbedder, mean_length: float) -> float:
    """Return the model's floating-point operations per word piece: the dense layers'
    multiply-adds (2 each) and attention's over a window of ``mean_length`` pieces."""
    config = embedder.model[0].auto_model.config
    hidden, inner = config.hidden_size, config.intermediate_size
    per_layer = 2 * (4 * hidden * hidden + 2 * hidden * inner) + 4 * hidden * mean_length
    return config.num_hidden_layers * per_layer


def raw_throughput(
    embedder: LocalEmbedder, pieces: list[str], sizes: tuple[int, ...]
) -> dict[int, tuple[float, float]]:
    """Return word pieces per wall second and per CPU second of ``encode`` on ``pieces`` at
    each batch size."""
    _, total = word_pieces(embedder, pieces)
    embedder.model.encode(pieces[:64], batch_size=32, show_progress_bar=False)  # warm up
    rates = {}
    for size in sizes:
        wall, cpu = time.perf_counter(), time.process_time()
        embedder.model.encode(
            pieces, batch_size=size, normalize_embeddings=True, show_progress_bar=False
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        rates[size] = (total / wall, total / cpu)
    return rates


def corpus_sample(source: Path, limit: int | None, folder: Path) -> Path:
    """Return ``source``, or a folder of its first ``limit`` documents."""
    if not limit:
        return source
    for path in sorted(p for p in source.iterdir() if p.is_file())[:limit]:
        shutil.copy(path, folder / path.name)
    return folder


def build(
    args: argparse.Namespace,
) -> tuple[IndexSummary, float, dict[str, float], MeteredEmbedder]:
    """Build the LLM-free index with every vector computed; return its summary, wall seconds,
    CPU seconds by stage and the embedder."""
    with tempfile.TemporaryDirectory(prefix="index_speed_") as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "docs").mkdir()
        docs = corpus_sample(Path(args.input), args.limit, tmp_path / "docs")
        settings = load_settings(
            args.config,
            overrides={
                "cache": {"mode": "replay"},  # the nlp index asks no model: nothing to record
                "embeddings": {"cache_path": str(tmp_path / "vectors.sqlite"), "recorded_path": ""},
                "index": {"method": "nlp"},
            },
        )
        embedder = MeteredEmbedder(settings)
        loading = time.perf_counter()
        embedder.windows("load the model")  # once per process, not per token: apart
        print(f"model loaded in {time.perf_counter() - loading:.1f} s (not in the embed stage)")
        cpu: dict[str, float] = {}
        pipeline.stages_for = metered_stages(cpu)
        started = time.perf_counter()
        summary = pipeline.build_index(
            docs,
            tmp_path / "index",
            settings,
            embedder=embedder,
            progress=False,
            all_artifacts=args.all_artifacts,
        )
        return summary, time.perf_counter() - started, cpu, embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", default="data/musique_full/docs")
    parser.add_argument("--config", default="data/musique/graphrag.toml")
    parser.add_argument("--all-artifacts", action="store_true", help="also embed the facts")
    parser.add_argument("--limit", type=int, help="index only the first N documents")
    parser.add_argument("--sample", type=int, default=1024, help="windows the raw run encodes")
    args = parser.parse_args()
    summary, wall, cpu, embedder = build(args)
    counts, cores = summary.counts, torch.get_num_threads()
    per_1k = 1000 / counts["corpus_tokens"]
    print(
        f"{counts['documents']} documents, {counts['corpus_tokens']:,} corpus tokens, "
        f"{counts['text_units']} chunks, {counts['entities']} entities, "
        f"{counts['relationships']} relationships, {counts['community_reports']} reports; "
        f"torch threads {cores}; optional artifacts: "
        f"{'all' if args.all_artifacts else 'those the configured methods read'}"
    )
    print(f"\n{'stage':<13}{'wall s':>9}{'s / 1k tok':>12}{'CPU s':>9}{'CPU s/cores/1k tok':>20}")
    for name, stage in summary.stages.items():
        seconds = stage["wall_seconds"]
        print(
            f"{name:<13}{seconds:>9.1f}{seconds * per_1k:>12.2f}"
            f"{cpu[name]:>9.1f}{cpu[name] / cores * per_1k:>20.2f}"
        )
    used = sum(cpu.values())
    print(
        f"{'total':<13}{wall:>9.1f}{wall * per_1k:>12.2f}{used:>9.1f}"
        f"{used / cores * per_1k:>20.2f}   target <= {TARGET_SECONDS_PER_1K}"
    )

    labels = ["text units", "entities", *(["facts"] if args.all_artifacts else []), "reports"]
    print(
        f"\n{'embedded':<13}{'texts':>8}{'distinct':>10}{'pieces':>11}{'per 1k tok':>12}"
        f"{'wall s':>8}{'pieces/s':>10}{'per CPU s x cores':>19}"
    )
    windows: list[str] = []
    total = [0.0, 0.0, 0.0]
    for label, (texts, seconds, cpu_s) in zip(labels, embedder.calls, strict=False):
        pieces, n = word_pieces(embedder, texts)
        windows += pieces
        total = [total[0] + n, total[1] + seconds, total[2] + cpu_s]
        print(
            f"{label:<13}{len(texts):>8}{len(set(texts)):>10}{n:>11,}{n * per_1k:>12,.0f}"
            f"{seconds:>8.1f}{n / seconds:>10.0f}{n / cpu_s * cores:>19.0f}"
        )
    indexer_cpu_rate = total[0] / total[2] * cores
    print(
        f"{'all':<13}{'':>18}{total[0]:>11,.0f}{total[0] * per_1k:>12,.0f}{total[1]:>8.1f}"
        f"{total[0] / total[1]:>10.0f}{indexer_cpu_rate:>19.0f}"
    )

    sample = random.Random(7).sample(windows, min(args.sample, len(windows)))
    rates = raw_throughput(embedder, sample, BATCH_SIZES)
    _, sample_pieces = word_pieces(embedder, sample)
    gflops = gemm_gflops() * cores
    limit = gflops * 1e9 / flops_per_piece(embedder, sample_pieces / len(sample))
    print(f"\nmodel alone (encode, {len(sample)} sampled windows, {sample_pieces:,} pieces):")
    for size, (rate, cpu_rate) in rates.items():
        mark = "  (the indexer's, in the vector recipe)" if size == BATCH_SIZE else ""
        print(
            f"  batch {size:>4}: {rate:>6.0f} pieces/s, "
            f"{cpu_rate * cores:>6.0f} per CPU s x cores{mark}"
        )
    best = max(cpu_rate for _, cpu_rate in rates.values()) * cores
    print(
        f"  matrix multiply: {gflops:.0f} GFLOP per CPU s x cores -> limit {limit:.0f} "
        f"pieces/s; the best batch reaches {best / limit:.0%} of it, the indexer "
        f"{indexer_cpu_rate / limit:.0%} ({indexer_cpu_rate / best:.0%} of the best batch)"
    )
    floor = total[0] * per_1k / limit
    print(f"  embedding alone at the limit: {floor:.2f} s per 1k corpus tokens")


if __name__ == "__main__":
    main()
