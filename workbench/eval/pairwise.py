"""Head-to-head comparison of two methods' answers on the GraphRAG paper's four criteria.

A small judge picks by position when shown two answers, so each answer is rated alone, 1-5 per
criterion, as the mean grade under the digits' probabilities (G-Eval); a rating more than
``TIE_BAND`` higher wins. Planted controls check the judge reads the answers; a closed-book
answer checks it rewards the corpus.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from functools import partial

import pandas as pd

from graphrag import prompts
from graphrag.llm.cache import CacheMissError
from graphrag.llm.client import ChatLLM, error_summary, expected_grade, grade_request
from graphrag.llm.coroutines import run_sync
from workbench.eval import stats
from workbench.eval.judge import JUDGE_FAILED, NOT_RECORDED, SCORED, gather_counted

CRITERIA = tuple(prompts.PAIRWISE_CRITERIA)
NO_ANSWER = "no answer"
JUDGEMENT_COLUMNS = ["question_id", "type", "method_a", "method_b", "criterion", "score_a"]
JUDGEMENT_COLUMNS += ["rating_a", "rating_b", "status", "error"]
# Ratings closer than this (1-5 scale) tie: the judge grades every fluent answer about 4, so
# what it reads shows in small differences (chosen how: docs/defaults-provenance.md).
TIE_BAND = 0.05
# Question types the pairwise judge reads: the GraphRAG paper's criteria are for global,
# sensemaking questions
JUDGED_TYPES = ("global",)


def parse_pairs(text: str, methods: list[str]) -> list[tuple[str, str]]:
    """Return the method pairs named by ``text``: "all", or "global:naive,local:naive"."""
    if text in ("", "all"):
        return list(itertools.combinations(methods, 2))
    pairs = []
    for item in text.split(","):
        a, sep, b = item.strip().partition(":")
        if not sep or a not in methods or b not in methods or a == b:
            raise ValueError(
                f"pairwise pair {item!r}: expected A:B with two different methods of "
                f"{', '.join(methods)}"
            )
        pairs.append((a, b))
    return pairs


async def rate_answer(llm: ChatLLM, question: str, answer: str) -> dict[str, float]:
    """Return the answer's rating per criterion (one grade token per criterion; the criteria
    run one after another so each reuses the previous prompt's cached prefix)."""
    ratings = {}
    for criterion in CRITERIA:
        completion = await llm.achat(
            **grade_request(prompts.answer_rating(question, answer, criterion))
        )
        # the mean grade under the probabilities the model gives the scale's digits
        ratings[criterion] = expected_grade(completion, prompts.RATING_SCALE)
    return ratings


def score(rating_a: float, rating_b: float) -> float:
    """A's score against B: 1 if its rating is more than TIE_BAND higher, 0 if lower, else 0.5."""
    if rating_a - rating_b > TIE_BAND:
        return 1.0
    if rating_b - rating_a > TIE_BAND:
        return 0.0
    return 0.5


def answered(record: pd.Series) -> bool:
    """Whether a record holds an answer to judge: no error and some text."""
    return not isinstance(record["answer_error"], str) and bool(str(record["answer"]).strip())


NO_SCORES = (math.nan, math.nan, math.nan)


def _rows(
    question: pd.Series,
    a: str,
    b: str,
    status: str,
    scores: dict | None = None,
    error: str | None = None,
) -> list[dict]:
    """Return one judgement row per criterion; ``scores``: criterion -> (score_a, rating_a,
    rating_b), NaN where absent."""
    first = (question["id"], question["type"], a, b)
    values = ((*first, c, *(scores or {}).get(c, NO_SCORES), status, error) for c in CRITERIA)
    return [dict(zip(JUDGEMENT_COLUMNS, row, strict=True)) for row in values]


