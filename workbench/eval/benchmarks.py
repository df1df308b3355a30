"""QA benchmarks as a corpus folder + question set: multi-hop (MuSiQue, HotpotQA,
2WikiMultiHopQA) and SQuAD-style reading comprehension (CMRC 2018, Chinese).

The first N questions are kept; their gold paragraphs plus K distractors each become one
Markdown document per paragraph under ``docs/`` (shared paragraphs once), and
``questions.jsonl`` holds them in the workbench's format (see ``workbench.eval.questions``).
A SQuAD-style set has no distractors of its own: one question per passage is kept (its first,
so the questions are independent draws), and the other questions' passages are the distractors.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

FORMATS = ("musique", "hotpotqa", "cmrc2018", "graphrag-bench")
MUSIQUE_FILE = "musique_train.json"
CMRC_FILE = "cmrc2018_dev.json"  # its test set's answers are hidden; dev is the public gold
KEPT_SOURCE_FILES = ("README.txt", "README.md", "LICENSE", "LICENCE", "LICENSE.txt")
KEPT_SOURCE_FILES += ("HippoRAG_LICENSE.txt",)


class BenchmarkError(ValueError):
    """The benchmark file cannot be converted; the message names the file and item."""


@dataclass(frozen=True)
class Paragraph:
    title: str
    text: str
    supporting: bool
    source_id: str = ""  # the benchmark's own id, the stem when the title has no Latin letters

    @property
    def doc_id(self) -> str:
        """A stable, readable file stem: the title's slug (else the source id) and a hash of
        title and text."""
        slug = unicodedata.normalize("NFKD", self.title).encode("ascii", "ignore").decode()
        slug = re.sub(r"[^a-z0-9]+", "_", slug.lower()).strip("_")[:40]
        slug = slug or re.sub(r"[^a-z0-9]+", "_", self.source_id.lower()).strip("_") or "paragraph"
        digest = hashlib.sha1(f"{self.title}\n{self.text}".encode()).hexdigest()[:8]
        return f"{slug}_{digest}"


@dataclass
class BenchmarkQuestion:
    id: str
    question: str
    answer: str
    aliases: list[str]
    paragraphs: list[Paragraph]
    decomposition: list[dict] = field(default_factory=list)  # {question, answer, paragraph}
    hops: int | None = None
    kind: str = "multi_hop"  # the question set's type


def _load_json(path: Path, squad: bool = False) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise BenchmarkError(f"benchmark file {path}: {err}") from err
    if squad:
        if not isinstance(data, dict) or not isinstance(data.get("data"), list):
            raise BenchmarkError(f"benchmark file {path}: expected SQuAD's {{'data': [...]}}")
        return data["data"]
    if not isinstance(data, list):
        raise BenchmarkError(f"benchmark file {path}: expected a JSON list of questions")
    return data


def read_musique(path: str | Path) -> list[BenchmarkQuestion]:
    """Return MuSiQue questions (a .json list, or a folder holding musique_train.json)."""
    path = Path(path)
    path = path / MUSIQUE_FILE if path.is_dir() else path
    questions = []
    for i, item in enumerate(_load_json(path)):
        try:
            paragraphs = [
                Paragraph(p["title"], p["paragraph_text"], bool(p["is_supporting"]))
                for p in item["paragraphs"]
            ]
            by_idx = {p["idx"]: paragraphs[j] for j, p in enumerate(item["paragraphs"])}
            steps = [
                {"question": s["question"], "answer": s["answer"]}
                | {"paragraph": by_idx[s["paragraph_support_idx"]]}
                for s in item.get("question_decomposition", [])
            ]
            aliases = [a for a in item.get("answer_aliases", []) if a != item["answer"]]
            texts = (item["id"], item["question"], item["answer"], aliases)
            questions.append(BenchmarkQuestion(*texts, paragraphs, steps, len(steps) or None))
        except (KeyError, TypeError) as err:
            raise BenchmarkError(f"{path}: question [{i}] lacks field {err}") from err
    return questions


def read_hotpotqa(path: str | Path) -> list[BenchmarkQuestion]:
    """Return HotpotQA / 2WikiMultiHopQA questions (context as [title, sentences] pairs)."""
    path = Path(path)
    questions = []
    for i, item in enumerate(_load_json(path)):
        try:
            supporting = {title for title, _ in item["supporting_facts"]}
            paragraphs = [
                Paragraph(title, "".join(sentences).strip(), title in supporting)
                for title, sentences in item["context"]
            ]
            texts = (str(item.get("_id") or item["id"]), item["question"], item["answer"], [])
            questions.append(BenchmarkQuestion(*texts, paragraphs, hops=len(supporting) or None))
        except (KeyError, TypeError, ValueError) as err:
            raise BenchmarkError(f"{path}: question [{i}] is malformed ({err})") from err
    return questions


def read_cmrc2018(path: str | Path) -> list[BenchmarkQuestion]:
    """Return CMRC 2018 (SQuAD format; a file or a folder holding cmrc2018_dev.json)
    questions, the first of each passage, in file order; the first annotator's answer is the
    reference, the others' distinct answers its aliases."""
    path = Path(path)
    path = path / CMRC_FILE if path.is_dir() else path
    questions = []
    for i, article in enumerate(_load_json(path, squad=True)):
        try:
            for passage in article["paragraphs"]:
                if not passage["qas"]:
                    continue
                item = passage["qas"][0]
                answers = list(dict.fromkeys(a["text"].strip() for a in item["answers"]))
                gold = Paragraph(article["title"], passage["context"], True, passage["id"])
                texts = (item["id"], item["question"], answers[0], answers[1:])
                questions.append(BenchmarkQuestion(*texts, [gold], hops=1, kind="local"))
        except (KeyError, TypeError, IndexError) as err:
            raise BenchmarkError(f"{path}: article [{i}] is malformed ({err!r})") from err
    return questions


