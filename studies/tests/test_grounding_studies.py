"""studies/benchmarks/description_grounding.py and answer_grounding.py: the unsupported
description sentences of the demo index, and the answer check over the committed reports and
the recorded closed-book answers, as recorded in golden/."""

from __future__ import annotations

import pandas as pd

from graphrag.settings import REPO_ROOT
from studies.tests.golden import assert_printed, load_benchmark
from workbench.eval.metrics import CorpusTerms


def test_benchmark_counts_the_demo_index(demo_index, tmp_path) -> None:
    bench = load_benchmark("description_grounding")
    for name in ("entities", "relationships", "text_units"):
        getattr(demo_index, name).to_parquet(tmp_path / f"{name}.parquet")
    table = bench.grounding_table(tmp_path)
    rows = bench.summary(table).set_index("kind")
    assert rows.loc["all", "sentences"] == len(table)
    assert rows.loc["all", "unsupported"] == (table["missing"].map(len) > 0).sum()
    assert rows.loc["entity", "sentences"] + rows.loc["relationship", "sentences"] == len(table)
    assert abs(rows.loc["all", "share"] - rows.loc["all", "unsupported"] / len(table)) < 1e-12
    # the demo as shipped: the count docs/research-log.md quotes
    unsupported, sentences = rows.loc["all", "unsupported"], rows.loc["all", "sentences"]
    assert_printed("description_grounding_demo", [f"{unsupported} of {sentences}"])


def test_answer_check_skips_list_marks_and_possessives_and_flags_invented_names() -> None:
    bench = load_benchmark("answer_grounding")
    corpus = CorpusTerms(["Tidewell Aquaculture lost 30,000 salmon at Corran Island."])
    records = pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2"],
            "question": ["What did Tidewell lose?"] * 2 + ["Where did the 2012 storm hit?"],
            "method": ["global", "naive", "global"],
            "answer": [
                "Tidewell's pens broke.\n6. **Corran Island** lost 30,000 salmon.",
                "Tidewell lost salmon.",
                "The storm hit Cliftonport in 2012.",
            ],
            "answer_error": [None, None, None],
        }
    )
    table = bench.answer_table(records, corpus)
    flagged = table[table["missing"].map(bool)]
    assert flagged["missing"].tolist() == [["Cliftonport"]]  # the question names 2012
    assert "6." not in table["sentence"].tolist()  # a bare list number is no sentence
    rows = bench.by_method(table)
    assert rows.loc["global", "answers"] == 2 and rows.loc["global", "answer_share"] == 0.5
    assert rows.loc["naive", "sentence_share"] == 0.0


def test_the_answer_check_is_the_committed_reports_and_the_recorded_closed_book() -> None:
    """The printout (quoted in docs/research-log.md) over the committed reports' answers and the
    recorded closed-book answers (HyDE's passages) is as recorded in golden/; the closed-book
    answers fail the check far more often than naive RAG's on the demo's fact questions."""
    bench = load_benchmark("answer_grounding")
    corpus = bench.corpus_terms(REPO_ROOT / "data" / "kestrel_bay" / "docs")
    printed = [
        line
        for report in bench.DEFAULT_REPORTS
        for line in bench.report_lines(REPO_ROOT / report, corpus)
    ]
    closed = {}
    for questions in bench.DEFAULT_CLOSED_BOOK:
        lines = bench.closed_book_lines(REPO_ROOT / questions, corpus)
        printed += lines
        closed[questions] = float(lines[1].split("grounded_sentences ")[1].split()[0])
    assert_printed("answer_grounding", printed)
    naive = pd.read_parquet(REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet")
    naive = naive[naive["method"] == "naive"]["grounded_sentences"].mean()
    assert closed["data/kestrel_bay/questions.jsonl"] < naive - 0.3
