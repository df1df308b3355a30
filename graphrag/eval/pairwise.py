"""Head-to-head comparison of two methods' answers, as the GraphRAG paper scores global questions.

For each question the judge reads both answers and, for each criterion (comprehensiveness,
diversity, empowerment, directness), names the better one or a tie. Every pair is judged in
both orders: A's score on a criterion is the mean of its two results (win 1, tie 0.5, loss 0),
so a verdict that flips with the order (position bias) counts as a tie. The win rate of A
over B is the mean of A's scores over questions, with a bootstrap CI; above 0.5 means A won
more often. A method that failed to answer loses to one that answered (0, no judge call);
two failures tie. A judge reply that stays invalid is a counted failure; in replay, a
judgement that was never recorded is reported as not recorded, never as a number.
"""

from __future__ import annotations

import asyncio
import itertools
import math

import pandas as pd

from graphrag import prompts
from graphrag.coroutines import run_sync
from graphrag.eval import stats
from graphrag.llm import ChatLLM
from graphrag.llm_cache import CacheMissError

CRITERIA = tuple(prompts.PAIRWISE_CRITERIA)
SCORED, JUDGE_FAILED, NOT_RECORDED, NO_ANSWER = (
    "scored",
    "judge failed",
    "not recorded",
    "no answer",
)
JUDGEMENT_COLUMNS = [
    "question_id",
    "type",
    "method_a",
    "method_b",
    "criterion",
    "score_a",
    "first_won",
    "decisive",
    "status",
    "error",
]
_FIRST = {1: 1.0, 0: 0.5, 2: 0.0}  # the first-shown answer's score for a verdict


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


def combine(first: dict, second: dict) -> dict[str, tuple[float, float, int]]:
    """Return, per criterion, A's score and the first position's wins over both orders.

    ``first`` is the verdict with A shown first, ``second`` with B shown first. The values
    are (A's score, wins of the first-shown answer, decisive verdicts).
    """
    out = {}
    for criterion in CRITERIA:
        one, two = int(first[criterion]["winner"]), int(second[criterion]["winner"])
        score_a = (_FIRST[one] + (1.0 - _FIRST[two])) / 2
        first_won = int(one == 1) + int(two == 1)
        decisive = int(one != 0) + int(two != 0)
        out[criterion] = (score_a, first_won, decisive)
    return out


def answered(record: pd.Series) -> bool:
    """Whether a record holds an answer to judge: no error and some text."""
    return not isinstance(record["answer_error"], str) and bool(str(record["answer"]).strip())


async def judge_question(
    llm: ChatLLM, question: pd.Series, a: pd.Series, b: pd.Series
) -> list[dict]:
    """Return one row per criterion for methods ``a`` and ``b`` on one question."""
    base = {
        "question_id": question["id"],
        "type": question["type"],
        "method_a": a["method"],
        "method_b": b["method"],
    }
    failed_a, failed_b = (not answered(r) for r in (a, b))
    if failed_a or failed_b:
        score = 0.5 if failed_a and failed_b else (0.0 if failed_a else 1.0)
        return [
            {
                **base,
                "criterion": c,
                "score_a": score,
                "first_won": 0,
                "decisive": 0,
                "status": NO_ANSWER,
                "error": None,
            }
            for c in CRITERIA
        ]
    schema = prompts.pairwise_schema()
    try:
        first, second = await asyncio.gather(
            llm.ajson(
                prompts.pairwise(question["question"], a["answer"], b["answer"]),
                schema,
                name="pairwise",
            ),
            llm.ajson(
                prompts.pairwise(question["question"], b["answer"], a["answer"]),
                schema,
                name="pairwise",
            ),
        )
    except CacheMissError:
        status, error = NOT_RECORDED, None  # its message names a machine path
    except Exception as err:  # noqa: BLE001 - a judge failure is a counted row, not a crash
        status, error = JUDGE_FAILED, f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
    else:
        return [
            {
                **base,
                "criterion": c,
                "score_a": s,
                "first_won": w,
                "decisive": d,
                "status": SCORED,
                "error": None,
            }
            for c, (s, w, d) in combine(first, second).items()
        ]
    return [
        {
            **base,
            "criterion": c,
            "score_a": math.nan,
            "first_won": 0,
            "decisive": 0,
            "status": status,
            "error": error,
        }
        for c in CRITERIA
    ]