async def judge_question(
    llm: ChatLLM, question: pd.Series, a: pd.Series, b: pd.Series
) -> list[dict]:
    """Return one row per criterion for methods ``a`` and ``b`` on one question."""
    names = (a["method"], b["method"])
    failed_a, failed_b = (not answered(r) for r in (a, b))
    if failed_a or failed_b:
        result = 0.5 if failed_a and failed_b else (0.0 if failed_a else 1.0)
        return _rows(question, *names, NO_ANSWER, dict.fromkeys(CRITERIA, (result, *NO_SCORES[1:])))
    try:
        ratings_a, ratings_b = await asyncio.gather(
            rate_answer(llm, question["question"], a["answer"]),
            rate_answer(llm, question["question"], b["answer"]),
        )
    except CacheMissError:
        return _rows(question, *names, NOT_RECORDED)  # its message names a machine path
    except Exception as err:  # noqa: BLE001 - a judge failure is a counted row, not a crash
        return _rows(question, *names, JUDGE_FAILED, error=error_summary(err, 200))
    ratings = {c: (score(ratings_a[c], ratings_b[c]), ratings_a[c], ratings_b[c]) for c in CRITERIA}
    return _rows(question, *names, SCORED, ratings)


# The planted control: a question's own answer against another question's (same method); a
# judge that reads the answers wins it on every criterion (1.0), one that does not about 0.5.
CONTROL_A, CONTROL_B = "control: its own answer", "control: another question's answer"
DEFAULT_CONTROLS = 6


def control_jobs(
    by_key: dict[tuple[str, str], pd.Series], questions: pd.DataFrame, method: str, n: int
) -> list[tuple[pd.Series, pd.Series, pd.Series]]:
    """Return up to ``n`` planted control jobs: (question, its own answer, the answer ``method``
    gave to the next question), the answers relabelled ``CONTROL_A`` / ``CONTROL_B``."""
    usable = [
        (q, record)
        for _, q in questions.iterrows()
        if (record := by_key.get((q["id"], method))) is not None and answered(record)
    ]
    if len(usable) < 2:
        return []
    return [
        (
            question,
            pd.Series({**own, "method": CONTROL_A}),
            pd.Series({**usable[(i + 1) % len(usable)][1], "method": CONTROL_B}),
        )
        for i, (question, own) in enumerate(usable[:n])
    ]


# The closed-book reference: an answer written with no corpus text (HyDE's passage, the same
# request, so HyDE's recordings serve). Read as a floor, not a pass/fail control: a method
# that does not beat it has shown the judge nothing a corpus-blind answer would not.
CLOSED_BOOK = "reference: closed-book answer"


async def judge_against_closed_book(
    llm: ChatLLM,
    question: pd.Series,
    records: list[pd.Series],
    max_tokens: int,
    answerer: ChatLLM | None = None,
) -> list[dict]:
    """Return the rows of each answered record in ``records`` (one question's answers) against
    the question's closed-book answer, asked once of ``answerer`` (default: the judge ``llm``);
    when that answer cannot be had, the rows say why rather than counting a win."""
    answered_records = [r for r in records if answered(r)]
    if not answered_records:
        return []
    try:
        reply = await (answerer or llm).achat(
            prompts.hypothetical_passage(question["question"]), max_tokens=max_tokens
        )
    except CacheMissError:
        status, error = NOT_RECORDED, None  # its message names a machine path
    except Exception as err:  # noqa: BLE001 - named in the rows, not a crash
        status, error = JUDGE_FAILED, f"closed-book answer: {error_summary(err, 200)}"
    else:
        closed = pd.Series(
            {"method": CLOSED_BOOK, "answer": reply.text.strip(), "answer_error": None}
        )
        groups = await asyncio.gather(
            *(judge_question(llm, question, record, closed) for record in answered_records)
        )
        return [row for group in groups for row in group]
    return [
        row
        for r in answered_records
        for row in _rows(question, r["method"], CLOSED_BOOK, status, error=error)
    ]


def run_pairwise(
    llm: ChatLLM,
    records: pd.DataFrame,
    questions: pd.DataFrame,
    pairs: list[tuple[str, str]],
    in_flight: int,
    controls: int = DEFAULT_CONTROLS,
    closed_book_tokens: int = 0,
    answerer: ChatLLM | None = None,
) -> pd.DataFrame:
    """Return every judgement row (``JUDGEMENT_COLUMNS``) for ``pairs`` over the questions,
    then those of up to ``controls`` planted control pairs per method of the pairs
    (:data:`CONTROL_A` vs :data:`CONTROL_B`), which measure whether the judge reads the
    answers at all, then, with ``closed_book_tokens`` > 0, each method of the pairs against
    a closed-book answer of at most that many tokens (:data:`CLOSED_BOOK`), written by
    ``answerer`` (the answering model; default: the judge ``llm``)."""
    by_key = {(r["question_id"], r["method"]): r for _, r in records.iterrows()}
    jobs = [
        partial(judge_question, llm, q, by_key[(q["id"], a)], by_key[(q["id"], b)])
        for _, q in questions.iterrows()
        for a, b in pairs
        if (q["id"], a) in by_key and (q["id"], b) in by_key
    ]
    methods = list(dict.fromkeys(m for pair in pairs for m in pair))
    for method in methods if controls > 0 else []:
        jobs += [
            partial(judge_question, llm, *job)
            for job in control_jobs(by_key, questions, method, controls)
        ]
    for _, q in questions.iterrows() if closed_book_tokens > 0 else []:
        own = [by_key[(q["id"], m)] for m in methods if (q["id"], m) in by_key]
        jobs.append(partial(judge_against_closed_book, llm, q, own, closed_book_tokens, answerer))

    groups = run_sync(gather_counted(jobs, in_flight)) if jobs else []
    rows = [row for group in groups for row in group]
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)


