"""Description sentences that name what their sources do not: how many, and which.

Run: .venv/bin/python -m studies.benchmarks.description_grounding [--index output/kestrel_bay]
     [--index output/musique_llm] [--examples 8]

For each built index (no LLM call), every sentence of every entity and relationship
description is checked against the chunks that entity or relationship was extracted from
(index/grounding.py): a sentence is unsupported when a name or number in it is in none of
them. Printed per index: sentences and the unsupported share by kind, the missing terms
met most often, and examples.

Why it is kept: these sentences are what ``index.ground_descriptions`` would drop, and
every graph method reads them as facts of the corpus ("Storm that occurred in
Cliftonport": no document names the town). The setting is off because turning it on
changes descriptions, reports and so every graph method's recorded answers.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pandas as pd

from graphrag.index.extract.grounding import unsupported_sentences
from graphrag.settings import REPO_ROOT

DEFAULT_INDEXES = ("output/kestrel_bay", "output/musique_llm")


def grounding_table(index: Path) -> pd.DataFrame:
    """Return :func:`unsupported_sentences` of the index folder's tables."""
    tables = {
        name: pd.read_parquet(index / f"{name}.parquet")
        for name in ("entities", "relationships", "text_units")
    }
    return unsupported_sentences(tables["entities"], tables["relationships"], tables["text_units"])


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Return sentences, unsupported sentences and their share per kind, and in all."""
    table = table.assign(unsupported=table["missing"].map(len) > 0)
    rows = [
        {
            "kind": kind,
            "sentences": len(part),
            "unsupported": int(part["unsupported"].sum()),
            "share": part["unsupported"].mean() if len(part) else 0.0,
        }
        for kind, part in [*table.groupby("kind"), ("all", table)]
    ]
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", help="an index folder (repeatable)")
    parser.add_argument("--examples", type=int, default=8)
    args = parser.parse_args()
    for name in args.index or DEFAULT_INDEXES:
        index = Path(name) if Path(name).is_absolute() else REPO_ROOT / name
        if not (index / "entities.parquet").exists():
            print(f"{name}: no index (build it with scripts/demo.sh)\n")
            continue
        table = grounding_table(index)
        print(f"== {name}")
        print(summary(table).to_string(index=False, float_format="{:.3f}".format))
        terms = Counter(t for missing in table["missing"] for t in missing)
        print("missing terms met most:", ", ".join(f"{t} ({n})" for t, n in terms.most_common(8)))
        bad = table[table["missing"].map(len) > 0].head(args.examples)
        for row in bad.itertuples(index=False):
            print(f"  {row.name}: {row.sentence!r} lacks {', '.join(row.missing)}")
        print()


if __name__ == "__main__":
    main()
