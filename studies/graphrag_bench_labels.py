"""Gold text units for GraphRAG-Bench, whose evidence is paraphrased: a rule labels them.

The rule. Each evidence statement (a question's `evidence`, one statement per item) is scored
against every text unit of its own book by two measures:

- ``sim``: cosine similarity of the statement's and the unit's embeddings (the index's
  embedder, over the units cut as the index cuts them);
- ``overlap``: the share of the statement's content words (BM25's English words: lower case,
  stop words out) whose first ``STEM`` letters occur among the unit's words' first letters, so
  that "held"/"holds" or "married"/"marrying" meet.

A unit is labelled for a statement when ``overlap >= MIN_OVERLAP``, ``sim >= MIN_SIM`` and its
``sim + overlap`` is within ``MARGIN`` of the statement's best unit (the best, or its
neighbour sharing the 100 overlapping tokens). A question's `support` is the union over its
statements; a statement the book does not state (an inference such as "the sequence
establishes a pattern") gets none. The thresholds were chosen on hand judgments of DEV books'
statements only (``studies/records/graphrag_bench_label_judgments.csv``, rows ``dev``); the
rule's precision and recall are measured on a seeded sample of TEST books' statements judged
the same way (rows ``test``): ``python -m studies.graphrag_bench_labels validate``.

    python -m studies.graphrag_bench_labels candidates   # scores of output/graphrag_bench
    python -m studies.graphrag_bench_labels show --split dev --n 30   # for hand judgment
    python -m studies.graphrag_bench_labels label --questions output/graphrag_bench/questions.jsonl
    python -m studies.graphrag_bench_labels validate
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

import numpy as np
import pandas as pd

from graphrag import schemas as S
from graphrag.settings.index import ChunkingSettings
from graphrag.text.documents import chunk_documents, load_documents
from graphrag.text.lang.english import sentences, words
from graphrag.workbench import Workbench

STEM = 5
MIN_OVERLAP, MIN_SIM, MARGIN = 0.5, 0.35, 0.1
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


def candidates(docs: Path, questions: Path, config: str | None, sim: bool = True) -> pd.DataFrame:
    """Return the ``TOP`` units of each statement's book by ``sim + overlap``, with both
    (``sim`` 0 when not ``sim``: the overlap alone, before the unit vectors exist)."""
    units = text_units(docs)
    rows = statements(read_records(questions))
    if sim:
        embedder = Workbench(config, cache="replay").embedder
        vectors = np.asarray(embedder.embed(list(rows["statement"])), dtype=float)
        unit_vectors = np.asarray(embedder.embed(list(units[S.TEXT])), dtype=float)
    out = []
    for book, unit_rows in units.groupby("book"):
        unit_stems = [stems(t) for t in unit_rows[S.TEXT]]
        for i in rows.index[rows["book"] == book]:
            similarity = (
                unit_vectors[unit_rows.index] @ vectors[i] if sim else np.zeros(len(unit_rows))
            )
            wanted = stems(rows.at[i, "statement"]) or {""}
            overlap = np.array([len(wanted & u) / len(wanted) for u in unit_stems])
            for j in np.argsort(-(similarity + overlap), kind="stable")[:TOP]:
                out.append(
                    {
                        "statement_id": rows.at[i, "statement_id"],
                        "unit_id": unit_rows[S.ID].iloc[j],
                        "sim": float(similarity[j]),
                        "overlap": float(overlap[j]),
                    }
                )
    frame = pd.DataFrame(out).merge(rows, on="statement_id")
    frame["score"] = frame["sim"] + frame["overlap"]
    frame["rank"] = frame.groupby("statement_id")["score"].rank(ascending=False, method="first")
    return frame


def labelled(
    frame: pd.DataFrame,
    min_overlap: float = MIN_OVERLAP,
    min_sim: float = MIN_SIM,
    margin: float = MARGIN,
) -> pd.Series:
    """Return, per candidate row, whether the rule labels it."""
    best = frame.groupby("statement_id")["score"].transform("max")
    return (
        (frame["overlap"] >= min_overlap)
        & (frame["sim"] >= min_sim)
        & (frame["score"] >= best - margin)
    )


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
            print(f"  {mark} {row.unit_id} r{row.rank:.0f} sim={row.sim:.2f} ov={row.overlap:.2f}")
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


def tune(frame: pd.DataFrame, judgments: Path) -> tuple[float, float, float]:
    """Return the (min_overlap, min_sim, margin) of best F1 on the DEV judgments (ties: the
    higher precision, then the looser thresholds), printing the best few."""
    judged = pd.read_csv(judgments)
    judged = judged[judged["split"] == "dev"]
    pairs = judged.merge(frame, on=["statement_id", "unit_id"], how="left", suffixes=("", "_"))
    grid = []
    for o in np.arange(0.2, 0.85, 0.05):
        for s in np.arange(0.1, 0.65, 0.05):
            for m in (0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 2.0):
                chosen = labelled(frame, o, s, m)
                keys = set(
                    zip(frame["statement_id"][chosen], frame["unit_id"][chosen], strict=True)
                )
                label = [
                    (a, b) in keys
                    for a, b in zip(pairs["statement_id"], pairs["unit_id"], strict=True)
                ]
                relevant = (pairs["verdict"] == "relevant").to_numpy()
                tp = int((np.array(label) & relevant).sum())
                p, r = tp / max(sum(label), 1), tp / max(int(relevant.sum()), 1)
                f1 = 2 * p * r / max(p + r, 1e-9)
                grid.append((round(f1, 4), round(p, 4), -o, -s, m, r))
    grid.sort(reverse=True)
    for f1, p, o, s, m, r in grid[:8]:
        print(f"F1 {f1:.3f} P {p:.3f} R {r:.3f}: min_overlap {-o:.2f} min_sim {-s:.2f} margin {m}")
    best = grid[0]
    return -best[2], -best[3], best[4]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["candidates", "show", "tune", "label", "validate"])
    parser.add_argument("--docs", default="output/graphrag_bench/docs")
    parser.add_argument("--no-sim", action="store_true", help="overlap only (no vectors yet)")
    parser.add_argument("--questions", default="output/graphrag_bench/questions.jsonl")
    parser.add_argument("--config", default="data/graphrag_bench/graphrag.toml")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=SAMPLE_SEED)
    args = parser.parse_args()
    if args.step == "candidates":
        frame = candidates(Path(args.docs), Path(args.questions), args.config, not args.no_sim)
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