READERS = {"musique": read_musique, "hotpotqa": read_hotpotqa, "cmrc2018": read_cmrc2018}


@dataclass
class ConversionSummary:
    out: Path
    questions: int
    documents: int
    gold_documents: int
    hops: dict[int, int]
    kinds: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        if self.kinds:
            mix = ", ".join(f"{k} {n}" for k, n in self.kinds.items())
            return (
                f"{self.questions} questions ({mix}); {self.documents} books written to {self.out}"
            )
        mix = ", ".join(f"{h}-hop {n}" for h, n in sorted(self.hops.items()))
        gold, others = self.gold_documents, self.documents - self.gold_documents
        return (
            f"{self.questions} questions ({mix}); {self.documents} documents ({gold} gold, "
            f"{others} distractors) written to {self.out}"
        )


def question_record(question: BenchmarkQuestion) -> dict:
    """Return the question-set line (see ``workbench.eval.questions``) for one question."""
    support = list(dict.fromkeys(p.doc_id for p in question.paragraphs if p.supporting))
    record = {"id": question.id, "question": question.question, "reference": question.answer}
    record |= {"type": question.kind, "support": support, "answer_keywords": [question.answer]}
    record |= {"aliases": question.aliases, "answer_format": "short"}
    if question.hops:
        record["hops"] = question.hops
    if question.decomposition:
        record["decomposition"] = [
            {"question": s["question"], "answer": s["answer"], "support": s["paragraph"].doc_id}
            for s in question.decomposition
        ]
        record["gold_entities"] = list(
            dict.fromkeys(s["answer"] for s in question.decomposition if s["answer"].strip())
        )
    return record


