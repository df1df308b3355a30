"""Entity resolution (graphrag/index/graph/resolve.py) on built indexes: pairwise merge
precision and recall against the demo's gold graph, entity counts before and after, and
a sample of merges for a person to read (no LLM call, no embedding call).

Run: .venv/bin/python -m studies.benchmarks.entity_resolution
     [--demo output/kestrel_bay] [--musique output/musique_full_nlp] [--sample 40]

The resolver's thresholds were set before this was run (docs/entity-resolution.md); nothing
here chooses them. A missing index folder is skipped with a line saying so.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphrag.index.extract.quality import load_gold_graph, merge_quality
from graphrag.index.graph.resolve import TITLES
from graphrag.index.store import load_index
from graphrag.settings import REPO_ROOT

GOLD = REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json"


def merges_table(aliases, limit: int, seed: int = 0) -> str:
    """Return a markdown table of ``limit`` merges drawn at random (all when fewer)."""
    sample = (
        aliases.sample(min(limit, len(aliases)), random_state=seed) if len(aliases) else aliases
    )
    lines = ["| name | merged into | rule |", "| --- | --- | --- |"]
    for row in sample.sort_values(["rule", "canonical_title"]).itertuples(index=False):
        lines.append(f"| {row.title} | {row.canonical_title} | {row.rule} |")
    return "\n".join(lines)


def report(name: str, path: Path, sample: int, gold: dict | None) -> None:
    if not (path / "index.json").is_file():
        print(f"{name}: no index at {path}, skipped")
        return
    index = load_index(path)
    aliases = index.resolution().aliases
    before = len(index.entities)
    print(f"## {name} ({path})\n")
    print(f"entities {before} -> {before - len(aliases)} ({len(aliases)} merged)")
    print("by rule:", dict(aliases["rule"].value_counts().sort_index()))
    if gold is not None:
        quality = merge_quality(index.entities, index.resolution().canonical_of, gold, TITLES)
        print(
            f"merge precision {quality.precision:.2f}, recall {quality.recall:.2f} "
            f"({quality.merged_pairs} pairs merged, {quality.gold_pairs} gold pairs)"
        )
        print("wrong:", quality.wrong or "none")
        print("missed:", quality.missed or "none")
    print()
    print(merges_table(aliases, sample))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, default=REPO_ROOT / "output" / "kestrel_bay")
    parser.add_argument("--musique", type=Path, default=REPO_ROOT / "output" / "musique_full_nlp")
    parser.add_argument("--sample", type=int, default=40, help="merges printed per index")
    args = parser.parse_args()
    report("demo (LLM mode)", args.demo, args.sample, load_gold_graph(GOLD))
    report("MuSiQue-full (NLP mode)", args.musique, args.sample, None)


if __name__ == "__main__":
    main()
