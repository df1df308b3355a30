"""Questions for a corpus that has none (``graphrag questions generate``), from its index:
``local`` (one text unit and an entity it mentions), ``multi_hop`` (two text units bridged by
a graph entity both mention, named by a fact of one, asking for a fact of the other) and
``global`` (one community report's theme; support: every document under it), as BenchmarkQED's
AutoQ samples text and clusters. Sampling is seeded; ``generate_filter`` filters them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.llm.replies import JSONOutputError
from graphrag.prompts import Messages
from workbench.eval.metrics import fold_terms, holds_term

KINDS = ("local", "multi_hop", "global")
ID_PREFIX = {"local": "L", "multi_hop": "M", "global": "G"}
GENERATION_TOKENS = 300  # a question, a two-sentence answer and three keywords
MAX_KEYWORDS = 3
# a question that points at what the model was shown, which a reader of the corpus never sees
SHOWN_TEXT = re.compile(
    r"\b(?:the|this|that|these|above|given|both) (?:passages?|texts?|documents?|reports?|"
    r"summary|summaries|articles?|excerpts?)\b|\bpassages? [AB]\b",
    re.IGNORECASE,
)


@dataclass
class Candidate:
    """One generated question on its way through the filters."""

    kind: str
    number: int  # 1-based within its kind, in the seeded order: the question's id
    source: str  # what it was built from, for the filter log
    support_text: str  # what the judge reads
    support_units: list[str]
    documents: list[str]
    messages: Messages = field(repr=False)
    bridge: str = ""
    question: str = ""
    reference: str = ""
    keywords: list[str] = field(default_factory=list)
    closed_book: str = ""  # the answering model's answer without context
    dropped: str = ""  # the filter that removed it (generate_filter.FILTERS); "" while kept
    why: str = ""  # what that filter found

    def drop(self, by: str, why: str) -> None:
        self.dropped, self.why = by, why

    @property
    def id(self) -> str:
        return f"{ID_PREFIX[self.kind]}{self.number:02d}"

    def record(self, split: str) -> dict:
        """The question-set line (workbench/eval/questions.py) of a kept candidate."""
        line = {
            "id": self.id,
            "question": self.question,
            "reference": self.reference,
            "type": self.kind,
            "split": split,
            "support": self.documents,
            "answer_keywords": self.keywords,
            "support_units": self.support_units,
        }
        return line | ({"bridge_entity": self.bridge} if self.bridge else {})


class _Corpus:
    """The index's text units, their documents and the entities each mentions."""

    def __init__(self, index: Index) -> None:
        units = index.text_units
        self.text = dict(zip(units[S.ID], units[S.TEXT], strict=True))
        self.documents = {
            unit: list(documents)
            for unit, documents in zip(units[S.ID], units[S.DOCUMENT_IDS], strict=True)
        }
        self.order = list(units[S.ID])  # the index's order: what the seed permutes
        entities = index.entities
        self.entity_units = {
            title: [u for u in unit_ids if u in self.text]
            for title, unit_ids in zip(entities[S.TITLE], entities[S.TEXT_UNIT_IDS], strict=True)
        }
        self.degree = dict(zip(entities[S.TITLE], entities[S.DEGREE], strict=True))

    def documents_of(self, units: list[str]) -> list[str]:
        return list(dict.fromkeys(d for u in units for d in self.documents.get(u, [])))


def _round_robin(groups: list[list]) -> Iterator:
    """Yield the first item of every group, then every second item, and so on."""
    for depth in range(max((len(g) for g in groups), default=0)):
        yield from (g[depth] for g in groups if depth < len(g))


def _shuffled(items: list, rng: np.random.Generator) -> list:
    return [items[i] for i in rng.permutation(len(items))]


def local_candidates(index: Index, n: int, rng: np.random.Generator) -> list[Candidate]:
    """``n`` (text unit, entity it mentions) pairs: every unit once before any twice, and
    no entity the focus twice while others are left."""
    corpus = _Corpus(index)
    mentions: dict[str, list[str]] = {}
    for entity, units in corpus.entity_units.items():
        for unit in units:
            mentions.setdefault(unit, []).append(entity)
    units = _shuffled([u for u in corpus.order if mentions.get(u)], rng)
    queues = {u: _shuffled(sorted(mentions[u]), rng) for u in units}
    pairs, focused = [], set()
    while any(queues.values()):
        for unit in units:  # each round: every unit once, on an entity not yet a focus if any
            queue = queues[unit]
            if queue:
                entity = next((e for e in queue if e not in focused), queue[0])
                queue.remove(entity)
                focused.add(entity)
                pairs.append((unit, entity))
    chosen = []
    for number, (unit, entity) in enumerate(pairs, start=1):
        if number > n:
            break
        text = corpus.text[unit]
        source = f"text unit {unit}, about {entity}"
        documents, messages = corpus.documents_of([unit]), prompts.question_local(text, entity)
        chosen.append(Candidate("local", number, source, text, [unit], documents, messages))
    return chosen


