"""Gold text units for GraphRAG-Bench, whose evidence is paraphrased: a rule labels them.

The rule. Each evidence statement (a question's `evidence`, one statement per item) is scored
against every text unit of its own book (cut as the index cuts them: 600 tokens, 100
overlapping) by ``overlap``: the IDF-weighted share of the statement's content words (BM25's
English words: lower case, stop words out; compared on their first ``STEM`` letters, so that
"held"/"holds" or "married"/"marrying" meet) that the unit holds, the IDF over the book's
units, so a character's name weighs more than "said". A unit is labelled for a statement when
its overlap reaches ``MIN_OVERLAP`` and is within ``MARGIN`` of the statement's best unit
(the best, its overlapping neighbour, or a second passage saying the same), among the
statement's ``TOP`` best units. A question's `support` is the union over its statements; a
statement the book does not say in so many words (an inference such as "the sequence
establishes a pattern") mostly gets none.

The thresholds were chosen on hand judgments of DEV books' statements only
(``studies/records/graphrag_bench_label_judgments.csv``, rows ``dev``: 30 statements drawn
with seed 63, each statement's top units judged relevant or not); the rule's precision and
recall are measured on 50 TEST books' statements judged the same way (rows ``test``): ``python
-m studies.graphrag_bench_labels validate``. Embedding similarity was planned beside the
overlap, but the unit vectors did not exist in time on the shared machine; the overlap alone
is what the hand check measures.

    python -m studies.graphrag_bench_labels candidates   # scores of output/graphrag_bench
    python -m studies.graphrag_bench_labels show --split dev --n 30   # for hand judgment
    python -m studies.graphrag_bench_labels tune         # thresholds from the dev judgments
    python -m studies.graphrag_bench_labels label        # -> data/graphrag_bench/questions.jsonl
    python -m studies.graphrag_bench_labels validate     # precision and recall, dev and test
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.settings.index import ChunkingSettings
from graphrag.text.documents import chunk_documents, load_documents
from graphrag.text.lang.english import sentences, words

STEM = 5
MIN_OVERLAP, MARGIN = 0.5, 0.15  # best F1 on the dev judgments (tune)
TOP = 5  # candidate units kept per statement (the labelled ones are among them)
CANDIDATES = Path("output/graphrag_bench/label_candidates.parquet")
JUDGMENTS = Path("studies/records/graphrag_bench_label_judgments.csv")
QUESTIONS = Path("data/graphrag_bench/questions.jsonl")
SAMPLE_SEED = 63  # the issue that asked for the labels


def stems(text: str) -> set[str]:
    return {w[:STEM] for w in words(text) if not w.isdigit() or len(w) > 1}


def read_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def statements(records: list[dict]) -> pd.DataFrame:
    """Return one row per evidence statement: its id (question id '#' number), book, split."""
    return pd.DataFrame(
        {
            "statement_id": f"{r['id']}#{i}",
            "question_id": r["id"],
            "book": r["book"],
            "split": r["split"],
            "category": r["category"],
            "statement": text,
        }
        for r in records
        for i, text in enumerate(r["evidence"])
    )


def text_units(docs: Path) -> pd.DataFrame:
    """Return the corpus's text units as the index cuts them (the default chunking)."""
    chunking = ChunkingSettings()
    documents = load_documents(docs, chunking.max_document_tokens).documents
    units = chunk_documents(documents, chunking.size, chunking.overlap)
    return units.assign(book=units[S.DOCUMENT_IDS].str[0])


def candidates(docs: Path, questions: Path) -> pd.DataFrame:
    """Return the ``TOP`` units of each statement's book by overlap (ties: book order)."""
    units = text_units(docs)
    rows = statements(read_records(questions))
    out = []
    for book, unit_rows in units.groupby("book"):
        unit_stems = [stems(t) for t in unit_rows[S.TEXT]]
        df = Counter(w for u in unit_stems for w in u)
        idf = {w: math.log(len(unit_stems) / n) + 1.0 for w, n in df.items()}
        for i in rows.index[rows["book"] == book]:
            wanted = stems(rows.at[i, "statement"]) or {""}
            weight = {w: idf.get(w, math.log(len(unit_stems)) + 1.0) for w in wanted}
            total = sum(weight.values())
            overlap = np.array([sum(weight[w] for w in wanted & u) / total for u in unit_stems])
            for j in np.argsort(-overlap, kind="stable")[:TOP]:
                unit = unit_rows[S.ID].iloc[j]
                out.append(
                    {
                        "statement_id": rows.at[i, "statement_id"],
                        "unit_id": unit,
                        "overlap": float(overlap[j]),
                    }
                )
    frame = pd.DataFrame(out).merge(rows, on="statement_id")
    frame["rank"] = frame.groupby("statement_id")["overlap"].rank(ascending=False, method="first")
    return frame


def labelled(
    frame: pd.DataFrame, min_overlap: float = MIN_OVERLAP, margin: float = MARGIN
) -> pd.Series:
    """Return, per candidate row, whether the rule labels it: its overlap reaches
    ``min_overlap`` and is within ``margin`` of its statement's best unit's."""
    best = frame.groupby("statement_id")["overlap"].transform("max")
    return (frame["overlap"] >= min_overlap) & (frame["overlap"] >= best - margin)


def best_sentences(statement: str, text: str, n: int = 2) -> str:
    """Return the ``n`` sentences of ``text`` sharing most stems with ``statement``, in order."""
    wanted = stems(statement)
    parts = sentences(text)
    ranked = sorted(range(len(parts)), key=lambda i: -len(wanted & stems(parts[i])))[:n]
    return " […] ".join(re.sub(r"\s+", " ", parts[i])[:400] for i in sorted(ranked))


