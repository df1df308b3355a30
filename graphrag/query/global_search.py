"""Global search: map-reduce over the community reports of one level.

Map: the reports, shuffled with a fixed seed and packed into batches that fit
``query.global_batch_tokens`` (and hold at most ``query.global_reports_per_call`` reports:
a small model reads the first report of a long batch and little of the rest), are read
concurrently. With ``global_map_style = "sentences"`` the map is extractive: it
picks numbered sentences of the reports (``map_context.report_sentences``) with a 0-100
score, and the reduce reads those sentences verbatim, since a 1.5B model's own points
paraphrase names and dates away. With ``"points"`` (Microsoft GraphRAG's map) each call
writes JSON points with a 0-100 helpfulness score; points scored 0 are dropped, and so are
points that only restate the question (``restates_question``). Reduce: the best points or
sentences that fit ``query.global_reduce_tokens``, best score first (``order_points``), become
the final answer. When none survives, the answer says so without a reduce call rather than
inventing one. What the map reads is built in ``map_context.py``.

Per Microsoft GraphRAG's behaviour: a level is a whole-graph view (each entity's deepest
community at or above it, ``rolled_up_level``); each report's rank is shown in the map
context (``global_include_rank``); ``global_min_rank`` drops low-ranked reports; a failed map
batch is dropped and named in ``Answer.failures`` (the answer fails only when every batch
did); ``global_dynamic_selection`` rates the reports from the root down and maps only the
relevant ones (see ``dynamic_reports``). ``global_report_facts_tokens`` adds, under each
LLM-written report, the descriptions of its community's entities the report did not already
quote, and ``global_report_relations_tokens`` its relationships (``map_context.with_facts``).
``contexts`` are the texts the map read for the reports the kept points came from (the ones
a point cites, else its batch) and ``sources`` those reports.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable

import numpy as np
import pandas as pd

from graphrag import prompts, tokens
from graphrag.coroutines import gather_with_progress
from graphrag.embeddings import cosine_top_k
from graphrag.index import schemas as S
from graphrag.index.communities import rolled_up_level
from graphrag.llm import error_summary, expected_grade, grade_request
from graphrag.llm_cache import CacheMissError
from graphrag.query.base import (
    CITATION,
    Answer,
    ContextItem,
    Method,
    cited_numbers,
    fit_items,
)
from graphrag.query.map_context import (
    REPORT_OVERHEAD_TOKENS,
    batch_text,
    came_from,
    numbered_sentences,
    report_batches,
    restates_question,
    with_facts,
)


def relevance_request(question: str, report: str) -> dict:
    """Return the chat request that rates one report (``ChatLLM.achat``'s arguments)."""
    return grade_request(prompts.rate_relevance(question, report))


# The steps one answer dropped (tolerant map, failed ratings), collected across its tasks.
_failures: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "global_failures", default=None
)


def _drop(step: str, err: BaseException) -> None:
    """Name a failed step in ``Answer.failures`` and go on; a replay's cache miss is no
    failure of the model but a call never recorded, so it ends the answer (the tolerant map
    would otherwise give an answer nobody recorded)."""
    if isinstance(err, CacheMissError):
        raise err
    failures = _failures.get()
    if failures is not None:
        failures.append(f"{step}: {error_summary(err)}")


def _tolerated(replies: list, communities: list[list[int]]) -> list[tuple[int, dict]]:
    """Return (position, reply) for the map calls that answered; a failed one is dropped and
    named by its batch's ``communities`` (``_drop``), and the map fails only when every call
    did."""
    failed = [r for r in replies if isinstance(r, Exception)]
    if failed and len(failed) == len(replies):
        raise failed[0]  # a map with no batch left has nothing to say
    kept = []
    for position, (reply, batch) in enumerate(zip(replies, communities, strict=True)):
        if isinstance(reply, Exception):
            _drop(f"map batch of reports {batch}", reply)
        else:
            kept.append((position, reply))
    return kept


def usable_picks(reply: dict, count: int) -> list[dict]:
    """Return the picks of one extractive map reply that count: scored above 0, numbering
    one of the batch's ``count`` sentences."""
    return [p for p in reply["sentences"] if p["score"] > 0 and 1 <= p["n"] <= count]


