"""A judge that is not the answerer (settings ``[judge]``): the judge's client is built from
its own settings, its calls go to its endpoint and are recorded under its model, answers go
to the answering model's, and every report names its judge (or says "self-judged")."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO_DOCS, FakeLLM, nlp_settings
from test_eval import STATEMENTS_PROMPT, VERDICTS_PROMPT, faithfulness_model
from test_pairwise import RATED, fake_judge

from graphrag.index.pipeline import build_index
from graphrag.llm.client import ChatLLM
from graphrag.llm.context_check import PROBE_INSTRUCTION
from graphrag.llm.embedded.server import EmbeddedServerError
from graphrag.settings import SettingsError, judge_settings, load_settings
from workbench.session import Workbench

ANSWER = "Saltmere University and the Regional Council founded KBMI in 1998."
JUDGE_MODEL = "judge-7b"


def test_by_default_the_answering_model_judges_itself_with_the_same_client() -> None:
    settings = load_settings(env={})
    assert judge_settings(settings) is settings
    with Workbench(settings=settings) as bench:
        assert bench.judge_llm is bench.llm  # nothing built twice, every request as before


def test_a_judge_endpoint_changes_only_where_judge_calls_go() -> None:
    settings = load_settings(
        env={"JUDGE_KEY": "k"},
        overrides={
            "llm": {"base_url": "http://answers:8000/v1"},
            "judge": {"base_url": "http://judge:9000/v1", "api_key_env": "JUDGE_KEY"},
        },
    )
    judge = judge_settings(settings)
    assert (judge.llm.base_url, judge.llm.api_key_env) == ("http://judge:9000/v1", "JUDGE_KEY")
    assert judge.llm.model == settings.llm.model  # empty judge.model: the same model name
    assert judge.llm.max_tokens == settings.llm.max_tokens and judge.cache == settings.cache
    assert settings.llm.base_url == "http://answers:8000/v1"  # the answerer's are untouched


def test_a_judge_gguf_is_served_by_a_second_embedded_server_under_its_own_name(
    tmp_path: Path,
) -> None:
    gguf = tmp_path / "qwen-0.5b.gguf"
    settings = load_settings(env={}, overrides={"judge": {"model_file": str(gguf)}})
    judge = judge_settings(settings)
    assert judge.llm.base_url == "" and judge.embedded.model_file == str(gguf)
    assert judge.llm.model == "qwen-0.5b"  # not the answerer's alias for another file
    assert judge.embedded.ctx_size == settings.embedded.ctx_size
    assert ChatLLM(judge).server is not None  # an embedded server of its own (not started)
    # the answerer's own file named again is no second judge
    same = {"embedded": {"model_file": str(gguf)}, "judge": {"model_file": str(gguf)}}
    twice = load_settings(env={}, overrides=same)
    assert judge_settings(twice) is twice


def test_a_contradictory_judge_section_is_named() -> None:
    both = {"judge": {"model_file": "small.gguf", "base_url": "http://judge/v1"}}
    with pytest.raises(SettingsError, match=r"judge\.model_file.*judge\.base_url"):
        load_settings(env={}, overrides=both)
    with pytest.raises(SettingsError, match=r"unknown setting override\.judge\.url"):
        load_settings(env={}, overrides={"judge": {"url": "x"}})


def scripted_model(body: dict) -> object:
    """Answer whatever is asked: a pairwise rating, ragas's faithfulness prompts, or (any
    other prompt) an answer or closed-book passage."""
    prompt = body["messages"][-1]["content"]
    if RATED.search(prompt):
        return fake_judge(body)
    if VERDICTS_PROMPT in prompt or STATEMENTS_PROMPT in prompt:
        return faithfulness_model([1, 0])(body)
    return ANSWER


def is_judge_prompt(body: dict) -> bool:
    prompt = body["messages"][-1]["content"]
    return bool(RATED.search(prompt)) or any(
        marker in json.dumps(body["messages"]) for marker in (VERDICTS_PROMPT, STATEMENTS_PROMPT)
    )


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory, replay_embedder) -> Path:
    """Two demo documents indexed in the LLM-free mode (no model asked)."""
    out = tmp_path_factory.mktemp("judge_index") / "index"
    docs = tmp_path_factory.mktemp("judge_docs")
    for name in ("01_kbmi_profile.md", "03_storm_corvin.md"):
        (docs / name).write_text((DEMO_DOCS / name).read_text())
    settings = nlp_settings()
    build_index(docs, out, settings, ChatLLM(settings), replay_embedder, progress=False)
    return out


def question_set(folder: Path) -> Path:
    rows = [
        ("q1", "Who founded KBMI?", "Saltmere University and the Regional Council."),
        ("q2", "What did Storm Corvin damage?", "The harbour and the kelp beds."),
    ]
    path = folder / "questions.jsonl"
    lines = [
        {"id": i, "question": q, "reference": r, "type": "global", "support": ["01_kbmi_profile"]}
        for i, q, r in rows
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def evaluate(settings, index: Path, folder: Path, embedder) -> tuple[str, dict]:
    with Workbench(settings=settings) as bench:
        bench.__dict__["embedder"] = embedder
        bench.load(index)
        result = bench.evaluate(
            question_set(folder),
            out=folder / "report",
            methods=["naive", "hyde"],
            metrics=["faithfulness"],
            judge_controls=2,
            pairwise_pairs="naive:hyde",
            pairwise_controls=1,
            progress=False,
        )
    run = json.loads((folder / "report" / "run.json").read_text())
    return result.summary, run["meta"]["judge"]


def without_probe(requests: list[dict]) -> list[dict]:
    """Return the requests but the start-up check of the context window (not recorded)."""
    return [b for b in requests if PROBE_INSTRUCTION not in b["messages"][-1]["content"]]


def recorded(cache: Path) -> list[dict]:
    return [json.loads(p.read_text())["request"] for p in sorted(cache.glob("*/*.json"))]


def test_judge_calls_go_to_the_judge_endpoint_and_answers_to_the_answerer(
    make_settings, fake_llm: FakeLLM, judge_endpoint: FakeLLM, small_index, make_embedder, tmp_path
) -> None:
    fake_llm.respond_with(scripted_model)
    judge_endpoint.respond_with(scripted_model)
    judge = {"base_url": judge_endpoint.base_url, "model": JUDGE_MODEL}
    settings = make_settings(fake_llm.base_url, judge=judge)
    assert settings.cache.mode == "on"

    summary, meta = evaluate(settings, small_index, tmp_path, make_embedder(settings))

    # each endpoint's context window was checked once at start-up (graphrag/llm/context_check.py)
    answers, judged = without_probe(fake_llm.requests), without_probe(judge_endpoint.requests)
    assert len(fake_llm.requests) - len(answers) == len(judge_endpoint.requests) - len(judged) == 1
    assert answers and not any(is_judge_prompt(body) for body in answers)
    assert judged and all(is_judge_prompt(body) for body in judged)
    assert {body["model"] for body in judged} == {JUDGE_MODEL}
    assert {body["model"] for body in answers} == {settings.llm.model}
    # ragas's faithfulness, its planted controls and the pairwise ratings all reached the judge
    assert any(RATED.search(b["messages"][-1]["content"]) for b in judged)
    assert any(VERDICTS_PROMPT in json.dumps(b["messages"]) for b in judged)
    controls = pd.read_csv(tmp_path / "report" / "judge_controls.csv")
    assert len(controls) > 0 and controls["control_score"].notna().all()
    # the closed-book reference is an answer: written by the answering model
    assert sum(b.get("max_tokens") == settings.query.methods["hyde"].max_tokens for b in answers)
    # recorded apart: each endpoint's requests under its own model name
    requests = recorded(Path(settings.cache.path))
    for model, sent in ((JUDGE_MODEL, judged), (settings.llm.model, answers)):
        kept = [r for r in requests if r["model"] == model]
        assert len(kept) == len({json.dumps(body, sort_keys=True) for body in sent})
    host = judge_endpoint.base_url.split("//")[1].split("/")[0]
    assert meta == {"model": JUDGE_MODEL, "endpoint": host, "self_judged": False}
    assert f"- **Judge:** {JUDGE_MODEL} at {host}, not the answering model\n" in summary


def test_a_self_judged_report_says_so(
    make_settings, fake_llm: FakeLLM, small_index, make_embedder, tmp_path
) -> None:
    fake_llm.respond_with(scripted_model)
    settings = make_settings(fake_llm.base_url)

    summary, meta = evaluate(settings, small_index, tmp_path, make_embedder(settings))

    model = settings.llm.model
    assert meta == {"model": model, "endpoint": meta["endpoint"], "self_judged": True}
    line = f"- **Judge:** {model}, self-judged (the answering model judges its own answers)\n"
    assert line in summary
    assert any(is_judge_prompt(b) for b in fake_llm.requests)  # one endpoint did both


def test_a_missing_judge_gguf_is_named_when_its_server_would_start(tmp_path: Path) -> None:
    missing = tmp_path / "absent.gguf"
    settings = load_settings(env={}, overrides={"judge": {"model_file": str(missing)}})
    judge = ChatLLM(judge_settings(settings))  # nothing is started before a request misses
    with pytest.raises(EmbeddedServerError, match=rf"judge\.model_file.*{missing}"):
        judge.server.ensure_running()
