"""The LLM-free graph (``index.method = "nlp"``) against a gold graph, in Chinese and English:
entity precision and recall and relationship recall, measured as ``index_cost.py`` measures an
index (:func:`graphrag.index.extract.quality.extraction_quality` on the merged entities), but
on the extraction and graph stages alone (no embedder, no LLM, seconds to run).

Run: .venv/bin/python -m studies.benchmarks.chinese_nlp_graph [--missed]

Corpora: data/zh_demo (six Chinese passages written for the workbench, mixed-script names) and
the English demo data/kestrel_bay, each chunked with the index's defaults.
"""

from __future__ import annotations

import argparse

from graphrag.index.extract.nlp import extract_graph_nlp, keep_frequent, pmi_weights
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.nlp_stages import nlp_graph
from graphrag.settings import REPO_ROOT, ChunkingSettings, IndexSettings
from graphrag.text.documents import chunk_documents, load_documents

CORPORA = {"zh_demo": REPO_ROOT / "data" / "zh_demo", "kestrel_bay": REPO_ROOT / "data/kestrel_bay"}


def measure(folder, settings: IndexSettings):
    """Return the extraction quality of the nlp graph of ``folder``/docs against its gold."""
    chunking = ChunkingSettings()
    units = chunk_documents(
        load_documents(folder / "docs").documents, chunking.size, chunking.overlap
    )
    entity_mentions, relationship_mentions, _, _ = extract_graph_nlp(units, settings)
    entity_mentions, relationship_mentions = keep_frequent(
        entity_mentions, relationship_mentions, settings.nlp_min_chunks
    )
    relationship_mentions = pmi_weights(relationship_mentions, entity_mentions, len(units))
    entities, relationships = nlp_graph(entity_mentions, relationship_mentions, 800)
    return extraction_quality(entities, relationships, load_gold_graph(folder / "gold_graph.json"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missed", action="store_true", help="list misses and extras")
    args = parser.parse_args()
    settings = IndexSettings()
    for name, folder in CORPORA.items():
        quality = measure(folder, settings)
        print(f"{name}: {quality.render()}")
        if args.missed:
            print(f"  missed: {', '.join(quality.missed_entities)}")
            print(f"  not in gold: {', '.join(quality.unmatched_extracted)}")


if __name__ == "__main__":
    main()
