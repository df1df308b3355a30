"""Answer sentences that name what no document of the corpus names, by method.

Run: .venv/bin/python benchmarks/answer_grounding.py [--corpus data/kestrel_bay/docs]
     [--report reports/kestrel_bay] [--report reports/kestrel_bay_thematic] ...

For each committed report (no LLM call), every sentence of every recorded answer is checked
against the whole corpus with the description check (index/grounding.py): a sentence is
unsupported when a name (a capitalized word after its first, or an acronym) or a number in
it is in no document, as a whole word. Printed per report and method: answers, sentences,
the share of sentences unsupported, the share of answers with at least one, and the missing
terms met most often.

Why it is kept: a graph method reads its index's descriptions and reports as facts of the
corpus, and an index written by a 1.5B model holds things no document says ("Cliftonport",
benchmarks/description_grounding.py). This counts how many of them reach the answers, beside
naive RAG, whose context is the documents' own text. It misses a wrong claim made of words
the corpus holds ("founded by" the wrong person), so it is a floor on what is invented.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from graphrag.config import REPO_ROOT
from graphrag.documents import load_documents
from graphrag.index.grounding import missing_terms
from graphrag.index.nlp_extract import sentences

DEFAULT_REPORTS = (
    "reports/kestrel_bay",
    "reports/kestrel_bay_thematic",
    "reports/kestrel_bay_heldout",
)


def corpus_text(path: Path) -> str:
    """Return every document of the corpus at ``path`` as one text, read as the indexer
    reads it (``documents.load_documents``: a folder of .txt/.md files or a .jsonl)."""
    return "\n\n".join(load_documents(path).documents["text"])


LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*])(?:\s+|$)")  # "1. " or "- " opening a list item
POSSESSIVE = re.compile(r"['’]s\b")  # "Tidewell's" names Tidewell


def answer_sentences(records: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """Return one row per sentence of each answered record: method, question, sentence and
    the terms of it that the corpus does not contain (empty when supported). A list item's
    number, Markdown bold and a possessive "'s" are not terms."""
    rows = []
    answered = records[records["answer_error"].isna() | (records["answer_error"] == "")]
    for record in answered.itertuples(index=False):
        for sentence in sentences(str(record.answer)):
            checked = POSSESSIVE.sub("", LIST_MARK.sub("", sentence.replace("**", "")))
            if not checked.strip():
                continue  # a list item's number the sentence splitter cut off on its own
            rows.append(
                {
                    "method": record.method,
                    "question_id": record.question_id,
                    "sentence": sentence,
                    "missing": missing_terms(checked, corpus),
                }
            )
    return pd.DataFrame(rows, columns=["method", "question_id", "sentence", "missing"])


def by_method(table: pd.DataFrame) -> pd.DataFrame:
    """Return per method: answers, sentences, the unsupported share of sentences and the
    share of answers with an unsupported sentence."""
    table = table.assign(unsupported=table["missing"].map(bool))
    per_answer = table.groupby(["method", "question_id"])["unsupported"].any()
    out = table.groupby("method").agg(
        sentences=("sentence", "size"), sentence_share=("unsupported", "mean")
    )
    out["answers"] = per_answer.groupby("method").size()
    out["answer_share"] = per_answer.groupby("method").mean()
    return out[["answers", "sentences", "sentence_share", "answer_share"]]


def report_lines(report: Path, corpus: str, terms: int = 6) -> list[str]:
    """Return the printed lines of one report folder (the README quotes them)."""
    table = answer_sentences(pd.read_parquet(report / "records.parquet"), corpus)
    lines = [
        f"{report.name}: answer sentences naming what no document names",
        "  method        answers  sentences  unsupported sentences  answers with one",
    ]
    for method, row in by_method(table).iterrows():
        lines.append(
            f"  {method:<13} {row.answers:>7.0f}  {row.sentences:>9.0f}  "
            f"{row.sentence_share:>21.3f}  {row.answer_share:>16.3f}"
        )
    missing = Counter(t for terms_of in table["missing"] for t in terms_of)
    listed = ", ".join(f"{t} ({n})" for t, n in missing.most_common(terms))
    lines.append(f"  most often missing: {listed or 'none'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO_ROOT / "data/kestrel_bay/docs")
    parser.add_argument("--report", type=Path, action="append", help="a report folder")
    parser.add_argument("--terms", type=int, default=6, help="missing terms listed per report")
    args = parser.parse_args()
    corpus = corpus_text(args.corpus)
    for report in args.report or [REPO_ROOT / r for r in DEFAULT_REPORTS]:
        print("\n".join(report_lines(report, corpus, args.terms)))


if __name__ == "__main__":
    main()
