"""Local search's text units: their order (``query.local.text_unit_order``) and their share of
the budget (``--shares``), measured on what local search shows the model: evidence recall of
the context and recall@2 / recall@5 of its ranked text units.

Run: .venv/bin/python -m studies.benchmarks.local_unit_order
     [--index NAME=PATH:QUESTIONS[:CONFIG] ...]
     .venv/bin/python -m studies.benchmarks.local_unit_order --shares 0.5,0.6,0.7,0.8,0.9
     [--index ...]

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

``--shares`` measures instead how much of local search's budget its text units get
(``query.local.text_unit_share``, reports keeping ``community_share`` while it fits
beside it, the graph items the rest), in the order each index's settings give, beside naive
RAG's context at the same budget; context tokens are the mean tokens local search put in
the prompt.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from graphrag.settings import REPO_ROOT

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


def retrieval_records(
    index: Path, questions: Path, config: Path | None, query: dict, methods: list[str]
):
    """Return the retrieval records of ``methods`` over ``index`` with ``query`` overridden."""
    from workbench import Workbench

    with Workbench(config, cache="replay", overrides={"query": query}) as wb:
        wb.load(index)
        with tempfile.TemporaryDirectory() as out:
            return wb.evaluate_retrieval(questions, out=out, methods=methods, progress=False)


def cells(records, scores) -> list[str]:
    from workbench.eval import stats

    return [
        f"{e.mean:.3f} [{e.low:.3f}, {e.high:.3f}] (n={e.n})"
        for e in (stats.bootstrap_ci(records[score]) for score in scores)
    ]


def order_rows(name: str, index: Path, questions: Path, config: Path | None) -> None:
    for order in ORDERS:
        query = {"local": {"text_unit_order": order}}
        records = retrieval_records(index, questions, config, query, ["local"])
        print(f"| {name} | {order} | " + " | ".join(cells(records, SCORES)) + " |")


def share_rows(
    name: str, index: Path, questions: Path, config: Path | None, shares: list[float]
) -> None:
    from graphrag.settings import load_settings

    reports = load_settings(config).query.methods["local"].community_share
    for share in shares:
        # reports keep their share while it fits beside the text units'
        own = {"text_unit_share": share, "community_share": min(reports, 1 - share)}
        query = {"local": own}
        records = retrieval_records(index, questions, config, query, ["local", "naive"])
        local, naive = (records[records["method"] == m] for m in ("local", "naive"))
        tokens = f"{local['context_tokens'].mean():,.0f}"
        row = [*cells(local, SCORES[:1]), tokens, *cells(naive, SCORES[:1])]
        print(f"| {name} | {share} | " + " | ".join(row) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", action="append", help="NAME=INDEX:QUESTIONS[:CONFIG]")
    parser.add_argument(
        "--shares", help="comma-separated query.local.text_unit_share values to compare instead"
    )
    args = parser.parse_args(argv)
    shares = [float(s) for s in args.shares.split(",")] if args.shares else None
    if shares:
        columns = ["local evidence_recall", "local context tokens", "naive evidence_recall"]
        print("| index | text-unit share | " + " | ".join(columns) + " |")
    else:
        columns = list(SCORES)
        print("| index | order | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for spec in args.index or DEFAULT_INDEXES:
        name, index, questions, config = parse_index(spec)
        if not (index / "index.json").exists():
            print(f"| {name} | (no index at {index.relative_to(REPO_ROOT)}: skipped) |")
        elif shares:
            share_rows(name, index, questions, config, shares)
        else:
            order_rows(name, index, questions, config)


if __name__ == "__main__":
    main()
