"""Local search's text-unit order (``query.local_text_unit_order``), measured on what it shows
the model: evidence recall of the context and recall@2 / recall@5 of its ranked text units.

Run: .venv/bin/python benchmarks/local_unit_order.py [--index NAME=PATH:QUESTIONS[:CONFIG] ...]

The three orders read the same candidates (the text units of the entities local search
selected) and the same budget; only which units come first, and so which fit, differs:
"shared_mentions" (units naming most selected entities first), "entity_rank" (Microsoft
GraphRAG's: the best-matching entity's units first, by how many of its relationships each
holds) and "question" (the units whose embedding is nearest the question first). No LLM call:
local search's retrieval needs only the embedder, over indexes already built (the demo's by
``scripts/demo.sh``, MuSiQue's by ``scripts/demo.sh`` and ``scripts/record_musique.sh``);
an index folder that is missing is skipped with a line saying so. The demo as it was before
``index.reextract_empty`` became the default: build it with
``GRAPHRAG_INDEX__REEXTRACT_EMPTY=false python -m graphrag --cache replay index --input
data/kestrel_bay/docs --out output/kb_first_pass`` and add ``--index "demo first
pass=output/kb_first_pass:data/kestrel_bay/questions.jsonl"``. Each cell is the mean [95%
bootstrap CI] over the question set.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from graphrag.config import REPO_ROOT

ORDERS = ("shared_mentions", "entity_rank", "question")
SCORES = ("evidence_recall", "recall_at_2", "recall_at_5")
DEFAULT_INDEXES = [
    "demo=output/kestrel_bay:data/kestrel_bay/questions.jsonl",
    "MuSiQue nlp=output/musique_nlp:data/musique/questions.jsonl:data/musique/graphrag.toml",
    "MuSiQue llm=output/musique_llm:data/musique/questions.jsonl",
]


def parse_index(spec: str) -> tuple[str, Path, Path, Path | None]:
    """Return (name, index folder, questions file, config or None) of ``NAME=PATH:Q[:CONFIG]``."""
    name, _, rest = spec.partition("=")
    parts = rest.split(":")
    if not name or len(parts) not in (2, 3):
        raise SystemExit(f"--index {spec!r}: expected NAME=INDEX:QUESTIONS[:CONFIG]")
    config = REPO_ROOT / parts[2] if len(parts) == 3 else None
    return name, REPO_ROOT / parts[0], REPO_ROOT / parts[1], config


def order_scores(index: Path, questions: Path, config: Path | None, order: str) -> dict:
    """Return {score: stats.Estimate} of local search with ``order`` over ``index``."""
    from graphrag import Workbench
    from graphrag.eval import stats

    overrides = {"query": {"local_text_unit_order": order}}
    with Workbench(config, cache="replay", overrides=overrides) as wb:
        wb.load(index)
        with tempfile.TemporaryDirectory() as out:
            records = wb.evaluate_retrieval(questions, out=out, methods=["local"], progress=False)
    return {score: stats.bootstrap_ci(records[score]) for score in SCORES}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", help="NAME=INDEX:QUESTIONS[:CONFIG]")
    args = parser.parse_args(argv)
    print("| index | order | " + " | ".join(SCORES) + " |")
    print("|---|---|" + "---|" * len(SCORES))
    for spec in args.index or DEFAULT_INDEXES:
        name, index, questions, config = parse_index(spec)
        if not (index / "index.json").exists():
            print(f"| {name} | (no index at {index.relative_to(REPO_ROOT)}: skipped) |")
            continue
        for order in ORDERS:
            cells = [
                f"{e.mean:.3f} [{e.low:.3f}, {e.high:.3f}] (n={e.n})"
                for e in order_scores(index, questions, config, order).values()
            ]
            print(f"| {name} | {order} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
