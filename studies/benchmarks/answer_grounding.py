"""Answer sentences that name what no document of the corpus names, by method.

Run: .venv/bin/python -m studies.benchmarks.answer_grounding [--corpus data/kestrel_bay/docs]
     [--report reports/kestrel_bay] [--report reports/kestrel_bay_thematic] ...

For each committed report (no LLM call), every sentence of every recorded answer is checked
against the whole corpus as the ``grounded_sentences`` metric checks it (eval/metrics.py, the
description check of index/grounding.py): a sentence is unsupported when a name (a
capitalized word after its first, or an acronym) or a number in it is in no document and not
in the question, as a whole word. Printed per report and method: answers, sentences,
the share of sentences unsupported, the share of answers with at least one, and the missing
terms met most often.

Then the same for closed-book answers (HyDE's recorded passages: the model's answer with no
corpus text), the floor a corpus-reading method should be above: on the demo's fact
questions they fail it often, on the thematic ones they name little, so pass it.

Why it is kept: a graph method reads its index's descriptions and reports as facts of the
corpus, and an index written by a 1.5B model holds things no document says ("Cliftonport",
studies/benchmarks/description_grounding.py). This counts how many of them reach the answers, beside
naive RAG, whose context is the documents' own text. It misses a wrong claim made of words
the corpus holds ("founded by" the wrong person), so it is a floor on what is invented.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pandas as pd

from graphrag import prompts
from graphrag.settings import REPO_ROOT
from graphrag.text.documents import load_documents
from workbench.eval.metrics import (
    CorpusTerms,
    answer_sentences,
    grounded_sentences,
    unsupported_terms,
)
from workbench.eval.questions import load_questions
from workbench.session import Workbench

DEFAULT_REPORTS = (
    "reports/kestrel_bay",
    "reports/kestrel_bay_thematic",
    "reports/kestrel_bay_heldout",
)
DEFAULT_CLOSED_BOOK = tuple(
    f"data/kestrel_bay/{name}.jsonl"
    for name in ("questions", "thematic_questions", "heldout_thematic_questions")
)


def corpus_terms(path: Path) -> CorpusTerms:
    """Return every document of the corpus at ``path``, read as the indexer reads it
    (``documents.load_documents``: a folder of .txt/.md files or a .jsonl)."""
    return CorpusTerms(load_documents(path).documents["text"])


def answer_table(records: pd.DataFrame, corpus: CorpusTerms) -> pd.DataFrame:
    """Return one row per sentence of each answered record: method, question, sentence and
    the terms of it that neither the corpus nor the question holds (empty when supported),
    as the ``grounded_sentences`` metric checks them (``eval/metrics.py``)."""
    rows = []
    answered = records[records["answer_error"].isna() | (records["answer_error"] == "")]
    for record in answered.itertuples(index=False):
        asked = CorpusTerms([str(record.question)])
        for sentence, checked in answer_sentences(str(record.answer)):
            rows.append(
                {
                    "method": record.method,
                    "question_id": record.question_id,
                    "sentence": sentence,
                    "missing": unsupported_terms(checked, corpus, asked),
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


def report_lines(report: Path, corpus: CorpusTerms, terms: int = 6) -> list[str]:
    """Return the printed lines of one report folder (docs/research-log.md quotes them)."""
    table = answer_table(pd.read_parquet(report / "records.parquet"), corpus)
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


def closed_book_lines(questions: Path, corpus: CorpusTerms) -> list[str]:
    """Return the check's printout for answers written with no corpus text: HyDE's recorded
    passages (``prompts.hypothetical_passage``, the pairwise judge's closed-book reference),
    replayed. The metric is worth reading only if these score below every method that reads
    the corpus."""
    questions_table = load_questions(questions)
    with Workbench(cache="replay") as bench:
        passages = [
            bench.llm.chat(
                prompts.hypothetical_passage(question),
                max_tokens=bench.settings.query.methods["hyde"].max_tokens,
            ).text.strip()
            for question in questions_table["question"]
        ]
    scores = [
        grounded_sentences(passage, corpus, question)
        for passage, question in zip(passages, questions_table["question"], strict=True)
    ]
    mean = sum(scores) / len(scores)
    share = sum(score < 1.0 for score in scores) / len(scores)
    return [
        f"{questions.name}: closed-book answers (HyDE's recorded passages, no corpus text)",
        f"  answers {len(scores)}  grounded_sentences {mean:.3f}  answers with an unsupported "
        f"sentence {share:.3f}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO_ROOT / "data/kestrel_bay/docs")
    parser.add_argument("--report", type=Path, action="append", help="a report folder")
    parser.add_argument("--terms", type=int, default=6, help="missing terms listed per report")
    parser.add_argument(
        "--closed-book",
        type=Path,
        action="append",
        help="a questions file whose closed-book answers (HyDE's passages) to check, replayed",
    )
    args = parser.parse_args()
    corpus = corpus_terms(args.corpus)
    for report in args.report or [REPO_ROOT / r for r in DEFAULT_REPORTS]:
        print("\n".join(report_lines(report, corpus, args.terms)))
    for questions in args.closed_book or [REPO_ROOT / q for q in DEFAULT_CLOSED_BOOK]:
        print("\n".join(closed_book_lines(questions, corpus)))


if __name__ == "__main__":
    main()
