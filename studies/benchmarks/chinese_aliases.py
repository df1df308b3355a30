"""Chinese short forms the LLM-free index merges (:func:`graphrag.index.graph.aliases.short_forms`)
on CMRC 2018's slice and the Chinese demo, and their precision on hand judgements.

Run: .venv/bin/python -m studies.benchmarks.chinese_aliases [--write]

It runs the index's own chunk, extraction and graph stages (no model), records every merge
the extraction makes, and counts the graph's entities and relationships with and without
them; ``--write`` adds the merges not yet judged to the judgement file with an empty
verdict. Precision is the share of judged merges marked "yes" (the short form names the
same entity as the full name in that document); the file says why for each "no".
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from graphrag.index.extract import nlp
from graphrag.index.nlp_stages import nlp_extract_stage, nlp_graph_stage
from graphrag.index.stages import IndexContext, chunk_stage
from graphrag.settings import REPO_ROOT, Settings
from graphrag.text.documents import load_documents
from studies.benchmarks.chinese_nlp_graph import CORPORA

CORPORA = {"cmrc2018": REPO_ROOT / "data" / "cmrc2018", "zh_demo": CORPORA["zh_demo"]}
JUDGEMENTS = REPO_ROOT / "studies" / "records" / "chinese_alias_judgements.csv"
COLUMNS = ["corpus", "document", "short", "full", "rule", "same_entity", "why"]


def graph_with_rule(folder: Path, rule) -> dict:  # noqa: ANN001 - short_forms' signature
    """Return the NLP index tables of ``folder``/docs up to its graph, extraction's short-form
    rule replaced by ``rule`` for the run."""
    settings = Settings()
    settings.index.method = "nlp"
    ctx = IndexContext(settings, llm=None, embedder=None, progress=False)  # type: ignore[arg-type]
    original, nlp.short_forms = nlp.short_forms, rule
    try:
        tables = chunk_stage({"documents": load_documents(folder / "docs").documents}, ctx)
        return nlp_graph_stage(nlp_extract_stage(tables, ctx), ctx)
    finally:
        nlp.short_forms = original


def merges(folder: Path) -> tuple[list[tuple[str, str, str, str]], dict]:
    """Return ((document, short form, full name, rule) for each merge the NLP extraction of
    ``folder``/docs makes, recorded from its short-form rule; the index tables)."""
    made: list[tuple[str, str, str, str]] = []
    rule = nlp.short_forms

    def recording(names, text_units):  # noqa: ANN001, ANN202 - the rule's own signature
        found = rule(names, text_units)
        made.extend((d, short, full, why) for (d, short), (full, why) in found.items())
        return found

    tables = graph_with_rule(folder, recording)
    return sorted(made), tables


def read_judgements(path: Path = JUDGEMENTS) -> list[dict]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as file:
        return list(csv.DictReader(file))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="add unjudged merges to the file")
    args = parser.parse_args()
    judged = {(j["corpus"], j["document"], j["short"]): j for j in read_judgements()}
    rows = list(judged.values())
    for corpus, folder in CORPORA.items():
        found, tables = merges(folder)
        before = graph_with_rule(folder, lambda names, text_units: {})
        print(
            f"{corpus}: {len(found)} merges; NLP graph without them / with them: "
            f"{len(before['entities']):,} / {len(tables['entities']):,} entities, "
            f"{len(before['relationships']):,} / {len(tables['relationships']):,} relationships"
        )
        for document, short, full, rule in found:
            verdict = judged.get((corpus, document, short), {}).get("same_entity", "")
            print(f"  {document}: {short} -> {full} ({rule}) {verdict or 'not judged'}")
            if (corpus, document, short) not in judged:
                row = (corpus, document, short, full, rule, "", "")
                rows.append(dict(zip(COLUMNS, row, strict=True)))
    for rule in ("all", *sorted({r["rule"] for r in rows})):
        verdicts = [
            r["same_entity"] for r in rows if r["same_entity"] and rule in ("all", r["rule"])
        ]
        yes = verdicts.count("yes")
        if verdicts:
            print(f"merge precision, {rule}: {yes / len(verdicts):.2f} ({yes}/{len(verdicts)})")
    if args.write:
        with JUDGEMENTS.open("w", encoding="utf-8", newline="") as file:
            writer = csv.DictWriter(file, COLUMNS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
