"""Judge-free metrics: exact and free to recompute. Retrieval is scored on what the model read
(a gold document counts when one of its text units sits verbatim in the contexts, so summaries
never do); a failed answer scores 0, NaN means "does not apply". Chinese terms match by
characters at a Han edge, and Chinese answers' EM/F1 compare characters (CMRC 2018's rule).
"""

from __future__ import annotations

import functools
import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.grounding import sentence_terms
from graphrag.index.store import Index
from graphrag.text.lang import chinese, sentences
from workbench.eval.unanswerable import UNANSWERABLE, declined

RECALL_K = 5
JUDGE_FREE_METRICS = (
    "keyword_hit_rate",
    "exact_match",
    "token_f1",
    "evidence_recall",
    f"recall_at_{RECALL_K}",
    "gold_entity_reach",
    "grounded_sentences",
    "declined",  # only in a run with planted unanswerable questions (eval/unanswerable.py)
)
LIST_MARK = re.compile(r"^\s*(?:\d+[.)]|[-*])(?:\s+|$)")  # "1. " or "- " opening a list item
POSSESSIVE = re.compile(r"['’]s\b")  # "Tidewell's" names Tidewell
SHORT_ANSWER_FORMAT = "short"
_FINAL_LINE = re.compile(r"^[\s*#>_-]*answer[\s*_]*:[\s*_]*(.+?)[\s*_]*$", re.IGNORECASE)


_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})
_DIGIT_GROUP = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # the comma of "30,000"


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    return re.sub(r"\s+", " ", text)


def fold_terms(text: str) -> str:
    """Return ``text`` as :func:`holds_term` reads it: NFKC, case-folded, one space for any
    run of white space, curly apostrophes straight, digit-group commas gone ("30000")."""
    return _DIGIT_GROUP.sub("", _fold(text))


# A word character of a script with spaces: Chinese characters are word characters to ``\w``
# but no word boundary separates them from a name written next to them ("在KelpSense平台").
_SPACED_WORD_CHAR = rf"[^\W{chinese.HAN_RANGES}]"


@functools.lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """Return the pattern of ``term`` as a whole word of a :func:`fold_terms` text: no word
    character (of a spaced script) on either side, and a number not part of a longer one ("4"
    not in "14", "4.5" or "0.4"); an edge that is a Chinese character needs no boundary."""
    folded = fold_terms(term).strip()
    core = re.escape(folded)
    before = "" if chinese.HAN.match(folded[:1]) else rf"(?<!{_SPACED_WORD_CHAR})(?<!\d[.,])"
    after = "" if chinese.HAN.match(folded[-1:]) else rf"(?!{_SPACED_WORD_CHAR})(?![.,]\d)"
    return re.compile(f"{before}{core}{after}")


def holds_term(text: str, term: str) -> bool:
    """Return whether ``text`` (already :func:`fold_terms`-folded) holds ``term`` as a whole
    word: "merge" is not in "emergency", "kelp" not in "kelpsense", "30,000" is "30000"."""
    return bool(fold_terms(term).strip()) and term_pattern(term).search(text) is not None


def keyword_hit_rate(answer: str, keywords: list[str]) -> float:
    """Return the share of gold keywords the answer holds as whole words (:func:`holds_term`)."""
    if not keywords:
        return math.nan
    folded = fold_terms(answer)
    return sum(holds_term(folded, k) for k in keywords) / len(keywords)


# --------------------------------------------------------------------------- short answers


def final_answer(text: str) -> str:
    """Return the answer's last "Answer: …" line (the short answer), or the whole text."""
    for line in reversed(text.splitlines()):
        match = _FINAL_LINE.match(line)
        if match:
            return match.group(1).strip()
    return text.strip()


