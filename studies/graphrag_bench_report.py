"""GraphRAG-Bench's retrieval report: every LLM-free chunk-ranking method on its 1,624 questions.

``run`` scores the methods with ``graphrag retrieval``'s own code (``eval.retrieval``), with
the benchmark's four question categories as the records' ``type`` (the page's per-type
section), and keeps each question's retrieval time beside the report (``timings.csv``; the
report's parquet keeps no timing). ``render`` rewrites the report from the saved run with no
index and no method, adding the times, the index's build time, the share of units from
another book, and the declared primary hypothesis (``NOTES.md`` of the report folder, written
before the test split was looked at). ``--split dev`` scores only the dev books' questions
(the pilot the primary hypothesis was chosen on); ``--sample N`` a seeded N of them and
``--category`` one of the benchmark's four categories (the query rewriters are measured on
complex reasoning, the multi-hop kind).

    python -m studies.graphrag_bench_report run --index output/graphrag_bench_nlp \
        --out reports/graphrag_bench_retrieval [--split dev]
    python -m studies.graphrag_bench_report render --out reports/graphrag_bench_retrieval
    python -m studies.graphrag_bench_report chunk-index --index output/graphrag_bench_chunks
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import pandas as pd

from graphrag import schemas as S
from graphrag.index.pipeline import stages_for
from graphrag.index.stages import IndexContext, embed_stage
from graphrag.index.store import write_index
from graphrag.text.documents import load_documents
from studies.graphrag_bench_labels import QUESTIONS, read_records
from workbench.eval.hops import HOPS_CSV
from workbench.eval.retrieval import SCORES, run_retrieval
from workbench.report.retrieval_report import RECORDS, RUN, write_report
from workbench.report.tables import table
from workbench.session import Workbench

METHODS = ("naive", "bm25", "hybrid", "local", "ppr", "hipporag", "integrate")
CONFIG = "data/graphrag_bench/graphrag.toml"
TIMINGS = "timings.csv"
INDEX_TIME = "index_seconds.txt"  # written by scripts/graphrag_bench.sh
NOTES = "NOTES.md"
OPTIONS = ("seed", "n_resamples")
SAMPLE_SEED = 63


def split_file(
    questions: Path, split: str, out: Path, sample: int = 0, category: str | None = None
) -> Path:
    """Write the questions of ``split`` ("all": both), of one ``category`` if given, to ``out``
    and return it; with ``sample``, a seeded draw of that many of each split's (in file
    order)."""
    records = [r for r in read_records(questions) if split in ("all", r["split"])]
    if category:
        records = [r for r in records if r["category"] == category]
        if not records:
            known = sorted({r["category"] for r in read_records(questions)})
            raise SystemExit(f"--category {category!r}: no such question; known: {known}")
    if sample:
        rng = random.Random(SAMPLE_SEED)
        pools = [[r for r in records if r["split"] == s] for s in ("dev", "test")]
        kept = {r["id"] for pool in pools for r in rng.sample(pool, min(sample, len(pool)))}
        records = [r for r in records if r["id"] in kept]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _command(
    methods: list[str], split: str, sample: int, primary: str | None, category: str | None
) -> str:
    """The command line that repeats the run: the flags given, beyond the defaults."""
    words = ["python -m studies.graphrag_bench_report run", f"--split {split} --sample {sample}"]
    words += [f"--category {category}"] if category else []
    words += [f"--methods {','.join(methods)}"] if tuple(methods) != METHODS else []
    words += [f"--primary '{primary}'"] if primary else []
    return " ".join(words)


def run(
    index: str,
    questions: Path,
    out: Path,
    methods: list[str],
    split: str,
    sample: int = 0,
    cache: str = "replay",
    primary: str | None = None,
    category: str | None = None,
) -> None:
    """Score ``methods`` on the questions (of ``split``, or all; of one benchmark ``category``
    if given) and write the report folder. ``cache`` "on" records what a method asks the model
    (a reranked variant's call, a query rewriter's); ``primary`` takes the place of the
    config's declared hypothesis, for a run whose methods it does not name."""
    bench = Workbench(CONFIG, cache=cache)
    if primary:
        bench.settings.eval.primary = primary
    bench.load(index)
    if split != "all" or sample or category:
        name = f"graphrag_bench_{split}_{sample or 'every'}{f'_{category}' if category else ''}"
        name += ".jsonl"  # the name a report's run.json keeps: unchanged without a category
        questions = split_file(questions, split, Path("output") / name, sample, category)
    started = time.perf_counter()
    result = run_retrieval(
        bench.settings,
        bench.index_in_use,
        bench.methods(methods),
        questions,
        command=_command(methods, split, sample, primary, category),
    )
    wall = time.perf_counter() - started
    units = bench.index_in_use.text_units
    book_of_unit = dict(zip(units[S.ID], units[S.DOCUMENT_IDS].str[0], strict=True))
    book = {r["id"]: r["book"] for r in read_records(questions)}
    category = {r["id"]: r["category"] for r in read_records(questions)}
    # the page's per-type section reads the benchmark's four categories, not the router's types
    result.records["type"] = result.records["question_id"].map(category)
    result.records["other_book_at_5"] = [
        sum(book_of_unit.get(u.removeprefix("text_unit:")) != book[q] for u in ranking[:5])
        / max(min(len(ranking), 5), 1)
        for q, ranking in zip(result.records["question_id"], result.records["ranking"], strict=True)
    ]
    out.mkdir(parents=True, exist_ok=True)
    timings = result.records[["question_id", "split", "method", "seconds"]]
    timings.to_csv(out / TIMINGS, index=False)
    print(f"{len(timings)} retrievals in {wall:.0f} s wall")
    write_report(out, result.records, result.hops, result.meta, result.options)
    render(out)


