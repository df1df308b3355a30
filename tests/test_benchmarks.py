"""Benchmark conversion: hand-made MuSiQue and HotpotQA items with known outputs, the CLI, and
the committed MuSiQue subset (data/musique) checked against its own documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag.settings import REPO_ROOT
from graphrag.text.documents import chunk_documents, load_documents
from studies.split_questions import MUSIQUE_50, splits, with_splits
from workbench.cli import main
from workbench.eval.benchmarks import (
    BenchmarkError,
    Paragraph,
    convert_benchmark,
    dev_books,
    read_hotpotqa,
)
from workbench.eval.questions import QuestionSetError, load_questions

MUSIQUE = REPO_ROOT / "data" / "musique"
SHARED_SOURCE = REPO_ROOT.parent / "shared" / "datasets" / "musique"


def paragraph(idx: int, title: str, text: str, supporting: bool) -> dict:
    return {"idx": idx, "title": title, "paragraph_text": text, "is_supporting": supporting}


SHARED = paragraph(0, "Austria", "Karl Renner led Austria after the war.", True)
ITEMS = [
    {
        "id": "2hop__1_2",
        "question": "Who led the country of the composer of Aschenbrodel?",
        "answer": "Karl Renner",
        "answer_aliases": ["Renner", "Karl Renner"],
        "answerable": True,
        "paragraphs": [
            paragraph(0, "Distractor A", "Nothing useful.", False),
            paragraph(1, "Aschenbrodel", "Aschenbrodel is by Johann Strauss II.", True),
            paragraph(2, "Distractor B", "Still nothing.", False),
            {**SHARED, "idx": 3},
            paragraph(4, "Distractor C", "Not this either.", False),
        ],
        "question_decomposition": [
            {
                "id": 1,
                "question": "Aschenbrodel >> composer",
                "answer": "Johann Strauss II",
                "paragraph_support_idx": 1,
            },
            {
                "id": 2,
                "question": "Who led #1 's country?",
                "answer": "Karl Renner",
                "paragraph_support_idx": 3,
            },
        ],
    },
    {
        "id": "2hop__3_4",
        "question": "Who led Austria?",
        "answer": "Karl Renner",
        "answer_aliases": [],
        "paragraphs": [SHARED, paragraph(1, "Distractor A", "Nothing useful.", False)],
        "question_decomposition": [
            {
                "id": 3,
                "question": "Who led Austria?",
                "answer": "Karl Renner",
                "paragraph_support_idx": 0,
            },
        ],
    },
    {"id": "3hop__never_kept", "question": "?", "answer": "x", "paragraphs": []},
]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    folder = tmp_path / "musique"
    folder.mkdir()
    (folder / "musique_train.json").write_text(json.dumps(ITEMS), encoding="utf-8")
    (folder / "README.txt").write_text("MuSiQue, CC BY 4.0\n", encoding="utf-8")
    return folder


def test_musique_conversion_by_hand(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = convert_benchmark("musique", source, out, n_questions=2, distractors=1)
    # Gold: Aschenbrodel, Austria (shared by both questions: one document); distractor A once.
    assert (summary.questions, summary.documents, summary.gold_documents) == (2, 3, 2)
    assert summary.hops == {2: 1, 1: 1}
    austria = Paragraph("Austria", SHARED["paragraph_text"], True).doc_id
    assert austria.startswith("austria_") and (out / "docs" / f"{austria}.md").read_text() == (
        "# Austria\n\nKarl Renner led Austria after the war.\n"
    )
    documents = {p.stem for p in (out / "docs").glob("*.md")}
    questions = load_questions(out / "questions.jsonl", documents=documents).set_index("id")
    first = questions.loc["2hop__1_2"]
    assert first["type"] == "multi_hop" and first["hops"] == 2
    assert first["reference"] == "Karl Renner" and first["aliases"] == ["Renner"]
    assert first["support"][1] == austria and len(first["support"]) == 2
    assert [s["answer"] for s in first["decomposition"]] == ["Johann Strauss II", "Karl Renner"]
    assert first["decomposition"][1]["support"] == austria
    assert first["gold_entities"] == ["Johann Strauss II", "Karl Renner"]
    assert first["answer_format"] == "short"
    assert (out / "SOURCE_README.txt").read_text() == "MuSiQue, CC BY 4.0\n"


def test_more_questions_than_kept_and_a_question_without_gold_are_named(
    source: Path, tmp_path: Path
) -> None:
    with pytest.raises(BenchmarkError, match="3hop__never_kept has no supporting paragraph"):
        convert_benchmark("musique", source, tmp_path / "out", n_questions=3, distractors=0)
    with pytest.raises(BenchmarkError, match="unknown benchmark format"):
        convert_benchmark("squad", source, tmp_path / "out", 1, 0)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"id": "x"}]))
    with pytest.raises(BenchmarkError, match=r"broken.json: question \[0\] lacks field"):
        convert_benchmark("musique", broken, tmp_path / "out", 1, 0)


def test_hotpotqa_format(tmp_path: Path) -> None:
    path = tmp_path / "hotpot.json"
    path.write_text(
        json.dumps(
            [
                {
                    "_id": "h1",
                    "question": "Which magazine was started first?",
                    "answer": "Arthur's Magazine",
                    "supporting_facts": [["Arthur's Magazine", 0], ["First for Women", 0]],
                    "context": [
                        ["Radio City", ["Radio City is a radio station."]],
                        ["Arthur's Magazine", ["Arthur's Magazine was a periodical", " of 1844."]],
                        ["First for Women", ["First for Women began in 1989."]],
                    ],
                }
            ]
        )
    )
    (question,) = read_hotpotqa(path)
    assert [p.supporting for p in question.paragraphs] == [False, True, True]
    assert question.paragraphs[1].text == "Arthur's Magazine was a periodical of 1844."
    assert question.hops == 2
    summary = convert_benchmark("hotpotqa", path, tmp_path / "out", 5, 1)
    assert (summary.questions, summary.documents, summary.gold_documents) == (1, 3, 2)


def test_convert_command(source: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli"
    code = main(
        ["convert", "musique", "--source", str(source), "--out", str(out), "--questions", "1"]
    )
    assert code == 0
    assert "1 questions (2-hop 1); 5 documents (2 gold, 3 distractors)" in capsys.readouterr().out
    assert (
        main(["convert", "musique", "--source", str(tmp_path / "nowhere"), "--out", str(out)]) == 1
    )
    assert "nowhere" in capsys.readouterr().err


# --------------------------------------------------------------------------- the committed set


def test_the_committed_musique_subset_is_consistent() -> None:
    documents = {p.stem for p in (MUSIQUE / "docs").glob("*.md")}
    questions = load_questions(MUSIQUE / "questions.jsonl", documents=documents)
    assert len(questions) == 50 and len(documents) == 264
    assert (questions["type"] == "multi_hop").all()
    assert questions["hops"].value_counts().to_dict() == {2: 35, 3: 12, 4: 3}
    assert questions["split"].value_counts().to_dict() == {"dev": 25, "test": 25}
    support = {d for s in questions["support"] for d in s}
    assert len(support) == 118  # the README's count of gold paragraphs for 50 questions
    for row in questions.itertuples(index=False):
        assert row.hops == len(row.decomposition)
        assert row.gold_entities == list(dict.fromkeys(s["answer"] for s in row.decomposition))
        assert {s["support"] for s in row.decomposition} <= set(row.support)
        assert row.gold_entities[-1] == row.reference  # the last hop answers the question
    # One chunk per paragraph, so evidence recall is measured per gold paragraph.
    loaded = load_documents(MUSIQUE / "docs").documents
    assert len(chunk_documents(loaded)) == len(loaded) == 264
    licence = (MUSIQUE / "README.md").read_text()
    assert "CC BY 4.0" in licence and "Trivedi" in licence
    assert (MUSIQUE / "SOURCE_README.txt").is_file()
    assert (MUSIQUE / "SOURCE_HippoRAG_LICENSE.txt").is_file()


@pytest.mark.skipif(not SHARED_SOURCE.is_dir(), reason="the shared MuSiQue source is not here")
def test_the_committed_subset_is_what_the_converter_writes(tmp_path: Path) -> None:
    convert_benchmark("musique", SHARED_SOURCE, tmp_path, n_questions=50, distractors=3)
    # then `python -m studies.split_questions` marks each question dev or test (data README)
    converted = (tmp_path / "questions.jsonl").read_text(encoding="utf-8")
    split = with_splits(converted, splits()[MUSIQUE_50])
    assert split == (MUSIQUE / "questions.jsonl").read_text(encoding="utf-8")
    fresh = {p.name: p.read_bytes() for p in (tmp_path / "docs").glob("*.md")}
    committed = {p.name: p.read_bytes() for p in (MUSIQUE / "docs").glob("*.md")}
    assert fresh == committed


# --------------------------------------------------------------------------- GraphRAG-Bench

BENCH = REPO_ROOT / "data" / "graphrag_bench"
BENCH_SOURCE = REPO_ROOT.parent / "shared" / "datasets" / "graphrag_bench"


def bench_source(folder: Path, books: int = 6) -> Path:
    """Write a GraphRAG-Bench-shaped source: ``books`` books and one question of each type."""
    import pandas as pd

    names = [f"Novel-{i}" for i in range(books)]
    texts = [
        f"Book {i}. Eugenia held out her slim hand to Bray in chapter {i}." for i in range(books)
    ]
    pd.DataFrame({"corpus_name": names, "context": texts}).to_parquet(folder / "novel.parquet")
    kinds = ["Fact Retrieval", "Complex Reasoning", "Contextual Summarize", "Creative Generation"]
    questions = [
        {
            "id": f"Novel-q{k}",
            "source": names[k],
            "question": f"Question {k}?",
            "answer": "Bray",
            "question_type": kind,
            "evidence": "Eugenia held out her hand to Bray.; Bray spoke to Eugenia.",
            "evidence_triple": "(Eugenia, held out her hand, Bray)",
        }
        for k, kind in enumerate(kinds)
    ]
    pd.DataFrame(questions).to_parquet(folder / "novel_questions.parquet")
    (folder / "LICENSE.txt").write_text("MIT\n")
    return folder


def test_graphrag_bench_conversion(tmp_path: Path, capsys) -> None:
    source = bench_source(tmp_path)
    out = tmp_path / "out"
    assert main(["convert", "graphrag-bench", "--source", str(source), "--out", str(out)]) == 0
    assert "4 questions (fact_retrieval 1, complex_reasoning 1" in capsys.readouterr().out
    docs = sorted(p.stem for p in (out / "docs").glob("*.md"))
    assert docs == [f"Novel-{i}" for i in range(6)]
    assert (out / "docs" / "Novel-0.md").read_text().startswith("# Novel-0\n\nBook 0.")
    records = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert [r["type"] for r in records] == ["local", "multi_hop", "global", "global"]
    assert records[0]["evidence"] == [
        "Eugenia held out her hand to Bray.",
        "Bray spoke to Eugenia.",
    ]
    assert records[0]["answer_keywords"] == ["Bray"] and records[1]["answer_keywords"] == []
    dev = {r["book"] for r in records if r["split"] == "dev"}
    assert dev <= set(dev_books(docs)) and len(dev_books(docs)) == 5  # whole books, seeded
    assert (out / "SOURCE_LICENSE.txt").is_file()
    load_questions(out / "questions.jsonl", documents=set(docs))
    missing = tmp_path / "missing"
    missing.mkdir()
    assert main(["convert", "graphrag-bench", "--source", str(missing), "--out", str(out)]) == 1
    assert "missing" in capsys.readouterr().err


def test_text_unit_support_names_its_chunking_when_the_index_differs(tmp_path: Path) -> None:
    record = {"id": "q", "question": "Q?", "reference": "A", "support": ["abc123"]}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(record | {"support_chunking": {"size": 600, "overlap": 100}}))
    with pytest.raises(QuestionSetError, match="chunks of .*'size': 600.* \\[chunking\\]"):
        load_questions(path, documents={"doc"})
    assert load_questions(path, documents={"doc", "abc123"})["support"][0] == ["abc123"]


def test_the_committed_graphrag_bench_set_is_consistent() -> None:
    questions = load_questions(BENCH / "questions.jsonl")
    assert len(questions) == 1624
    assert questions["split"].value_counts().to_dict() == {"test": 1043, "dev": 581}
    records = [json.loads(line) for line in (BENCH / "questions.jsonl").read_text().splitlines()]
    dev = {r["book"] for r in records if r["split"] == "dev"}
    assert dev == set(dev_books(sorted({r["book"] for r in records})))
    assert {json.dumps(r["support_chunking"]) for r in records} == {'{"size": 600, "overlap": 100}'}
    assert sum(bool(r["support"]) for r in records) > 1400
    licence = (BENCH / "README.md").read_text()
    assert "MIT" in licence and "Xiang" in licence and (BENCH / "SOURCE_LICENSE.txt").is_file()


@pytest.mark.skipif(
    not BENCH_SOURCE.is_dir(), reason="the shared GraphRAG-Bench source is not here"
)
def test_the_committed_graphrag_bench_set_is_what_the_converter_writes(tmp_path: Path) -> None:
    convert_benchmark("graphrag-bench", BENCH_SOURCE, tmp_path, 0, 0)
    fresh = [json.loads(line) for line in (tmp_path / "questions.jsonl").read_text().splitlines()]
    committed = [json.loads(line) for line in (BENCH / "questions.jsonl").read_text().splitlines()]
    for record in committed:  # the labels are the label study's (studies/graphrag_bench_labels)
        record["support"] = []
        del record["support_chunking"]
    assert fresh == committed


def test_text_units_named_as_support_are_scored_as_their_own_gold() -> None:
    """GraphRAG-Bench's support names text units of a whole book, not documents: each counts
    alone in recall@k, MRR and evidence recall."""
    import pandas as pd

    from graphrag import schemas as S
    from graphrag.index.store import Index
    from workbench.eval.metrics import EvidenceIndex

    units = pd.DataFrame(
        {S.ID: ["u1", "u2", "u3"], S.TEXT: ["one", "two", "three"], S.DOCUMENT_IDS: [["book"]] * 3}
    )
    empty = pd.DataFrame()
    evidence = EvidenceIndex(Index(Path("tiny"), empty, units, *[empty] * 6))
    assert evidence.recall_at_k(["text_unit:u3", "text_unit:u1"], ["u1", "u2"], 2) == 0.5
    assert evidence.recall_at_k(["u1"], ["book"], 1) == 1.0  # a document still works
    assert evidence.reciprocal_rank(["u3", "u2"], ["u1", "u2"]) == 0.5
    assert evidence.evidence_recall(["... two ...", "three"], ["u1", "u2"]) == 0.5
