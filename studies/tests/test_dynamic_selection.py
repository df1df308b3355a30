"""studies/benchmarks/dynamic_selection.py over the demo's recorded relevance ratings: the ratings
replay for every report and thematic question, the ROC AUC counts pairs right, and the
selection the README reports (dynamic selection costs more prompt tokens than the map it
saves, without reading more of the reports that support the question)."""

from __future__ import annotations

import asyncio
import copy
import json
import math

import pytest
from conftest import REPO_ROOT

from graphrag import schemas as S
from graphrag.llm.client import ChatLLM
from graphrag.query.global_search.search import GlobalSearch
from studies.tests.golden import load_benchmark

THEMATIC = REPO_ROOT / "data" / "kestrel_bay" / "thematic_questions.jsonl"


def benchmark():
    return load_benchmark("dynamic_selection")


def test_auc_counts_ordered_pairs_and_ties_half() -> None:
    auc = benchmark().auc
    assert auc([3, 2, 1], [True, False, False]) == 1.0
    assert auc([1, 2, 3], [True, False, False]) == 0.0
    assert auc([2, 2, 1, 3], [True, False, False, True]) == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert math.isnan(auc([1, 2], [True, True]))  # no negatives: undefined


@pytest.fixture(scope="module")
def rated(demo_index, replay_settings, replay_embedder):
    module = benchmark()
    settings = copy.deepcopy(replay_settings)
    method = GlobalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    questions = [json.loads(line) for line in THEMATIC.read_text().splitlines()]
    ratings = module.labelled(method, questions, asyncio.run(module.rate_all(method, questions)))
    return module, method, questions, ratings


def test_every_report_is_rated_for_every_thematic_question_from_the_recording(rated) -> None:
    _, method, questions, ratings = rated
    reports = len(method.index.community_reports)
    assert len(ratings) == reports * len(questions) == 216
    assert ratings["expected"].between(0, 5).all()
    # a mean under several digits' probabilities, not the digit replied
    assert (ratings["expected"] != ratings["replied"]).mean() > 0.9
    # templates rate lower than LLM-written reports, whatever the question
    kinds = method.index.community_reports.set_index(S.COMMUNITY)[S.CONTEXT_SOURCE]
    template = ratings["community"].map(kinds) == "template"
    assert ratings.loc[template, "expected"].mean() < ratings.loc[~template, "expected"].mean()


def test_selection_prunes_as_the_threshold_rises_and_costs_more_than_the_map(rated) -> None:
    module, method, questions, _ = rated
    without, plain = module.selected(method, questions, None)
    loose, looser_cost = module.selected(method, questions, 2.0)
    strict, strict_cost = module.selected(method, questions, 3.0)
    n = [sum(map(len, kept)) for kept in (without, loose, strict)]
    assert n[0] >= n[1] > n[2]
    # a kept report never has a kept ancestor: a relevant child replaces its parent
    parent = method.index.communities.set_index(S.COMMUNITY)[S.PARENT]
    assert all(int(parent[c]) not in kept for kept in strict for c in kept)
    # the ratings read whole reports: more prompt tokens than the map calls they save
    assert strict_cost.prompt_tokens > plain.prompt_tokens
    assert strict_cost.calls > plain.calls