def chunk_index(docs: Path, out: Path) -> None:
    """Write the LLM-free index with its graph tables emptied and only the text units
    embedded: naive, bm25 and hybrid read text units only, so they rank exactly as on the
    whole index, at a fraction of its embedding (the entities', facts' and reports' vectors
    are most of it: see the report's Time section). The fallback when the whole index does
    not fit the session; the graph methods need the whole index."""
    bench = Workbench(CONFIG, cache="replay")
    settings = bench.settings
    tables = {"documents": load_documents(docs, settings.chunking.max_document_tokens).documents}
    ctx = IndexContext(settings, None, bench.embedder, False, frozenset())
    started = time.perf_counter()
    stages = [stage for name, stage in stages_for(settings) if name != "embed"]
    tables = stages[0](tables, ctx)  # chunk
    # the graph tables' columns, from the graph stages over one unit, then emptied
    small = {**tables, "text_units": tables["text_units"].head(1)}
    for stage in stages[1:]:
        small = stage(small, ctx)
    for name in ("entities", "relationships", "communities", "community_reports"):
        tables[name] = small[name].iloc[0:0]
    units = tables["text_units"]
    for column in small["text_units"].columns.difference(units.columns):
        units[column] = [[] for _ in range(len(units))]  # no entity, no relationship
    tables = {**small, **tables, "text_units": units[small["text_units"].columns]}
    tables = embed_stage(tables, ctx)
    manifest = {
        "input": str(docs),
        "embedding_model": bench.embedder.model_id,
        "settings": settings.to_dict(),
        "graph": "none (studies/graphrag_bench_report.py chunk-index): text units only",
    }
    write_index(tables, out, manifest)
    print(f"{out}: {len(tables['text_units'])} text units in {time.perf_counter() - started:.0f} s")


def timing_section(out: Path) -> list[str]:
    """Return the retrieval seconds per question per method (and the index's build time)."""
    lines = ["## Time", ""]
    if (out / INDEX_TIME).is_file():
        lines += [
            f"Index build (LLM-free, whole corpus): {(out / INDEX_TIME).read_text().strip()}",
            "",
        ]
    if not (out / TIMINGS).is_file():
        return lines
    timings = pd.read_csv(out / TIMINGS)
    stats = timings.groupby("method", sort=False)["seconds"].agg(["mean", "median", "max", "sum"])
    rows = [
        [m, f"{r['mean']:.3f}", f"{r['median']:.3f}", f"{r['max']:.2f}", f"{r['sum']:.0f}"]
        for m, r in stats.iterrows()
    ]
    header = ["Method", "Mean s/question", "Median s/question", "Max s", "Total s"]
    note = (
        "Wall seconds of retrieval per question on the machine of the run (what else ran "
        "beside it: README.md of this folder); a method's first question also builds the "
        "artifacts it needs, e.g. BM25 postings or fact vectors."
    )
    return [*lines, note, "", *table(header, rows), ""]


def other_book_section(records: pd.DataFrame) -> list[str]:
    """Return the share of each method's first 5 units taken from another book than the
    question's: what indexing the 16 books as one corpus (not one index a book, as
    GraphRAG-Bench's own runs do) costs."""
    if "other_book_at_5" not in records.columns:
        return []
    shares = records.groupby("method", sort=False)["other_book_at_5"].mean()
    return [
        "## Units from another book",
        "",
        "The 16 books are one index (GraphRAG-Bench's runs index each book alone): the share "
        "of a method's first 5 ranked text units that come from another book than the "
        "question's, all questions. Near 0, the single index costs little.",
        "",
        *table(
            ["Method", "Other-book share of top 5"], [[m, f"{v:.3f}"] for m, v in shares.items()]
        ),
        "",
    ]


def render(out: Path) -> None:
    """Rewrite ``out``'s report from its saved records, with the sections above."""
    records = pd.read_parquet(out / RECORDS)
    meta = json.loads((out / RUN).read_text(encoding="utf-8"))
    options = {k: meta.pop(k) for k in OPTIONS}
    hops = pd.read_csv(out / HOPS_CSV)
    extra = []
    if (out / NOTES).is_file():
        extra += [(out / NOTES).read_text(encoding="utf-8").strip(), ""]
    extra += other_book_section(records)
    extra += timing_section(out)
    write_report(out, records, hops, meta, options, extra)
    print(f"{out}/summary.md: {records['question_id'].nunique()} questions, metrics {SCORES}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["run", "render", "chunk-index"])
    parser.add_argument("--docs", default="output/graphrag_bench/docs")
    parser.add_argument("--index", default="output/graphrag_bench_nlp")
    parser.add_argument("--questions", default=str(QUESTIONS))
    parser.add_argument("--out", default="reports/graphrag_bench_retrieval")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--split", choices=["all", "dev", "test"], default="all")
    parser.add_argument("--sample", type=int, default=0, help="a seeded N of each split")
    parser.add_argument("--category", help="one question category, e.g. complex_reasoning")
    parser.add_argument("--cache", choices=["on", "replay"], default="replay")
    parser.add_argument("--primary", help="declared hypothesis (default: the config's)")
    args = parser.parse_args()
    if args.step == "run":
        run(
            args.index,
            Path(args.questions),
            Path(args.out),
            args.methods.split(","),
            args.split,
            args.sample,
            args.cache,
            args.primary,
            args.category,
        )
    elif args.step == "chunk-index":
        chunk_index(Path(args.docs), Path(args.index))
    else:
        render(Path(args.out))


if __name__ == "__main__":
    main()
