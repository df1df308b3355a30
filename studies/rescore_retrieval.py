"""``python -m studies.rescore_retrieval REPORT_DIR... --config TOML --corpus DOCS``: a
committed retrieval report rewritten in the current layout from its own records.

A retrieval report keeps each record's ranked text unit ids, so a score of the ranking added
later (MRR, nDCG@k) is computed from the stored rankings against the question set's gold,
with no retrieval run: the records, the tests' p-values and the per-hop rows stay as they were
recorded, and only what the ranking adds and the page layout are new. The text units' documents
come from chunking the corpus with the run's settings (the index's first stage, no model); a
ranked id the chunking does not give is an error, so a corpus or setting that differs from the
run's cannot score silently. A cross-fitted folder keeps its selection section.
``scripts/retrieval_study.sh`` re-runs the retrievals themselves (tens of minutes here).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from graphrag.index.store import Index
from graphrag.settings import load_settings
from graphrag.text.documents import chunk_documents, load_documents
from studies.crossfit import SELECTION, SETTING_KEY, selection_lines
from studies.report_prose import add_prose, read_report
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import load_questions
from workbench.eval.retrieval import NDCG_K, RetrievalEvalError
from workbench.report.retrieval_report import write_report

OPTIONS = ("seed", "n_resamples")


def corpus_evidence(config: str | None, corpus: str | Path) -> EvidenceIndex:
    """Return the text units of ``corpus`` chunked as the run's settings chunk them."""
    chunking = load_settings(config).chunking
    documents = load_documents(corpus, chunking.max_document_tokens).documents
    units = chunk_documents(documents, chunking.size, chunking.overlap)
    empty = pd.DataFrame()
    return EvidenceIndex(Index(Path(corpus), empty, units, *[empty] * 6))


def rescore(folder: str | Path, evidence: EvidenceIndex) -> Path:
    """Rewrite the retrieval report ``folder`` from its records with the ranking metrics."""
    folder = Path(folder)
    report = read_report(folder)
    records, run = report.records, report.run
    ranked = {s.removeprefix("text_unit:") for r in records["ranking"] for s in r}
    unknown = ranked - set(evidence.documents_of_unit)
    if unknown:
        raise RetrievalEvalError(
            f"{folder}: {len(unknown)} ranked text unit(s) the corpus's chunking does not give "
            f"(e.g. {sorted(unknown)[0]}): pass the run's --corpus and --config"
        )
    questions = load_questions(run["questions"].rsplit(" (", 1)[0]).set_index("id")
    support = questions["support"]
    records = records.assign(type=records["question_id"].map(questions["type"]))
    gold = [list(support[q]) for q in records["question_id"]]
    rankings = [list(r) for r in records["ranking"]]
    records["mrr"] = [evidence.reciprocal_rank(r, g) for r, g in zip(rankings, gold, strict=True)]
    records[f"ndcg_at_{NDCG_K}"] = [
        evidence.ndcg_at_k(r, g, NDCG_K) for r, g in zip(rankings, gold, strict=True)
    ]
    meta = {k: v for k, v in run.items() if k not in OPTIONS}
    options = {k: run[k] for k in OPTIONS}
    extra: list[str] = []
    if (folder / SELECTION).is_file():
        select = re.search(r"cross-fitted on (\S+) over", meta[SETTING_KEY])[1]
        extra = selection_lines(pd.read_csv(folder / SELECTION), select)
    write_report(folder, records, report.hops, meta, options, extra=extra)
    return add_prose(folder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studies.rescore_retrieval")
    parser.add_argument("reports", nargs="+", metavar="REPORT_DIR")
    parser.add_argument("--config", help="the run's settings file (its chunking)")
    parser.add_argument("--corpus", required=True, help="the run's corpus folder")
    args = parser.parse_args(argv)
    evidence = corpus_evidence(args.config, args.corpus)
    try:
        for folder in args.reports:
            print(f"rewritten: {rescore(folder, evidence)}")
    except RetrievalEvalError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