def by_report_in_turn(points: list[tuple[int, str, list[int]]]) -> list[tuple[int, str, list[int]]]:
    """Return ``points`` by score, points of equal score one report at a time in turn: the
    first point of each report (reports in the order their first point came), then each
    one's second, and so on; a report's points keep their order.

    Why the option: the 1.5B map scores nearly every pick 100, so score order is report
    order, and the reduce's first items come from two or three reports
    (benchmarks/global_funnel.py: the first 8 of about 31 items held 0.241 of the 18
    thematic questions' keywords; in turn, 0.574). Why not the default: recorded on those
    questions, the answers hit fewer keywords (0.389 against 0.519) and the pairwise
    judgment against naive RAG stayed a tie (README).
    """
    order: dict[int, list[int]] = {}
    for position, point in enumerate(points):
        order.setdefault(point[0], []).append(position)
    ranked: list[int] = []
    for score in sorted(order, reverse=True):
        queues: dict[tuple[int, ...], list[int]] = {}
        for position in order[score]:
            queues.setdefault(tuple(points[position][2]), []).append(position)
        lists = list(queues.values())
        while any(lists):
            ranked += [queue.pop(0) for queue in lists if queue]
    return [points[p] for p in ranked]


class GlobalSearch(Method):
    name = "global"

    def with_facts(self, reports: pd.DataFrame) -> pd.DataFrame:
        """Return ``reports`` with their community's facts under each (``map_context``)."""
        return with_facts(
            reports,
            self.index.communities,
            self.index.entities,
            self.index.relationships,
            self.params.global_report_facts_tokens,
            self.params.global_report_relations_tokens,
        )

    def level_reports(self, question: str) -> pd.DataFrame:
        """Return the reports ``global_level`` names (-1: the level the data chooses)."""
        level = self.params.global_level
        if level < 0:
            return self.ranked_enough(self.auto_level_reports(question))
        return self.ranked_enough(self.rolled_up(level))

    def rolled_up(self, level: int) -> pd.DataFrame:
        """Return the reports of the whole-graph view of ``level`` (``rolled_up_level``)."""
        reports = self.index.community_reports
        view = rolled_up_level(self.index.communities, level)
        return reports[reports[S.COMMUNITY].isin(view[S.COMMUNITY])]

    def auto_level_reports(self, question: str) -> pd.DataFrame:
        """Return the reports of the level the data chooses (``global_level = -1``).

        The deepest whole-graph level whose reports (those ``global_min_rank`` keeps) the map
        packs into at most ``global_max_batches`` batches: the most detail the map budget
        can read. When even the root level does not
        fit (a corpus of many unrelated topics, e.g. a multi-hop benchmark's paragraphs),
        the root level's reports closest to the question in embedding space, as many as fit
        in that budget: a cheaper map than Microsoft's, which reads every report.
        """
        budget = self.params.global_batch_tokens
        most = self.params.global_max_batches
        levels = sorted(self.index.communities[S.LEVEL].unique(), reverse=True)
        for level in levels:
            chosen = self.ranked_enough(self.rolled_up(int(level)))
            if len(report_batches(chosen, budget, self.shuffle_seed)) <= most:
                return chosen
        chosen = self.rolled_up(int(levels[-1])) if levels else self.index.community_reports
        rows = [
            int(i)
            for i in np.flatnonzero(
                self.index.community_reports[S.COMMUNITY].isin(chosen[S.COMMUNITY])
            )
        ]
        vector = self.embedder.embed_one(question)
        ranked = cosine_top_k(vector, self.vectors.reports[rows], len(rows))
        texts = [self.index.community_reports[S.FULL_CONTENT].iloc[rows[r]] for r, _ in ranked]
        kept = tokens.pack(texts, budget * most, overhead=REPORT_OVERHEAD_TOKENS)
        return self.index.community_reports.iloc[[rows[ranked[k][0]] for k in kept]]

    def ranked_enough(self, reports: pd.DataFrame) -> pd.DataFrame:
        """Return the reports ranked at least ``global_min_rank``, by community number."""
        if self.params.global_min_rank > 0:
            reports = reports[reports[S.RANK] >= self.params.global_min_rank]
        return reports.sort_values(S.COMMUNITY).reset_index(drop=True)

    async def arate(self, question: str, report: str) -> float:
        """Return the report's relevance to the question, 0-5: the mean rating under the
        probabilities of the six digits (one reply token)."""
        completion = await self.llm.achat(**relevance_request(question, report))
        return expected_grade(completion, prompts.RELEVANCE_SCALE)

    async def dynamic_reports(self, question: str) -> pd.DataFrame:
        """Return the reports found relevant top-down from the root communities.

        Microsoft GraphRAG's dynamic community selection: rate the level-0 reports; a report
        rated at least ``global_dynamic_threshold`` is kept and its children are rated next
        (a relevant child replaces its parent); an irrelevant report's subtree is never
        read. At most ``global_dynamic_max_ratings`` rating calls; a failed rating counts as
        irrelevant and is named in ``Answer.failures``.
        """
        communities = self.index.communities.set_index(S.COMMUNITY)
        roots = communities.index[communities[S.LEVEL] == communities[S.LEVEL].min()]
        text_of = await self.report_texts(roots)
        queue = sorted(int(c) for c in roots if c in text_of)
        budget = self.params.global_dynamic_max_ratings
        relevant: set[int] = set()
        while queue and budget > 0:
            queue, budget = queue[:budget], budget - min(len(queue), budget)
            ratings = await gather_with_progress(
                (self.arate(question, text_of[c]) for c in queue),
                "rate reports",
                disable=True,
            )
            rated = []
            for community, rating in zip(queue, ratings, strict=True):
                if isinstance(rating, Exception):
                    _drop(f"rating of report {community}", rating)
                elif rating >= self.params.global_dynamic_threshold:
                    rated.append((rating, community))
            following = []
            for _, community in sorted(rated, key=lambda r: -r[0]):
                relevant.add(community)
                relevant.discard(int(communities.loc[community, S.PARENT]))
                following += [int(c) for c in communities.loc[community, S.CHILDREN]]
            if budget > 0:
                text_of = await self.report_texts(following)
            queue = [c for c in following if c in text_of]
        reports = self.index.community_reports
        return self.ranked_enough(reports[reports[S.COMMUNITY].isin(relevant)])

    async def report_texts(self, communities: Iterable[int]) -> dict[int, str]:
        """Return {community: report text} once ``communities`` have their reports (a lazy
        index writes them now, with the sub-communities each one reads)."""
        await self.aensure_reports(communities)
        reports = self.index.community_reports
        return dict(zip(reports[S.COMMUNITY].astype(int), reports[S.FULL_CONTENT], strict=True))

    @property
    def shuffle_seed(self) -> int:
        """The seed of the report shuffle: ``global_shuffle_seed``, else ``llm.seed``."""
        seed = self.params.global_shuffle_seed
        return self.settings.llm.seed if seed < 0 else seed

    def map_batches(self, chosen: pd.DataFrame) -> list[pd.DataFrame]:
        """Return the chosen reports, with their facts, packed into the map's batches."""
        return report_batches(
            self.with_facts(chosen),
            self.params.global_batch_tokens,
            self.shuffle_seed,
            self.params.global_reports_per_call,
        )

    async def apick_sentences(self, question: str, text: str) -> dict:
        """Return one extractive map call's reply: {sentences: [{n, score}]} for ``text``,
        a batch's numbered sentences (``numbered_sentences``)."""
        schema = prompts.map_sentences_schema(self.params.global_map_max_points)
        return await self.llm.ajson(
            prompts.global_map_sentences(question, text), schema, name="map_sentences"
        )

    async def amap(self, question: str) -> list[tuple[int, str, list[int]]]:
        """Return (score, point, communities it came from) for every nonzero point.

        A point comes from the reports of its batch that it cites (the whole batch when it
        cites none).
        """
        if self.params.global_dynamic_selection:
            chosen = await self.dynamic_reports(question)
        else:
            await self.aensure_reports()  # the level is chosen from every level's reports
            chosen = self.level_reports(question)
        batches = self.map_batches(chosen)
        budget = self.params.global_batch_tokens
        if self.params.global_map_style == "sentences":
            return await self.amap_sentences(question, batches)
        schema = prompts.map_points_schema(self.params.global_map_max_points)
        results = await gather_with_progress(
            (
                self.llm.ajson(
                    prompts.global_map(
                        question, batch_text(b, budget, self.params.global_include_rank)
                    ),
                    schema,
                    name="map_points",
                )
                for b in batches
            ),
            "global map",
            disable=True,
        )
        in_batch = [[int(c) for c in b[S.COMMUNITY]] for b in batches]
        points = []
        for position, result in _tolerated(results, in_batch):
            communities = in_batch[position]
            points += [
                (
                    p["score"],
                    p["description"].strip(),
                    came_from(p["description"], communities),
                )
                for p in result["points"]
                if p["score"] > 0
                and p["description"].strip()
                and not restates_question(p["description"], question)
            ]
        return sorted(points, key=lambda p: -p[0])

    async def amap_sentences(
        self, question: str, batches: list[pd.DataFrame]
    ) -> list[tuple[int, str, list[int]]]:
        """The extractive map: each batch's numbered sentences, the picked ones returned as
        (score, sentence with its report's citation, [community]), best first; a sentence
        picked from several reports (a parent repeats its child) is kept once, at its best
        score. A number outside the batch's list is ignored."""
        budget = self.params.global_batch_tokens
        shown = [numbered_sentences(b, budget, self.params.global_include_rank) for b in batches]
        results = await gather_with_progress(
            (self.apick_sentences(question, text) for text, numbered in shown if numbered),
            "global map",
            disable=True,
        )
        mapped = [
            (b, numbered) for b, (_, numbered) in zip(batches, shown, strict=True) if numbered
        ]
        in_batch = [[int(c) for c in b[S.COMMUNITY]] for b, _ in mapped]
        picked = []
        for position, result in _tolerated(results, in_batch):
            numbered = mapped[position][1]
            for pick in usable_picks(result, len(numbered)):
                community, sentence = numbered[pick["n"] - 1]
                picked.append((pick["score"], sentence, community))
        picked.sort(key=lambda p: -p[0])
        seen: set[str] = set()
        points = []
        for score, sentence, community in picked:
            if sentence.casefold() not in seen:
                seen.add(sentence.casefold())
                points.append((score, f"{sentence} [{community}]", [community]))
        return points

    def order_points(
        self, question: str, points: list[tuple[int, str, list[int]]]
    ) -> list[tuple[int, str, list[int]]]:
        """Return ``points`` best first: by the map's score and, with
        ``global_point_order = "score_then_question"``, points of equal score by their
        embedding similarity to the question (their report citations left out).

        Why the option: Microsoft GraphRAG orders by score alone, but the 1.5B map scores
        nearly every point it picks 100, so score order is report order, and the reduce, which
        reads the first points first (and only what fits ``global_reduce_tokens``), listed the
        festival's funding and the mayor's title in answer to a question on natural habitats.
        Why not the default: on the 18 thematic questions its answers read more on topic but
        scored no better, in keyword hit or in the pairwise judgment against naive RAG
        (benchmarks/global_map.py prints its arm). The embedder is local; no LLM call changes.
        """
        if self.params.global_point_order == "score" or len(points) < 2:
            return points
        if self.params.global_point_order == "score_then_report":
            return by_report_in_turn(points)
        vectors = self.embedder.embed([CITATION.sub("", text).strip() for _, text, _ in points])
        query = self.embedder.embed_one(question)
        similarity = dict(cosine_top_k(query, vectors, len(points)))
        order = sorted(range(len(points)), key=lambda i: (-points[i][0], -similarity[i]))
        return [points[i] for i in order]

    async def aretrieve(self, question: str) -> list[ContextItem]:
        points = self.order_points(question, await self.amap(question))
        items = [
            ContextItem(
                ",".join(f"report:{c}" for c in communities), f"(importance {score}) {text}"
            )
            for score, text, communities in points
        ]
        return fit_items(items, self.params.global_reduce_tokens)

    async def agenerate(
        self, question: str, items: list[ContextItem], short_answer: bool = False
    ) -> str:
        if not items:
            return prompts.NO_RELEVANT_REPORTS
        points = "\n".join(f"- {item.text}" for item in items)
        messages = prompts.global_reduce(question, points, self.params.answer_style)
        if short_answer:
            messages = prompts.with_final_answer_line(messages)
        return await self.final_answer(messages)

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        failures: list[str] = []
        token = _failures.set(failures)
        try:
            answer = await super().aanswer(question, short_answer)
        finally:
            _failures.reset(token)
        answer.failures = failures
        # One item stands for a batch of reports: list each report once, as its own source.
        answer.sources = list(dict.fromkeys(s for item in answer.sources for s in item.split(",")))
        reports = self.index.community_reports
        cited = reports[[f"report:{c}" in answer.sources for c in reports[S.COMMUNITY]]]
        shown = self.with_facts(cited)  # what the map read, for the reports it drew on
        text_of = dict(
            zip(
                (f"report:{c}" for c in shown[S.COMMUNITY]),
                shown[S.FULL_CONTENT],
                strict=True,
            )
        )
        answer.contexts = [text_of[s] for s in answer.sources]
        answer.context_tokens = sum(tokens.count_tokens(c) for c in answer.contexts)
        # The reduce step cites community numbers, not item numbers.
        known = {f"report:{c}" for c in self.index.community_reports[S.COMMUNITY]}
        answer.cited = [f"report:{n}" for n in cited_numbers(answer.text) if f"report:{n}" in known]
        return answer