# The planted control: a question's own answer against another question's answer (both by
# the first pair's first method). A judge that reads the answers prefers its own answer on
# every criterion in both orders (win rate 1.0); a judge that picks by position scores 0.5.
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
    jobs = []
    for i, (question, own) in enumerate(usable[:n]):
        other = usable[(i + 1) % len(usable)][1]
        jobs.append(
            (
                question,
                pd.Series({**own, "method": CONTROL_A}),
                pd.Series({**other, "method": CONTROL_B}),
            )
        )
    return jobs


def run_pairwise(
    llm: ChatLLM,
    records: pd.DataFrame,
    questions: pd.DataFrame,
    pairs: list[tuple[str, str]],
    in_flight: int,
    controls: int = DEFAULT_CONTROLS,
) -> pd.DataFrame:
    """Return every judgement row (``JUDGEMENT_COLUMNS``) for ``pairs`` over the questions,
    then those of ``controls`` planted control pairs (:data:`CONTROL_A` vs :data:`CONTROL_B`),
    which measure whether the judge reads the answers at all."""
    by_key = {(r["question_id"], r["method"]): r for _, r in records.iterrows()}
    jobs = [
        (q, by_key[(q["id"], a)], by_key[(q["id"], b)])
        for _, q in questions.iterrows()
        for a, b in pairs
        if (q["id"], a) in by_key and (q["id"], b) in by_key
    ]
    if pairs and controls > 0:
        jobs += control_jobs(by_key, questions, pairs[0][0], controls)

    async def run() -> list[list[dict]]:
        gate = asyncio.Semaphore(max(1, in_flight))

        async def one(job: tuple) -> list[dict]:
            async with gate:
                return await judge_question(llm, *job)

        return await asyncio.gather(*(one(job) for job in jobs))

    rows = [row for group in run_sync(run()) for row in group] if jobs else []
    return pd.DataFrame(rows, columns=JUDGEMENT_COLUMNS)


WIN_RATE_COLUMNS = [
    "method_a",
    "method_b",
    "criterion",
    "win_rate",
    "low",
    "high",
    "n",
    "judge_failed",
    "not_recorded",
    "first_position_wins",
]


def win_rates(
    judgements: pd.DataFrame,
    n_resamples: int = stats.DEFAULT_RESAMPLES,
    seed: int = stats.DEFAULT_SEED,
) -> pd.DataFrame:
    """Return A's win rate over B per pair and criterion, with CI, n and failure counts.

    ``first_position_wins`` is the share of decisive verdicts that went to whichever answer
    was shown first (0.5 = no position bias); NaN when no verdict was decisive.
    """
    rows = []
    for (a, b, criterion), frame in judgements.groupby(
        ["method_a", "method_b", "criterion"], sort=False
    ):
        usable = frame[frame["status"].isin([SCORED, NO_ANSWER])]
        estimate = stats.bootstrap_ci(usable["score_a"], n_resamples=n_resamples, seed=seed)
        decisive = int(frame["decisive"].sum())
        rows.append(
            {
                "method_a": a,
                "method_b": b,
                "criterion": criterion,
                "win_rate": estimate.mean,
                "low": estimate.low,
                "high": estimate.high,
                "n": estimate.n,
                "judge_failed": int((frame["status"] == JUDGE_FAILED).sum()),
                "not_recorded": int((frame["status"] == NOT_RECORDED).sum()),
                "first_position_wins": (
                    frame["first_won"].sum() / decisive if decisive else math.nan
                ),
            }
        )
    return pd.DataFrame(rows, columns=WIN_RATE_COLUMNS)


def control_lines(rates: pd.DataFrame) -> list[str]:
    """Return the report's generated line on which criteria the judge passed its planted
    controls (the control win rate's CI lies above 0.5), so only those win rates are read;
    ``rates`` is :func:`win_rates`' table."""
    controls = rates[(rates["method_a"] == CONTROL_A) & (rates["n"] > 0)]
    if controls.empty:
        return []
    passed = controls[controls["low"] > 0.5]["criterion"].tolist()
    failed = controls[controls["low"] <= 0.5]["criterion"].tolist()
    if not failed:
        return ["", f"The judge passed its planted controls on every criterion ({len(controls)})."]
    return [
        "",
        "The judge did not pass its planted controls on "
        + ", ".join(failed)
        + " (the control win rate's CI reaches 0.5): the win rates on "
        + ("that criterion" if len(failed) == 1 else "those criteria")
        + " say nothing about the methods"
        + (f"; it passed on {', '.join(passed)}." if passed else "."),
    ]