def bridge_candidates(index: Index, n: int, rng: np.random.Generator) -> list[Candidate]:
    """``n`` (entity, text unit A, text unit B) triples: the entity is in the graph (it has a
    relationship) and both units mention it; no unit pair is used twice, every bridge entity
    once before any twice."""
    corpus = _Corpus(index)
    bridges = sorted(
        e for e, units in corpus.entity_units.items() if len(units) >= 2 and corpus.degree[e] > 0
    )
    triples = []
    for entity in _shuffled(bridges, rng):
        units = corpus.entity_units[entity]
        pairs = [(a, b) for i, a in enumerate(units) for b in units[i + 1 :]]
        ordered = [pairs[i] for i in rng.permutation(len(pairs))]
        # two units of one document are one hop: pairs across documents when there are any
        across = [p for p in ordered if set(corpus.documents[p[0]]) != set(corpus.documents[p[1]])]
        triples.append([(entity, *pair) for pair in across or ordered])
    chosen: list[Candidate] = []
    used: set[frozenset[str]] = set()
    for entity, first, second in _round_robin(triples):
        if len(chosen) == n:
            break
        if frozenset((first, second)) in used:
            continue
        used.add(frozenset((first, second)))
        if rng.random() < 0.5:
            first, second = second, first
        texts, units = (corpus.text[first], corpus.text[second]), [first, second]
        source = f"text units {first} + {second}, bridged by {entity}"
        messages = prompts.question_bridge(*texts, entity)
        fields = (source, "\n\n".join(texts), units, corpus.documents_of(units), messages)
        chosen.append(Candidate("multi_hop", len(chosen) + 1, *fields, bridge=entity))
    return chosen


def global_candidates(index: Index, n: int, rng: np.random.Generator) -> list[Candidate]:
    """``n`` community reports, the broadest level first; the support is every document of
    the community's text units."""
    reports = index.community_reports
    units_of = dict(
        zip(index.communities[S.COMMUNITY], index.communities[S.TEXT_UNIT_IDS], strict=True)
    )
    corpus = _Corpus(index)
    rows = [reports.iloc[i] for i in rng.permutation(len(reports))]
    rows.sort(key=lambda row: int(row[S.LEVEL]))  # stable: seeded order within a level
    chosen = []
    for number, row in enumerate(rows[:n], start=1):
        units = [u for u in units_of.get(row[S.COMMUNITY], []) if u in corpus.text]
        text = str(row[S.FULL_CONTENT])
        source = f"community {row[S.COMMUNITY]} (level {row[S.LEVEL]}): {row[S.TITLE]}"
        messages = prompts.question_global(text)
        chosen.append(
            Candidate("global", number, source, text, units, corpus.documents_of(units), messages)
        )
    return chosen


BUILDERS = {"local": local_candidates, "multi_hop": bridge_candidates, "global": global_candidates}


def candidates(index: Index, kinds: list[str], count: int, seed: int) -> list[Candidate]:
    """``count`` candidates of each of ``kinds`` (fewer when the index has fewer sources),
    drawn with one seeded generator per kind (adding a kind changes no other's draw)."""
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown question kind(s) {unknown}; known: {', '.join(KINDS)}")
    chosen = []
    for kind in kinds:
        rng = np.random.default_rng([seed, KINDS.index(kind)])
        chosen += BUILDERS[kind](index, count, rng)
    return chosen


def tidy(candidate: Candidate, reply: dict) -> str:
    """Fill ``candidate`` from the model's reply; return why it is unusable, "" if usable.

    A question that points at "the passage" (or report, text...) is unusable: the reader
    of the corpus was never shown one. Keywords are kept only when the support holds them as
    whole words and the question does not (a keyword the question gives away scores
    nothing)."""
    question, answer = reply["question"].strip(), reply["answer"].strip()
    if not question.endswith("?"):
        return "not a question"
    if SHOWN_TEXT.search(question):
        return f"points at the text it was written from ({SHOWN_TEXT.search(question)[0]!r})"
    support, asked = fold_terms(candidate.support_text), fold_terms(question)
    keywords = [
        k.strip()
        for k in dict.fromkeys(reply["keywords"])
        if holds_term(support, k) and not holds_term(asked, k)
    ]
    if not keywords:
        return "no keyword of the support outside the question"
    candidate.question, candidate.reference = question, answer
    candidate.keywords = keywords[:MAX_KEYWORDS]
    return ""


async def generate_one(llm: ChatLLM, candidate: Candidate) -> None:
    """Ask the model for ``candidate``'s question; a reply unfit for one drops it."""
    schema = prompts.generated_question_schema(MAX_KEYWORDS)
    try:
        reply = await llm.ajson(
            candidate.messages, schema, name="generated question", max_tokens=GENERATION_TOKENS
        )
    except JSONOutputError:
        candidate.drop("malformed", "no valid reply")
        return
    reason = tidy(candidate, reply)
    if reason:
        candidate.drop("malformed", reason)
