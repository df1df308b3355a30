"""The filters every generated question passes (``generate.py`` makes them), in order, each
reading only what the one before kept: malformed (``generate.tidy``); closed-book (the
answering model answers it with no context: it tests the model, not the retrieval); unanswerable
(the judge finds no answer in its support); near duplicates (``DUPLICATE_COSINE``, last, so a
duplicate of a dropped question is kept). Then each kept question gets a ``split``: ``test``
unless asked (nothing was tuned on questions just generated), ``dev``, or ``dev+test`` dealt.
A filter log counts what each filter removed per kind (docs/questions.md).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphrag import prompts
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.llm.coroutines import run_sync
from graphrag.llm.replies import JSONOutputError
from graphrag.text.embeddings import Embedder
from workbench.eval.generate import KINDS, Candidate, candidates, generate_one
from workbench.eval.metrics import fold_terms, holds_term, normalize_answer, token_f1
from workbench.eval.questions import DEFAULT_SPLIT, SPLITS

# MiniLM's cosine of two wordings of one question is about 0.9 and more; two questions about
# one subject asking for different facts score about 0.6-0.85 (see tests/test_generate.py).
DUPLICATE_COSINE = 0.9
CLOSED_BOOK_F1 = 0.5  # SQuAD's token F1: half the reference's words in a short answer
CLOSED_BOOK_TOKENS = 60
VERDICT_TOKENS = 20
DEFAULT_SEED = 47  # the issue that asked for generated questions
FILTERS = ("malformed", "closed-book", "unanswerable", "duplicate")
SPLIT_CHOICES = (*SPLITS, "dev+test")  # one split for every question, or both dealt


def drop_duplicates(kept: list[Candidate], embedder: Embedder) -> None:
    """Mark each question as a duplicate when an earlier kept one is as close as
    ``DUPLICATE_COSINE`` (the embeddings are normalized: their dot product is the cosine)."""
    if not kept:
        return
    vectors = embedder.embed([c.question for c in kept])
    chosen: list[int] = []
    for i, candidate in enumerate(kept):
        similar = [j for j in chosen if float(vectors[i] @ vectors[j]) >= DUPLICATE_COSINE]
        if similar:
            candidate.drop("duplicate", f"of {kept[similar[0]].id}")
        else:
            chosen.append(i)


def _unasked(text: str, question: str) -> str:
    """``text`` in SQuAD's normal form without the words the question holds: an answer that
    echoes the question ("The film was directed by ...") matches on what it adds."""
    asked = set(normalize_answer(question).split())
    return " ".join(w for w in normalize_answer(text).split() if w not in asked)


def answered_closed_book(candidate: Candidate, answer: str) -> bool:
    """Whether the context-free ``answer`` matches the reference: every keyword held as a
    whole word, or a token F1 of at least ``CLOSED_BOOK_F1`` on the words the question does
    not hold (of both the answer and the reference)."""
    folded = fold_terms(answer)
    if all(holds_term(folded, k) for k in candidate.keywords):
        return True
    reference = _unasked(candidate.reference, candidate.question)
    said = _unasked(answer, candidate.question)
    return bool(reference) and token_f1(said, [reference]) >= CLOSED_BOOK_F1


async def _closed_book(llm: ChatLLM, candidate: Candidate) -> None:
    try:
        answer = await llm.atext(
            prompts.question_closed_book(candidate.question),
            name="closed-book answer",
            max_tokens=CLOSED_BOOK_TOKENS,
        )
    except JSONOutputError:  # an empty or cut reply: it did not answer
        return
    candidate.closed_book = answer
    if answered_closed_book(candidate, answer):
        candidate.drop("closed-book", "answered without the corpus")


async def _answerable(judge: ChatLLM, candidate: Candidate) -> None:
    messages = prompts.question_answerable(
        candidate.support_text, candidate.question, candidate.reference
    )
    try:
        reply = await judge.ajson(
            messages, prompts.verdict_schema(), name="answerable", max_tokens=VERDICT_TOKENS
        )
    except JSONOutputError:
        candidate.drop("unanswerable", "the judge gave no verdict")
        return
    if reply["verdict"] != "yes":
        candidate.drop("unanswerable", "the judge found no answer in the support")


def assign_splits(kept: list[Candidate], seed: int) -> dict[str, str]:
    """Return each kept question's split: within each kind, a seeded permutation dealt
    alternately ``dev`` and ``test`` (as studies/split_questions.py deals MuSiQue's), so both
    halves have the same mix of kinds to within one per kind."""
    rng = np.random.default_rng(seed)
    split_of: dict[str, str] = {}
    for kind in KINDS:
        ids = [c.id for c in kept if c.kind == kind]
        for position, i in enumerate(rng.permutation(len(ids))):
            split_of[ids[i]] = SPLITS[position % 2]
    return split_of


@dataclass
class GeneratedSet:
    """The kept questions as question-set lines, and every candidate with its fate."""

    records: list[dict]
    candidates: list[Candidate]
    seed: int
    count: int = 0  # the candidates asked for per kind

    def dropped_lines(self) -> list[str]:
        """Return how many candidates were dropped, per filter and reason, and each kind whose
        index held fewer sources than ``count`` (a larger count gives no more of it)."""
        dropped = [c for c in self.candidates if c.dropped]
        reasons = Counter(
            (c.dropped, "of a kept question" if c.dropped == "duplicate" else c.why.split(" (")[0])
            for c in dropped
        )
        lines = [f"dropped {len(dropped)} of {len(self.candidates)} candidates"]
        lines += [f"  {n} {by}: {why}" for (by, why), n in reasons.most_common()]
        for kind in KINDS:
            made = sum(c.kind == kind for c in self.candidates)
            if 0 < made < self.count:
                lines.append(f"the index holds {made} {kind} sources only (of {self.count} asked)")
        return lines

    def log(self) -> list[dict]:
        """Per kind: candidates, removed by each filter (in its order), kept, share kept."""
        rows = []
        for kind in [*KINDS, "all"]:
            of_kind = [c for c in self.candidates if kind in (c.kind, "all")]
            if not of_kind:
                continue
            removed = Counter(c.dropped for c in of_kind)
            kept = removed.pop("", 0)
            row = {"kind": kind, "candidates": len(of_kind)}
            row |= {name: removed.get(name, 0) for name in FILTERS}
            rows.append(row | {"kept": kept, "share kept": round(kept / len(of_kind), 3)})
        return rows

    def log_table(self) -> str:
        """The filter log as a Markdown table."""
        rows = self.log()
        header = list(rows[0]) if rows else ["kind"]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(row[h]) for h in header) + " |" for row in rows]
        return "\n".join(lines)

    def write(self, out: str | Path) -> Path:
        """Write the question set to ``out`` (.jsonl) and the filter log beside it
        (``<out stem>.filter_log.json``: the counts, and every candidate with its fate);
        return the log's path."""
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        lines = [json.dumps(r, ensure_ascii=False) for r in self.records]
        out.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        log = out.with_name(f"{out.stem}.filter_log.json")
        fields = ("id", "kind", "source", "question", "reference", "keywords")
        fates = [
            {f: getattr(c, f) for f in fields}
            | {"closed_book_answer": c.closed_book, "dropped": c.dropped, "why": c.why}
            for c in self.candidates
        ]
        body = {"seed": self.seed, "counts": self.log(), "candidates": fates}
        log.write_text(json.dumps(body, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return log


async def _filter_one(
    candidate: Candidate, llm: ChatLLM, judge: ChatLLM, room: asyncio.Semaphore
) -> None:
    async with room:
        await generate_one(llm, candidate)
        if not candidate.dropped:
            await _closed_book(llm, candidate)
        if not candidate.dropped:
            await _answerable(judge, candidate)


def in_turn(chosen: list[Candidate]) -> list[Candidate]:
    """The candidates in the order they are worked on: the first of each kind, then the
    second of each, ...; an interrupted live run has then recorded whole candidates of every
    kind, and a smaller ``count`` replays from them."""
    return sorted(chosen, key=lambda c: (c.number, KINDS.index(c.kind)))


async def _run(chosen: list[Candidate], llm: ChatLLM, judge: ChatLLM, concurrency: int) -> None:
    room = asyncio.Semaphore(concurrency)  # a few at a time, each through all its calls
    await asyncio.gather(*(_filter_one(c, llm, judge, room) for c in in_turn(chosen)))


def generate_question_set(
    index: Index,
    llm: ChatLLM,
    judge: ChatLLM,
    embedder: Embedder,
    *,
    kinds: list[str] | None = None,
    count: int = 8,
    seed: int = DEFAULT_SEED,
    split: str = DEFAULT_SPLIT,
) -> GeneratedSet:
    """Generate ``count`` candidates of each of ``kinds`` (all by default) from ``index``,
    filter them and return the kept ones with ``split`` (one of ``SPLIT_CHOICES``), and the
    filter log."""
    if split not in SPLIT_CHOICES:
        raise ValueError(f"split {split!r} is not one of {', '.join(SPLIT_CHOICES)}")
    chosen = in_turn(candidates(index, list(kinds or KINDS), count, seed))
    run_sync(_run(chosen, llm, judge, llm.settings.llm.concurrency))
    drop_duplicates([c for c in chosen if not c.dropped], embedder)
    kept = [c for c in chosen if not c.dropped]
    dealt = assign_splits(kept, seed) if split == "dev+test" else {}
    return GeneratedSet([c.record(dealt.get(c.id, split)) for c in kept], chosen, seed, count)
