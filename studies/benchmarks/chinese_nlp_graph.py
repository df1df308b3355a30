"""The LLM-free graph (``index.method = "nlp"``) against a gold graph, in Chinese and English:
entity precision and recall and relationship recall, measured as ``index_cost.py`` measures an
index (:func:`graphrag.index.extract.quality.extraction_quality` on the merged entities), on
the index's own chunk, extraction and graph stages (no embedder, no LLM, seconds to run).

Run: .venv/bin/python -m studies.benchmarks.chinese_nlp_graph [--missed]

Each corpus is measured twice: as the index builds it, and without the Chinese short-form
merges (:func:`graphrag.index.graph.aliases.short_forms` switched off), the before/after of
that rule.

Corpora: data/zh_demo (six Chinese passages written for the workbench, mixed-script names) and
the English demo data/kestrel_bay, with the default settings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphrag.index.extract import nlp
from graphrag.index.extract.quality import ExtractionQuality, extraction_quality, load_gold_graph
from graphrag.index.nlp_stages import nlp_extract_stage, nlp_graph_stage
from graphrag.index.stages import IndexContext, chunk_stage
from graphrag.settings import REPO_ROOT, Settings
from graphrag.text.documents import load_documents

CORPORA = {"zh_demo": REPO_ROOT / "data" / "zh_demo", "kestrel_bay": REPO_ROOT / "data/kestrel_bay"}


def nlp_tables(docs: Path, settings: Settings) -> dict:
    """Return the tables of the NLP index of ``docs`` up to its graph stage (the stages need
    no model, so the context holds none)."""
    ctx = IndexContext(settings, llm=None, embedder=None, progress=False)  # type: ignore[arg-type]
    tables = {"documents": load_documents(docs).documents}
    for stage in (chunk_stage, nlp_extract_stage, nlp_graph_stage):
        tables = stage(tables, ctx)
    return tables


def measure(folder: Path, settings: Settings) -> ExtractionQuality:
    """Return the extraction quality of the NLP graph of ``folder``/docs against its gold."""
    tables = nlp_tables(folder / "docs", settings)
    gold = load_gold_graph(folder / "gold_graph.json")
    return extraction_quality(tables["entities"], tables["relationships"], gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missed", action="store_true", help="list misses and extras")
    args = parser.parse_args()
    settings = Settings()
    settings.index.method = "nlp"
    rule = nlp.short_forms
    for name, folder in CORPORA.items():
        for merges in (False, True):
            nlp.short_forms = rule if merges else lambda names, text_units: {}
            try:
                quality = measure(folder, settings)
            finally:
                nlp.short_forms = rule
            print(f"{name}{'' if merges else ' (no short-form merges)'}: {quality.render()}")
            if args.missed:
                print(f"  missed: {', '.join(quality.missed_entities)}")
                print(f"  not in gold: {', '.join(quality.unmatched_extracted)}")


if __name__ == "__main__":
    main()
