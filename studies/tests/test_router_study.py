"""studies/benchmarks/router_study.py over the committed demo report."""

from __future__ import annotations

import pandas as pd
import pytest

from graphrag.query.router import PROTOTYPE_TOP, routes
from graphrag.settings import REPO_ROOT, load_settings
from studies.tests.golden import assert_printed, load_benchmark
from workbench.eval.questions import load_questions


def test_the_routing_figures_are_the_committed_report_s() -> None:
    """studies/benchmarks/router_study.py over the committed demo report: the router's own recorded
    answers score what routing each question to its method's answer scores, and the
    strategies' line it prints (quoted in docs/research-log.md) is as recorded in golden/."""
    study = load_benchmark("router_study")
    settings = load_settings(env={})
    questions = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
    predicted = study.classify_set(questions, PROTOTYPE_TOP)
    records = pd.read_parquet(REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet")
    scores, n = study.routing_scores(
        predicted, records, routes(settings.query.methods["router"]), "keyword_hit_rate"
    )
    recorded = records[records["method"] == "router"]["keyword_hit_rate"].mean()
    assert n == 24
    assert scores.set_index("strategy").loc["router"].iloc[0] == pytest.approx(recorded)
    assert "router" not in scores["strategy"].iloc[1]  # the best single method is a method
    line = study.summary_line(scores, "keyword_hit_rate", n)
    assert_printed("router_study", [line])