def normalize_answer(text: str) -> str:
    """Return SQuAD's normal form: lower case, no punctuation, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


_CHINESE_TOKEN = re.compile(rf"{chinese.HAN.pattern}|[^\W{chinese.HAN_RANGES}]+")


def answer_tokens(text: str, by_character: bool) -> list[str]:
    """Return the tokens exact match and F1 compare: SQuAD's normalized words, or, for Chinese
    (``by_character``), each Chinese character and each Latin-script word, punctuation gone."""
    normal = normalize_answer(text)
    return _CHINESE_TOKEN.findall(normal) if by_character else normal.split()


def _by_character(*texts: str) -> bool:
    return any(chinese.HAN.search(t) for t in texts)


def exact_match(prediction: str, references: Iterable[str]) -> float:
    """Return 1.0 when the normalized prediction equals a normalized reference (or alias),
    compared by characters when either is Chinese."""
    return float(
        any(
            answer_tokens(prediction, c) == answer_tokens(r, c)
            for r in references
            for c in [_by_character(prediction, r)]
        )
    )


def _f1(prediction: str, reference: str) -> float:
    by_character = _by_character(prediction, reference)
    predicted = answer_tokens(prediction, by_character)
    gold = answer_tokens(reference, by_character)
    if not predicted or not gold:
        return float(predicted == gold)
    common = sum((Counter(predicted) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, references: Iterable[str]) -> float:
    """Return SQuAD's token F1 against the best-matching reference or alias (over characters
    when either is Chinese)."""
    return max((_f1(prediction, r) for r in references), default=math.nan)


# --------------------------------------------------------------------------- retrieval


def _flat(text: str) -> str:
    return " ".join(text.split())


class EvidenceIndex:
    """The index's text units by document, for checking what a prompt really held."""

    def __init__(self, index: Index) -> None:
        units = index.text_units
        self.units_of_document: dict[str, list[str]] = {}
        self.text_of_unit: dict[str, str] = {}
        self.documents_of_unit: dict[str, list[str]] = {}
        for unit, text, documents in zip(
            units[S.ID], units[S.TEXT], units[S.DOCUMENT_IDS], strict=True
        ):
            self.text_of_unit[unit] = _flat(text)
            self.units_of_document[unit] = [unit]  # support may name text units, not documents
            self.documents_of_unit[unit] = [*documents, unit]
            for document in documents:
                self.units_of_document.setdefault(document, []).append(unit)

    def documents_read(self, contexts: Iterable[str], documents: Iterable[str]) -> set[str]:
        """Return those of ``documents`` with a text unit held verbatim by a context."""
        flat = [_flat(c) for c in contexts]
        return {
            d
            for d in documents
            if any(
                self.text_of_unit[u] and any(self.text_of_unit[u] in c for c in flat)
                for u in self.units_of_document.get(d, [])
            )
        }

    def evidence_recall(self, contexts: Iterable[str], support: list[str]) -> float:
        """Return the share of ``support`` documents whose text the contexts hold."""
        if not support:
            return math.nan
        return len(self.documents_read(list(contexts), support)) / len(set(support))

    def recall_at_k(self, ranking: list[str], support: list[str], k: int = RECALL_K) -> float:
        """Return the share of ``support`` documents with a text unit in the top ``k`` ranked."""
        if not support:
            return math.nan
        top = {s.removeprefix("text_unit:") for s in ranking[:k]}
        found = {d for d in support if top.intersection(self.units_of_document.get(d, []))}
        return len(found) / len(set(support))

    def gold_ranks(self, ranking: list[str], support: list[str]) -> list[int]:
        """Return the ranks (from 1) of the ranked text units that hold a gold document no unit
        above them held: binary relevance, each gold document credited once, as recall@k
        counts documents (a second chunk of the same paragraph is no new evidence)."""
        unfound, ranks = set(support), []
        for rank, source in enumerate(ranking, 1):
            found = unfound.intersection(
                self.documents_of_unit.get(source.removeprefix("text_unit:"), ())
            )
            if found:
                ranks.append(rank)
                unfound -= found
        return ranks

    def reciprocal_rank(self, ranking: list[str], support: list[str]) -> float:
        """Return 1 / the rank of the first text unit holding a gold document (0 when none of
        the ranking does; NaN without gold): the mean over questions is MRR."""
        if not support:
            return math.nan
        ranks = self.gold_ranks(ranking, support)
        return 1.0 / ranks[0] if ranks else 0.0

    def ndcg_at_k(self, ranking: list[str], support: list[str], k: int = RECALL_K) -> float:
        """Return nDCG@k with binary relevance (``gold_ranks``): the discounted gain of the
        first ``k`` ranked units over that of an ideal ranking, the gold documents first."""
        if not support:
            return math.nan
        gain = sum(1.0 / math.log2(r + 1) for r in self.gold_ranks(ranking, support) if r <= k)
        ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(set(support)), k) + 1))
        return gain / ideal


class CorpusTerms:
    """The corpus's text, asked whether it holds a term as a whole word (:func:`holds_term`;
    each term is looked up once)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.text = fold_terms("\n\n".join(texts))
        self._held: dict[str, bool] = {}

    def holds(self, term: str) -> bool:
        if term not in self._held:
            self._held[term] = holds_term(self.text, term)
        return self._held[term]


def answer_sentences(answer: str) -> list[tuple[str, str]]:
    """Return (sentence, its checked form) for each sentence of ``answer``: a list item's
    number, Markdown bold and a possessive "'s" are not names, and a list number the
    splitter left on its own is no sentence."""
    out = []
    for sentence in sentences(answer):
        checked = POSSESSIVE.sub("", LIST_MARK.sub("", sentence.replace("**", "")))
        if checked.strip():
            out.append((sentence, checked))
    return out


def unsupported_terms(sentence: str, corpus: CorpusTerms, asked: CorpusTerms) -> list[str]:
    """Return the names and numbers of a (checked) sentence that neither the corpus nor the
    question (``asked``, its text as CorpusTerms) holds."""
    return [
        term
        for term in sentence_terms(sentence)
        if not corpus.holds(term) and not asked.holds(term)
    ]


def grounded_sentences(answer: str, corpus: CorpusTerms, question: str = "") -> float:
    """Return the share of the answer's sentences with no unsupported term (NaN if none)."""
    checked = [c for _, c in answer_sentences(answer)]
    if not checked:
        return math.nan
    asked = CorpusTerms([question])
    return sum(not unsupported_terms(c, corpus, asked) for c in checked) / len(checked)