def show(frame: pd.DataFrame, docs: Path, split: str, n: int, seed: int) -> None:
    """Print a seeded sample of ``split`` statements with their top-3 units' best sentences."""
    texts = text_units(docs).set_index(S.ID)[S.TEXT]
    ids = sorted(frame.loc[frame["split"] == split, "statement_id"].unique())
    chosen = random.Random(seed).sample(ids, n)
    frame = frame.assign(label=labelled(frame))
    for sid in chosen:
        mine = frame[frame["statement_id"] == sid]
        rows = mine[(mine["rank"] <= 3) | mine["label"]].sort_values("rank")
        print(f"\n=== {sid} [{rows['category'].iloc[0]}] {rows['statement'].iloc[0]}")
        for row in rows.itertuples():
            mark = "L" if row.label else "-"
            print(f"  {mark} {row.unit_id} r{row.rank:.0f} ov={row.overlap:.2f}")
            print(f"      {best_sentences(row.statement, texts[row.unit_id])}")


def label(frame: pd.DataFrame, questions: Path, out: Path) -> None:
    """Write ``out``: the question set with `support` = the labelled units of its statements
    and `support_chunking`, the chunking those unit ids belong to."""
    chosen = frame[labelled(frame)]
    by_question = (
        chosen.sort_values(["question_id", "statement_id", "rank"])
        .groupby("question_id")["unit_id"]
        .agg(lambda ids: list(dict.fromkeys(ids)))
    )
    chunking = ChunkingSettings()
    lines = []
    for record in read_records(questions):
        record["support"] = by_question.get(record["id"], [])
        record["support_chunking"] = {"size": chunking.size, "overlap": chunking.overlap}
        lines.append(json.dumps(record, ensure_ascii=False))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    n = sum(1 for line in lines if json.loads(line)["support"])
    print(f"{out}: {n} of {len(lines)} questions have gold units ({len(chosen)} pairs)")


def validate(frame: pd.DataFrame, judgments: Path, split: str = "test") -> dict[str, float]:
    """Return the rule's precision and recall over the hand-judged (statement, unit) pairs of
    ``split``: precision = judged relevant among labelled; recall = labelled among judged
    relevant (the units judged were each statement's top 3 and every labelled one)."""
    judged = pd.read_csv(judgments)
    judged = judged[judged["split"] == split]
    frame = frame.assign(label=labelled(frame))
    merged = judged.merge(frame[["statement_id", "unit_id", "label"]], how="left")
    merged["label"] = merged["label"].fillna(False).astype(bool)
    relevant = merged["verdict"] == "relevant"
    tp = int((merged["label"] & relevant).sum())
    result = {
        "statements": merged["statement_id"].nunique(),
        "pairs": len(merged),
        "labelled": int(merged["label"].sum()),
        "relevant": int(relevant.sum()),
        "precision": tp / max(int(merged["label"].sum()), 1),
        "recall": tp / max(int(relevant.sum()), 1),
    }
    return result


def tune(frame: pd.DataFrame, judgments: Path) -> tuple[float, float]:
    """Return the (min_overlap, margin) of best F1 on the DEV judgments (ties: the higher
    precision, then the higher threshold), printing the best few."""
    judged = pd.read_csv(judgments)
    pairs = judged[judged["split"] == "dev"][["statement_id", "unit_id", "verdict"]]
    relevant = (pairs["verdict"] == "relevant").to_numpy()
    grid = []
    for o in np.arange(0.3, 0.96, 0.05):
        for m in (0.0, 0.05, 0.1, 0.15, 0.2, 0.3):
            chosen = frame[labelled(frame, o, m)]
            keys = set(zip(chosen["statement_id"], chosen["unit_id"], strict=True))
            label = np.array(
                [k in keys for k in zip(pairs["statement_id"], pairs["unit_id"], strict=True)]
            )
            tp = int((label & relevant).sum())
            p, r = tp / max(int(label.sum()), 1), tp / max(int(relevant.sum()), 1)
            grid.append((round(2 * p * r / max(p + r, 1e-9), 4), round(p, 4), round(o, 2), m, r))
    grid.sort(reverse=True)
    for f1, p, o, m, r in grid[:8]:
        print(f"F1 {f1:.3f} P {p:.3f} R {r:.3f}: min_overlap {o:.2f} margin {m}")
    return grid[0][2], grid[0][3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["candidates", "show", "tune", "label", "validate"])
    parser.add_argument("--docs", default="output/graphrag_bench/docs")
    parser.add_argument("--questions", default="output/graphrag_bench/questions.jsonl")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    args = parser.parse_args()
    if args.step == "candidates":
        frame = candidates(Path(args.docs), Path(args.questions))
        CANDIDATES.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(CANDIDATES, index=False)
        print(f"{CANDIDATES}: {frame['statement_id'].nunique()} statements")
        return
    frame = pd.read_parquet(CANDIDATES)
    if args.step == "show":
        show(frame, Path(args.docs), args.split, args.n, args.seed)
    elif args.step == "tune":
        tune(frame, JUDGMENTS)
    elif args.step == "label":
        label(frame, Path(args.questions), QUESTIONS)
    else:
        for split in ("dev", "test"):
            print(split, validate(frame, JUDGMENTS, split))


if __name__ == "__main__":
    main()