def convert(
    questions: list[BenchmarkQuestion],
    out: str | Path,
    n_questions: int,
    distractors: int,
    source: Path | None = None,
    split_seed: int | None = None,
) -> ConversionSummary:
    """Write ``out/docs/*.md`` and ``out/questions.jsonl`` for the first ``n_questions`` (gold
    paragraphs plus the first ``distractors`` others each); the licence and README files of
    ``source`` are copied too, so the attribution travels with the data. With ``split_seed``
    each question gets a ``split`` (:func:`split_by_document`)."""
    kept = questions[:n_questions]
    if not kept:
        raise BenchmarkError("no questions to convert (n_questions must be at least 1)")
    out = Path(out)
    docs = _empty_docs(out)
    written: dict[str, bool] = {}
    lines = []
    hops: dict[int, int] = {}
    splits = split_by_document(kept, split_seed) if split_seed is not None else {}
    for question in kept:
        gold = [p for p in question.paragraphs if p.supporting]
        if not gold:
            raise BenchmarkError(f"question {question.id} has no supporting paragraph")
        chosen = gold + [p for p in question.paragraphs if not p.supporting][:distractors]
        for paragraph in chosen:
            if paragraph.doc_id not in written:
                (docs / f"{paragraph.doc_id}.md").write_text(
                    f"# {paragraph.title}\n\n{paragraph.text.strip()}\n", encoding="utf-8"
                )
            written[paragraph.doc_id] = written.get(paragraph.doc_id, False) or paragraph.supporting
        record = question_record(question)
        if splits:
            record["split"] = splits[question.id]
        lines.append(json.dumps(record, ensure_ascii=False))
        hops[question.hops or 0] = hops.get(question.hops or 0, 0) + 1
    (out / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if source is not None:
        _copy_attribution(source if source.is_dir() else source.parent, out, KEPT_SOURCE_FILES)
    return ConversionSummary(out, len(kept), len(written), sum(written.values()), hops)


def _copy_attribution(folder: Path, out: Path, names: tuple[str, ...]) -> None:
    """Copy the licence and README files of the source beside the data, as ``SOURCE_<name>``."""
    for name in (n for n in names if (folder / n).is_file()):
        shutil.copy(folder / name, out / f"SOURCE_{name}")


def _empty_docs(out: Path) -> Path:
    """Return ``out/docs``, emptied (a conversion replaces a previous one's documents)."""
    shutil.rmtree(out / "docs", ignore_errors=True)
    (out / "docs").mkdir(parents=True)
    return out / "docs"


def split_by_document(questions: list[BenchmarkQuestion], seed: int) -> dict[str, str]:
    """Return each question's split: the questions' first gold documents in a seeded order,
    dealt alternately ``dev`` and ``test``, so no document holds questions of both halves."""
    documents = list(dict.fromkeys(q.paragraphs[0].doc_id for q in questions if q.paragraphs))
    order = random.Random(seed).sample(documents, len(documents))
    half = {doc: ("dev", "test")[position % 2] for position, doc in enumerate(order)}
    return {q.id: half[q.paragraphs[0].doc_id] for q in questions if q.paragraphs}


def convert_benchmark(
    kind: str,
    source: str | Path,
    out: str | Path,
    n_questions: int,
    distractors: int,
    split_seed: int | None = None,
) -> ConversionSummary:
    """Read a ``kind`` benchmark file (or folder) and write its corpus and question set (all of
    GraphRAG-Bench's books and questions: ``n_questions`` and ``distractors`` do not apply)."""
    if kind == "graphrag-bench":
        return convert_graphrag_bench(source, out)
    if kind not in READERS:
        raise BenchmarkError(f"unknown benchmark format {kind!r}; known: {', '.join(FORMATS)}")
    source = Path(source)
    questions = READERS[kind](source)
    return convert(questions, out, n_questions, distractors, source=source, split_seed=split_seed)


# GraphRAG-Bench (Xiang et al. 2025), novel subset: whole books, questions of four types whose
# evidence is paraphrased. Its types map onto the workbench's (the router and the answer
# reports read `type`); the benchmark's own name stays in `category`.
GRAPHRAG_BENCH_TYPES = {
    "Fact Retrieval": "local",
    "Complex Reasoning": "multi_hop",
    "Contextual Summarize": "global",
    "Creative Generation": "global",
}
GRAPHRAG_BENCH_FILES = ("novel.parquet", "novel_questions.parquet")
DEV_BOOKS, SPLIT_SEED = 5, 46  # a seeded draw of whole books: no test book is seen in tuning


def dev_books(books: list[str], n: int = DEV_BOOKS, seed: int = SPLIT_SEED) -> list[str]:
    """Return the ``n`` books drawn (seeded, from the sorted names) as the dev split."""
    return sorted(random.Random(seed).sample(sorted(books), n))


def convert_graphrag_bench(source: str | Path, out: str | Path) -> ConversionSummary:
    """Write one Markdown document per book (``out/docs/<book>.md``) and ``questions.jsonl``:
    each question keeps its `category`, `book` and `evidence` statements; `split` is ``dev``
    for the questions of the books :func:`dev_books` draws. `support` is left empty: the
    evidence is paraphrased, so its text units are labelled by a rule over an index's chunks
    (``studies/graphrag_bench_labels.py``)."""
    source, out = Path(source), Path(out)
    try:
        books, rows = (pd.read_parquet(source / name) for name in GRAPHRAG_BENCH_FILES)
    except (OSError, ValueError) as err:
        raise BenchmarkError(f"GraphRAG-Bench folder {source}: {err}") from err
    docs = _empty_docs(out)
    for book in books.itertuples(index=False):
        text = f"# {book.corpus_name}\n\n{book.context.strip()}\n"
        (docs / f"{book.corpus_name}.md").write_text(text, encoding="utf-8")
    names = set(books["corpus_name"])
    dev = set(dev_books(list(names)))
    lines, kinds = [], {}
    for i, row in enumerate(rows.itertuples(index=False)):
        if row.question_type not in GRAPHRAG_BENCH_TYPES or row.source not in names:
            raise BenchmarkError(f"{source}: question [{i}] ({row.id}) has an unknown type or book")
        category = row.question_type.lower().replace(" ", "_")
        kinds[category] = kinds.get(category, 0) + 1
        record = {"id": row.id, "question": row.question, "reference": row.answer}
        record |= {"type": GRAPHRAG_BENCH_TYPES[row.question_type], "category": category}
        record |= {"book": row.source, "split": "dev" if row.source in dev else "test"}
        record |= {"support": [], "answer_keywords": [row.answer] * (category == "fact_retrieval")}
        record["evidence"] = [s.strip() for s in row.evidence.split(";") if s.strip()]
        lines.append(json.dumps(record, ensure_ascii=False))
    (out / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    _copy_attribution(source, out, ("README.txt", "LICENSE.txt"))
    return ConversionSummary(out, len(lines), len(books), 0, {}, kinds)