def _named(entities: list[list[str]], text: str) -> set[int]:
    """Return the positions of ``entities`` (each [name, *aliases]) that ``text`` names as
    whole words, longest first: a name inside a longer one's match does not count."""
    folded = fold_terms(text)
    claimed = [False] * len(folded)
    surfaces = sorted(
        ((s, i) for i, names in enumerate(entities) for s in names),
        key=lambda item: -len(fold_terms(item[0]).strip()),
    )
    found = set()
    for surface, i in surfaces:
        if not fold_terms(surface).strip():
            continue
        for match in term_pattern(surface).finditer(folded):
            if not any(claimed[match.start() : match.end()]):
                claimed[match.start() : match.end()] = [True] * (match.end() - match.start())
                found.add(i)
    return found


def unasked(entities: list[list[str]], question: str) -> list[list[str]]:
    """Return the ``entities`` the question does not name: finding a name the question gives
    away measures nothing of the retrieval."""
    asked = _named(entities, question)
    return [e for i, e in enumerate(entities) if i not in asked]


def gold_entities_of(question: str, reference: str, gold: dict | None) -> list[list[str]]:
    """Return the gold entities ([name, *aliases]) the reference names and the question
    does not."""
    if not gold:
        return []
    entities = [[e["name"], *e.get("aliases", [])] for e in gold.get("entities", [])]
    named = _named(entities, reference)
    return unasked([entities[i] for i in sorted(named)], question)


def gold_entity_reach(contexts: Iterable[str], entities: list[list[str]]) -> float:
    """Return the share of gold entities (name + aliases) the contexts name as whole words
    (NaN when there is none: every gold entity was named by the question)."""
    if not entities:
        return math.nan
    return len(_named(entities, "\n".join(contexts))) / len(entities)


# --------------------------------------------------------------------------- records


def _question_entities(row: pd.Series, gold: dict | None) -> list[list[str]]:
    listed = row.get("gold_entities")
    if isinstance(listed, list) and listed:
        return unasked([[name] for name in listed], row["question"])
    return gold_entities_of(row["question"], row["reference"], gold)


def judge_free_columns(
    records: pd.DataFrame, questions: pd.DataFrame, index: Index, gold: dict | None = None
) -> pd.DataFrame:
    """Return ``records`` with every judge-free metric filled in (0 for a failed answer);
    ``gold`` (a gold graph) names entities for questions that list no ``gold_entities``."""
    evidence = EvidenceIndex(index)
    corpus = CorpusTerms(index.text_units[S.TEXT])
    by_id = questions.set_index("id")
    entities_of = {q: _question_entities(row, gold) for q, row in by_id.iterrows()}
    ranked = records.get("ranking", pd.Series([[]] * len(records), index=records.index))
    ranking_methods = set(records.loc[ranked.map(lambda r: len(r) > 0), "method"])
    kinds = questions.get("type", pd.Series(dtype=object))
    planted = bool((kinds == UNANSWERABLE).any())
    rows = []
    for record in records.itertuples(index=False):
        question = by_id.loc[record.question_id]
        failed = isinstance(record.answer_error, str) and bool(record.answer_error)
        contexts = list(record.contexts)
        ranking = list(getattr(record, "ranking", []) or [])
        support = list(question["support"])
        references = [question["reference"], *question.get("aliases", [])]
        short = question.get("answer_format") == SHORT_ANSWER_FORMAT
        predicted = final_answer(record.answer)
        scores = {
            "keyword_hit_rate": keyword_hit_rate(record.answer, question["answer_keywords"]),
            "exact_match": exact_match(predicted, references) if short else math.nan,
            "token_f1": token_f1(predicted, references) if short else math.nan,
            "evidence_recall": evidence.evidence_recall(contexts, support),
            f"recall_at_{RECALL_K}": (
                evidence.recall_at_k(ranking, support)
                if record.method in ranking_methods
                else math.nan
            ),
            "gold_entity_reach": gold_entity_reach(contexts, entities_of[record.question_id]),
            "grounded_sentences": (
                0.0 if failed else grounded_sentences(record.answer, corpus, question["question"])
            ),
        }
        if question.get("type") == UNANSWERABLE:  # no reference to match: only declining is scored
            scores = dict.fromkeys(scores, math.nan)
        if planted:  # on a planted question the rejection rate, else the false-rejection rate
            scores["declined"] = float(declined(record.answer))
        if failed:
            scores = {k: v if math.isnan(v) else 0.0 for k, v in scores.items()}
        rows.append({"short_answer": predicted if short else None, **scores})
    scored = pd.DataFrame(rows, index=records.index)
    return pd.concat([records.drop(columns=scored.columns, errors="ignore"), scored], axis=1)
