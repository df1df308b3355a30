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
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.extract.quality import gold_keys, load_gold_graph
from graphrag.index.graph.resolve import TITLES
from graphrag.index.store import load_index
from graphrag.settings import REPO_ROOT

GOLD = REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json"


@dataclass
class MergeQuality:
    """Entity resolution against a gold graph, over pairs of extracted entities: a pair is
    merged when both got one canonical, and one gold entity when both match it."""

    precision: float
    recall: float
    merged_pairs: int
    gold_pairs: int
    wrong: list[tuple[str, str]] = field(default_factory=list)
    missed: list[tuple[str, str]] = field(default_factory=list)


def gold_of_title(title: str, gold_of_key: dict[str, str], titles: frozenset[str]) -> str | None:
    """Return the gold entity ``title`` names: by its key, or by its key once one leading
    title is dropped ("Mayor Hale" is the gold's "Hale", an alias of Desmond Hale)."""
    key = name_key(title)
    first, _, rest = key.partition(" ")
    return gold_of_key.get(key) or (gold_of_key.get(rest) if first in titles else None)


def merge_quality(
    entities: pd.DataFrame, canonical_of: dict[str, str], gold: dict, titles: frozenset[str]
) -> MergeQuality:
    """Return the pairwise precision and recall of ``canonical_of`` (entity id -> canonical id,
    merged entities only). An extracted entity no gold name matches is its own entity, so
    merging it with anything is wrong."""
    gold_of_key = gold_keys(gold)
    rows = list(zip(entities[S.ID], entities[S.TITLE], strict=True))
    truth = {i: gold_of_title(t, gold_of_key, titles) or f"extracted:{i}" for i, t in rows}
    merged, same, wrong, missed = 0, 0, [], []
    for n, (a, title_a) in enumerate(rows):
        for b, title_b in rows[n + 1 :]:
            predicted = canonical_of.get(a, a) == canonical_of.get(b, b)
            actual = truth[a] == truth[b]
            merged += predicted
            same += actual
            if predicted and not actual:
                wrong.append((title_a, title_b))
            elif actual and not predicted:
                missed.append((title_a, title_b))
    correct = merged - len(wrong)
    return MergeQuality(
        precision=correct / merged if merged else 1.0,
        recall=correct / same if same else 1.0,
        merged_pairs=merged,
        gold_pairs=same,
        wrong=wrong,
        missed=missed,
    )


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
