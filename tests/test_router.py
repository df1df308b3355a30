"""The router: its classifier on hand-made questions of known kind, the routing itself with
canned methods, and on the demo index in replay."""

from __future__ import annotations

import pytest
from conftest import FakeLLM, empty_settings_file

from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync, track_usage
from graphrag.query.base import Answer, Method
from graphrag.query.global_search.search import GlobalSearch
from graphrag.query.local import LocalSearch
from graphrag.query.registry import OPT_IN_METHODS, make_methods
from graphrag.query.router import (
    KINDS,
    PROTOTYPES,
    PrototypeClassifier,
    Router,
)
from graphrag.settings import REPO_ROOT, Settings, SettingsError
from workbench.eval.questions import load_questions

QUESTIONS = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl").set_index("id")

# Written for this test: none is a prototype and none comes from a question set.
LABELLED = {
    "fact": [
        "What year did the railway station open?",
        "How many seats does the new concert hall have?",
        "Who was elected chair of the hospital board in 2021?",
        "Which company supplies the town's drinking water?",
        "What was the budget of the bridge repair announced in March?",
        "Where did the research vessel dock after its first voyage?",
    ],
    "multi_hop": [
        "The engineer who built the lighthouse had a brother. Which newspaper did he edit?",
        "Who owns the vineyard that supplied the wine served at the governor's wedding?",
        "In which city was the coach of the team that won the league born?",
        "What prize did the poet who taught the novelist receive?",
        "Which bank lent money to the firm whose founder bought the castle?",
        "The singer who opened the festival later married a politician. Which party does he lead?",
    ],
    "thematic": [
        "What are the main challenges facing the region according to these documents?",
        "How has the relationship between science and politics changed across the collection?",
        "What overall picture of the local economy emerges from the reports?",
        "Which recurring themes connect the different stories in the corpus?",
        "How do the documents portray the role of young people in the community?",
        "What are the major debates about the environment, and how did they develop?",
    ],
}


def test_classifier_finds_the_kind_of_hand_made_questions(make_embedder) -> None:
    classifier = PrototypeClassifier(make_embedder())
    predicted = {(kind, q): classifier.classify(q) for kind, qs in LABELLED.items() for q in qs}
    right = sum(kind == guess for (kind, _), guess in predicted.items())
    wrong = {q: guess for (kind, q), guess in predicted.items() if kind != guess}
    # chance is 1/3; the prototypes are generic, so some misses are expected and listed
    assert right / len(predicted) >= 0.75, wrong
    for kind in KINDS:
        hits = sum(predicted[(kind, q)] == kind for q in LABELLED[kind])
        assert hits >= 3, f"{kind}: only {hits}/6 right; misses {wrong}"


def test_a_prototype_question_is_its_own_kind(make_embedder) -> None:
    classifier = PrototypeClassifier(make_embedder())
    for kind, questions in PROTOTYPES.items():
        for question in questions:
            scores = classifier.scores(question)
            assert max(scores, key=scores.__getitem__) == kind, (question, scores)


class Canned(Method):
    """A stand-in method: one LLM call, then a fixed answer naming itself."""

    def __init__(self, name: str, llm: ChatLLM) -> None:
        self.name, self.llm, self.asked = name, llm, []

    async def aanswer(self, question: str, short_answer: bool = False) -> Answer:
        self.asked.append(question)
        with track_usage() as usage:
            await self.llm.achat([{"role": "user", "content": f"{self.name}: {question}"}])
        return Answer(question, self.name, f"{self.name} says", ["c"], ["text_unit:x"], usage=usage)


def _router(settings: Settings, embedder) -> tuple[Router, dict[str, Canned]]:
    llm = ChatLLM(settings)
    canned = {n: Canned(n, llm) for n in ("local", "global", "ppr", "drift")}
    return Router(None, settings, llm, embedder, methods=canned), canned  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "route"),
    [
        (PROTOTYPES["fact"][0], "fact -> ppr"),
        (PROTOTYPES["multi_hop"][0], "multi_hop -> local"),
        (PROTOTYPES["thematic"][0], "thematic -> drift"),
    ],
)
def test_router_answers_with_the_method_set_for_the_kind(
    fake_llm: FakeLLM, make_settings, make_embedder, question: str, route: str
) -> None:
    settings = make_settings(
        fake_llm.base_url,
        query={"router": {"fact_method": "ppr", "thematic_method": "drift"}},
    )
    router, canned = _router(settings, make_embedder(settings))
    fake_llm.respond_with(lambda body: "done")
    answer = router.answer(question)
    chosen = route.split(" -> ")[1]
    assert (answer.method, answer.route, answer.text) == ("router", route, f"{chosen} says")
    assert [n for n, m in canned.items() if m.asked] == [chosen]
    assert answer.to_dict()["route"] == route
    assert answer.usage.calls == fake_llm.calls == 1, "the embedding classifier calls no LLM"


@pytest.mark.parametrize("route", ["oracle", "router"])
def test_a_route_to_no_method_or_to_the_router_names_the_setting(
    make_settings, make_embedder, route: str
) -> None:
    with pytest.raises(SettingsError, match=f"query.router.thematic_method='{route}'"):
        make_settings(query={"router": {"thematic_method": route}})
    # settings made in code skip the loader: the router checks its routes when it is made
    settings = make_settings()
    settings.query = settings.query.changed({"router.thematic_method": route})
    with pytest.raises(SettingsError, match=f"query.router.thematic_method='{route}'"):
        _router(settings, make_embedder(settings))


def test_router_is_opt_in() -> None:
    assert OPT_IN_METHODS["router"] is Router


@pytest.mark.parametrize(
    ("qid", "route", "method"),
    [("q01", "fact -> local", LocalSearch), ("q19", "thematic -> global", GlobalSearch)],
)
def test_router_on_the_demo_gives_the_recorded_answer_of_the_method_it_picks(
    demo_index: Index, replay_settings, replay_embedder, qid, route, method
) -> None:
    settings = replay_settings
    question = QUESTIONS.loc[qid, "question"]
    llm = ChatLLM(settings)
    routed = make_methods(demo_index, ["router"], settings, llm, replay_embedder)["router"]
    answer = routed.answer(question)  # replay: a call not in the cache would raise
    picked = method(demo_index, settings, llm, replay_embedder)
    direct = picked.answer(question)
    assert answer.route == route and answer.method == "router"
    assert (answer.text, answer.sources, answer.contexts) == (
        direct.text,
        direct.sources,
        direct.contexts,
    )
    assert answer.usage.calls == direct.usage.calls > 0
    assert answer.usage.completion_tokens == direct.usage.completion_tokens
    # it retrieves what the picked method retrieves (global's map points, whose reports are
    # the answer's contexts)
    assert run_sync(routed.aretrieve(question)) == run_sync(picked.aretrieve(question))


def test_cli_query_prints_the_route(demo_index: Index, capsys, monkeypatch, tmp_path) -> None:
    """The demo as shipped: the default settings (an empty settings file) over its index."""
    from workbench.cli import main

    monkeypatch.setenv("GRAPHRAG_EMBEDDINGS__CACHE_PATH", str(tmp_path / "vectors.sqlite"))

    question = QUESTIONS.loc["q01", "question"]
    args = ["--config", str(empty_settings_file(tmp_path)), "--cache", "replay", "query"]
    args += ["--index", str(demo_index.path), "--method", "router"]
    assert main([*args, question]) == 0
    out = capsys.readouterr().out
    assert out.startswith("=== router") and "  route: fact -> local\n" in out
