"""DRIFT search over the demo index (rebuilt from the recorded cache), with a scripted model:
the primer reads the reports closest to the hypothetical answer, follow-ups are bounded
however many the model asks, a failed step is dropped and named, and the answer's contexts
and sources are what its final call was written from."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FakeLLM, Reply, index_texts, prompt_kind

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.drift import DRIFTSearch
from graphrag.settings import REPO_ROOT
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")
QUESTION = QUESTIONS.loc["q11", "question"]
FOLLOW_UP = re.compile(r"Follow-up question: (.*)$")
REPORT_NUMBER = re.compile(r"(?m)^\[(\d+)\] # ")


DRIFT_PROMPTS = {
    "passage": "Write a short passage",
    "primer": "You answer a question from community reports",
    "step": "You answer a follow-up question",
    "reduce": "You write the final answer to a question from the numbered intermediate",
}


def kind_of(body: dict) -> str:
    return prompt_kind(body, DRIFT_PROMPTS)


def follow_up_of(body: dict) -> str:
    return FOLLOW_UP.search(body["messages"][1]["content"]).group(1)


class Curious:
    """A model that always asks for as many new follow-ups as it may.

    The primer asks "Question 1?", "Question 2?", …; the step for "Question 2?" asks
    "Question 2.1?", "Question 2.2?", …, so the tree is the same whatever order concurrent
    steps are served in. A step's score is the digits of its question (Question 2.1? -> 21),
    the primer's 50.
    """

    def __init__(self, passage: str = "A hypothetical answer about seagrass.") -> None:
        self.passage = passage
        self.fail: set[str] = set()  # follow-up questions whose step answers 500

    def __call__(self, body: dict) -> str | Reply:
        kind = kind_of(body)
        if kind == "passage":
            return self.passage
        if kind == "reduce":
            return "The final answer [1]."
        if kind == "step" and follow_up_of(body) in self.fail:
            return Reply("the model fell over", status=500)
        n = body["response_format"]["json_schema"]["schema"]["properties"]["follow_ups"]["maxItems"]
        if kind == "primer":
            asked, score, stem = "primer", 50, "Question "
        else:
            asked = follow_up_of(body)
            score, stem = int(re.sub(r"\D", "", asked)) % 100, asked[:-1] + "."
        follow_ups = [f"{stem}{i}?" for i in range(1, n + 1)]
        return json.dumps(
            {"answer": f"Answer to {asked}.", "score": score, "follow_ups": follow_ups}
        )


@pytest.mark.parametrize(("followups", "depth"), [(2, 3), (3, 1), (1, 2), (2, 0)])
def test_follow_ups_are_bounded_however_many_the_model_asks(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder, followups, depth
) -> None:
    settings = make_settings(
        fake_llm.base_url, query={"drift": {"followups": followups, "depth": depth}}
    )
    fake_llm.respond_with(Curious())
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    kinds = [kind_of(r) for r in fake_llm.requests]
    assert kinds.count("passage") == kinds.count("primer") == kinds.count("reduce") == 1
    assert kinds.count("step") == followups * depth
    assert answer.usage.calls == fake_llm.calls == 3 + followups * depth
    for body in fake_llm.requests:
        if kind_of(body) in ("primer", "step"):
            schema = body["response_format"]["json_schema"]["schema"]
            assert schema["properties"]["follow_ups"]["maxItems"] == followups
    # Every round answers the follow-ups of the best-scored parents, none twice.
    asked = [follow_up_of(r) for r in fake_llm.requests if kind_of(r) == "step"]
    assert len(set(asked)) == len(asked)
    first_round = [f"Question {i}?" for i in range(1, followups + 1)] if depth else []
    assert sorted(asked[:followups]) == first_round
    assert answer.failures == []


def test_rounds_take_the_follow_ups_of_the_best_parents_first(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 2, "depth": 3}})
    fake_llm.respond_with(Curious())
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    method.answer(QUESTION)

    # Round 1: the primer's Question 1? (score 1) and 2? (score 2). Round 2: the children of
    # the better parent, 2.1? and 2.2? (scores 21, 22). Round 3: pending are 1.1? and 1.2?
    # (parent score 1), 2.1.x? (parent 21) and 2.2.x? (parent 22): the children of 2.2? win.
    asked = [follow_up_of(r) for r in fake_llm.requests if kind_of(r) == "step"]
    rounds = [sorted(asked[0:2]), sorted(asked[2:4]), sorted(asked[4:6])]
    assert rounds == [
        ["Question 1?", "Question 2?"],
        ["Question 2.1?", "Question 2.2?"],
        ["Question 2.2.1?", "Question 2.2.2?"],
    ]


def test_primer_reads_the_reports_closest_to_the_hypothetical_answer(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    reports = demo_index.community_reports
    target = reports.sort_values(S.COMMUNITY).iloc[-1]
    settings = make_settings(fake_llm.base_url, query={"drift": {"depth": 0, "top_reports": 3}})
    fake_llm.respond_with(Curious(passage=target[S.FULL_CONTENT]))
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    primer = next(r for r in fake_llm.requests if kind_of(r) == "primer")
    shown = [int(c) for c in REPORT_NUMBER.findall(primer["messages"][1]["content"])]
    assert shown[0] == int(target[S.COMMUNITY])
    assert 1 <= len(shown) <= 3
    assert answer.sources == [f"report:{c}" for c in shown]
    known = index_texts(demo_index)
    assert answer.contexts == ["Answer to primer.", *(known[s] for s in answer.sources)]


def test_contexts_are_the_ranked_answers_and_what_they_read(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 2, "depth": 1}})
    model = Curious()
    fake_llm.respond_with(model)
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    # Scores: primer 50, "Question 1?" 1, "Question 2?" 2: the reduce reads them best first.
    reduce = next(r for r in fake_llm.requests if kind_of(r) == "reduce")
    numbered = ["Answer to primer.", "Answer to Question 2?.", "Answer to Question 1?."]
    expected = "\n\n".join(f"[{i}] {a}" for i, a in enumerate(numbered, start=1))
    assert reduce["messages"][1]["content"].startswith(f"Intermediate answers:\n{expected}\n")
    assert answer.contexts[:3] == numbered
    known = index_texts(demo_index)
    assert answer.sources and all(
        s.split(":")[0] in ("report", "text_unit") for s in answer.sources
    )
    assert answer.contexts[3:] == [known[s] for s in answer.sources]
    assert any(s.startswith("text_unit:") for s in answer.sources), "local steps read chunks"
    # The final answer cites [1], the primer: its reports are the cited sources.
    primer = next(r for r in fake_llm.requests if kind_of(r) == "primer")
    shown = REPORT_NUMBER.findall(primer["messages"][1]["content"])
    assert answer.cited == [f"report:{c}" for c in shown]


@pytest.mark.parametrize(("units", "reports"), [(0.5, 0.2), (0.9, 0.1)])
def test_a_follow_up_reads_local_search_with_drift_s_own_shares(
    demo_index: Index,
    make_settings,
    fake_llm: FakeLLM,
    replay_embedder,
    units,
    reports,
    monkeypatch,
) -> None:
    """DRIFT's follow-ups read local search's context with their own budget shares (as
    Microsoft's DRIFT configures its local step), whatever the local method's are."""
    from graphrag.llm.coroutines import run_sync
    from graphrag.query import drift
    from graphrag.query.local import LocalSearch

    monkeypatch.setattr(drift, "LOCAL_TEXT_UNIT_SHARE", units)
    monkeypatch.setattr(drift, "LOCAL_COMMUNITY_SHARE", reports)
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 1, "depth": 1}})
    fake_llm.respond_with(Curious())
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    method.answer(QUESTION)

    step = next(r for r in fake_llm.requests if kind_of(r) == "step")
    own = make_settings(
        fake_llm.base_url,
        query={"local": {"text_unit_share": units, "community_share": reports}},
    )
    local = LocalSearch(demo_index, own, ChatLLM(own), replay_embedder)
    read = [i.text for i in run_sync(local.aretrieve("Question 1?"))]
    assert all(text in step["messages"][1]["content"] for text in read)
    default = make_settings(fake_llm.base_url).query.methods["local"].text_unit_share
    assert settings.query.methods["local"].text_unit_share == default  # local's stays its own
    local_default = LocalSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    assert [i.text for i in run_sync(local_default.aretrieve("Question 1?"))] != read


def test_a_failed_follow_up_is_dropped_and_named(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 2, "depth": 1}})
    model = Curious()
    model.fail = {"Question 1?"}
    fake_llm.respond_with(model)
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    assert answer.text == "The final answer [1]."
    assert len(answer.failures) == 1 and "Question 1?" in answer.failures[0]
    assert "Answer to Question 2?." in answer.contexts
    assert "Answer to Question 1?." not in answer.contexts


def test_nothing_useful_answers_so_without_a_reduce(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 1, "depth": 1}})

    def useless(body: dict) -> str:
        if kind_of(body) == "passage":
            return "Nothing."
        return json.dumps({"answer": "Not in the data.", "score": 0, "follow_ups": ["More?"]})

    fake_llm.respond_with(useless)
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    answer = method.answer(QUESTION)

    assert answer.text == prompts.NO_DRIFT_ANSWERS["en"]
    assert [kind_of(r) for r in fake_llm.requests] == ["passage", "primer", "step"]
    assert answer.contexts == [] and answer.sources == []


def test_a_second_run_replays_every_call_from_the_cache(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    # Concurrent follow-ups must not change any prompt between runs, or a recorded DRIFT
    # answer could never replay.
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 3, "depth": 2}})
    fake_llm.respond_with(Curious())
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)

    first = method.answer(QUESTION)
    live_calls = fake_llm.calls
    again = method.answer(QUESTION)

    assert live_calls == first.usage.calls == 3 + 3 * 2 and first.usage.cache_hits == 0
    assert fake_llm.calls == live_calls, "nothing new was asked"
    assert again.usage.calls == again.usage.cache_hits == live_calls
    assert (again.text, again.contexts, again.sources) == (
        first.text,
        first.contexts,
        first.sources,
    )


def test_a_chinese_question_is_searched_and_answered_in_chinese(
    demo_index: Index, make_settings, fake_llm: FakeLLM, replay_embedder
) -> None:
    """Every DRIFT call of a Chinese question uses the Chinese prompt, and when nothing useful
    is found the canned answer is Chinese too."""
    settings = make_settings(fake_llm.base_url, query={"drift": {"followups": 1, "depth": 1}})
    chinese = {"primer": "你根据知识图谱的社区报告", "step": "你只根据编号的上下文回答一个后续问题"}
    chinese["reduce"] = "你根据一次搜索得到的编号中间答案"
    seen = []

    def reply(body: dict, score: int) -> str:
        system = body["messages"][0]["content"]
        kind = next((k for k, start in chinese.items() if system.startswith(start)), "passage")
        seen.append(kind)
        if kind == "passage":
            return "海藻合作社。"
        if kind == "reduce":
            return "合作社成立于2015年 [1]。"
        return json.dumps({"answer": "合作社 [1]。", "score": score, "follow_ups": ["何时？"]})

    question = "青澜湾的海藻合作社是哪一年成立的？"
    fake_llm.respond_with(lambda body: reply(body, 60))
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    assert method.answer(question).text == "合作社成立于2015年 [1]。"
    assert seen == ["passage", "primer", "step", "reduce"]

    fake_llm.reset()
    fake_llm.respond_with(lambda body: reply(body, 0))
    method = DRIFTSearch(demo_index, settings, ChatLLM(settings), replay_embedder)
    assert method.answer(question + "？").text == prompts.NO_DRIFT_ANSWERS["zh"]
