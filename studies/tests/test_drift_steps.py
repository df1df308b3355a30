"""studies/benchmarks/drift_steps.py: DRIFT's recorded demo steps replay within its bounds."""

from __future__ import annotations

from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.drift import DRIFTSearch
from graphrag.settings import REPO_ROOT
from studies.tests.golden import load_benchmark
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")


def test_the_recorded_demo_steps_replay_within_the_follow_up_bound(
    demo_index: Index, replay_settings, replay_embedder
) -> None:
    steps_of = load_benchmark("drift_steps")
    method = DRIFTSearch(demo_index, replay_settings, ChatLLM(replay_settings), replay_embedder)
    steps = steps_of.step_table(method, QUESTIONS.reset_index())
    params = replay_settings.query.methods["drift"]
    per_question = steps.groupby("question_id")
    assert per_question.ngroups == len(QUESTIONS)
    assert (per_question["depth"].apply(lambda d: (d == 0).sum()) == 1).all()  # one primer
    assert steps["depth"].max() <= params.depth
    assert (per_question.size() <= 1 + params.followups * params.depth).all()
    # the benchmark's reading: every order it prints is a mean keyword hit
    assert all(0 <= steps_of.first_read(steps, tie) <= 1 for tie in steps_of.ORDERS.values())