WIN_RATE_COLUMNS = ["method_a", "method_b", "criterion", "win_rate", "low", "high", "n"]
WIN_RATE_COLUMNS += ["judge_failed", "not_recorded", "mean_rating_a", "mean_rating_b"]


def win_rates(
    judgements: pd.DataFrame,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> pd.DataFrame:
    """Return A's win rate over B per pair and criterion, with CI, n, failure counts and
    the two methods' mean ratings over the judged questions (NaN when none was judged)."""
    rows = []
    for (a, b, criterion), frame in judgements.groupby(
        ["method_a", "method_b", "criterion"], sort=False
    ):
        usable = frame[frame["status"].isin([SCORED, NO_ANSWER])]
        estimate = stats.bootstrap_ci(usable["score_a"], n_resamples=n_resamples, seed=seed)
        failures = [int((frame["status"] == s).sum()) for s in (JUDGE_FAILED, NOT_RECORDED)]
        means = [frame["rating_a"].mean(), frame["rating_b"].mean()]
        rate = [estimate.mean, estimate.low, estimate.high, estimate.n]
        rows.append([a, b, criterion, *rate, *failures, *means])
    return pd.DataFrame(rows, columns=WIN_RATE_COLUMNS)


def control_lines(rates: pd.DataFrame) -> list[str]:
    """Return the report's line on which criteria the judge passed its planted controls (the
    control win rate's CI above 0.5), so only those win rates are read (``rates``: win_rates)."""
    controls = rates[(rates["method_a"] == CONTROL_A) & (rates["n"] > 0)]
    if controls.empty:
        return []
    passed = controls[controls["low"] > 0.5]["criterion"].tolist()
    failed = controls[controls["low"] <= 0.5]["criterion"].tolist()
    if not failed:
        return ["", f"The judge passed its planted controls on every criterion ({len(controls)})."]
    which = "that criterion" if len(failed) == 1 else "those criteria"
    rest = f"; it passed on {', '.join(passed)}." if passed else "."
    return [
        "",
        f"The judge did not pass its planted controls on {', '.join(failed)} (the control win "
        f"rate's CI reaches 0.5): the win rates on {which} say nothing about the methods{rest}",
    ]


def closed_book_lines(rates: pd.DataFrame) -> list[str]:
    """Return the report's line on each judged method's comprehensiveness win rate over the
    closed-book answer; a method whose CI reaches 0.5 has shown nothing a corpus-blind answer
    would not (``rates``: win_rates)."""
    rows = rates[
        (rates["method_b"] == CLOSED_BOOK)
        & (rates["criterion"] == "comprehensiveness")
        & (rates["n"] > 0)
    ]
    if rows.empty:
        return []
    parts = "; ".join(
        f"{r.method_a} {r.win_rate:.3f} [{r.low:.3f}, {r.high:.3f}]"
        for r in rows.itertuples(index=False)
    )
    unproven = rows[rows["low"] <= 0.5]["method_a"].tolist()
    verdict = " Every judged method is rated above it."
    if unproven:
        which = "this method" if len(unproven) == 1 else "these methods"
        verdict = (
            f" Not above it (the CI reaches 0.5): {', '.join(unproven)}; a win rate of {which}"
            " may reward fluency, not what the corpus says."
        )
    return [
        "",
        "Against a closed-book answer (the model's answer with no corpus text), win rate on "
        f"comprehensiveness: {parts}.{verdict}",
    ]
