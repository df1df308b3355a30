"""The few tests that call the live embedded model (marked live_llm; CI runs them).

Each uses a fresh cache folder, so the call really reaches llama.cpp, and checks what the
default model must be able to do for the workbench to work: answer, extract with the default
record format (streamed, stopped at a repetition loop) and with the schema-valid JSON the
recorded demo used, and drive a RAGAS metric.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from conftest import SMOKE_WEIGHTS

from graphrag import prompts
from graphrag.index.extract.names import name_key
from graphrag.index.extract.record_calls import extract_chunk_records
from graphrag.llm.client import ChatLLM, run_sync, track_usage
from graphrag.llm.embedded.weights import assemble_weights, graphrag_home
from graphrag.settings import load_settings
from graphrag.text.embeddings import LocalEmbedder
from studies.recorded import recorded_replies
from workbench.cli import main as cli_main
from workbench.eval import pairwise
from workbench.eval.judge import Judge
from workbench.session import Workbench

pytestmark = pytest.mark.live_llm

PARAGRAPH = (
    "Mara Okafor has led the Kestrel Bay Marine Institute in Port Aldry since 2016. "
    "The institute was founded by Saltmere University."
)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    settings = load_settings(
        env={},
        overrides={
            "cache": {"path": str(root / "cache")},
            "embeddings": {"cache_path": str(root / "emb.sqlite")},
            "llm": {"max_tokens": 400},
        },
    )
    llm = ChatLLM(settings)
    yield settings, llm
    llm.close()


def test_embedded_model_starts_and_answers(live):
    settings, llm = live
    with track_usage() as usage:
        completion = llm.chat(
            [{"role": "user", "content": "What is 17 + 25? Reply with the number only."}],
            max_tokens=10,
        )
    assert "42" in completion.text
    assert usage.calls == 1 and usage.cache_hits == 0 and usage.completion_tokens > 0
    assert llm.server is not None and llm.server.port is not None
    # The same prompt again is answered from the recorded cache, not the model.
    with track_usage() as again:
        repeat = llm.chat(
            [{"role": "user", "content": "What is 17 + 25? Reply with the number only."}],
            max_tokens=10,
        )
    assert repeat.text == completion.text and again.cache_hits == 1


def test_live_extraction_finds_the_names(live):
    """The record extraction finds most of the paragraph's names and relates some."""
    settings, llm = live
    result = run_sync(extract_chunk_records(llm, PARAGRAPH, settings.index))
    found = {name_key(e["name"]) for e in result["entities"]}
    expected = {"mara okafor", "kestrel bay marine institute", "port aldry", "saltmere university"}
    assert len(expected & found) >= 3, found
    assert result["relationships"], "no relationship extracted"


def test_live_ragas_faithfulness_on_one_answer(live):
    settings, llm = live
    judge = Judge(settings, llm, LocalEmbedder(settings), ["faithfulness"])
    result = run_sync(
        judge.score(
            "faithfulness",
            "Who leads the Kestrel Bay Marine Institute?",
            "Mara Okafor leads the Kestrel Bay Marine Institute.",
            [PARAGRAPH],
            "Mara Okafor has led it since 2016.",
        )
    )
    assert result.usage.calls >= 2, "faithfulness makes a statements call and a verdict call"
    assert result.error is None, result.error
    assert not math.isnan(result.value) and result.value >= 0.5


def test_a_second_embedded_server_with_another_model_file_judges(tmp_path, monkeypatch):
    """``judge.model_file``: the judge is served by an embedded server of its own from the
    smoke model's GGUF (the [smoke] extra), the answers by the default model's."""
    small = assemble_weights(SMOKE_WEIGHTS)  # scripts/test.sh installs the [smoke] extra
    # the servers' state in a folder of this test's (a recording's server is left alone),
    # the assembled weights shared
    home = tmp_path / "home"
    home.mkdir()
    (home / "models").symlink_to(graphrag_home() / "models")
    monkeypatch.setenv("GRAPHRAG_HOME", str(home))
    settings = load_settings(
        env={},
        overrides={
            "cache": {"path": str(tmp_path / "cache")},
            "embedded": {"parallel": 1, "ctx_size": 2048},
            "judge": {"model_file": str(small)},
        },
    )
    with Workbench(settings=settings) as bench:
        answer = bench.llm.chat(
            [{"role": "user", "content": "What is 17 + 25? Reply with the number only."}],
            max_tokens=8,
        )
        ratings = run_sync(pairwise.rate_answer(bench.judge_llm, "What is 17 + 25?", answer.text))
        answerer, judge = bench.llm.server, bench.judge_llm.server
        assert judge is not None and answerer is not None and judge.port != answerer.port
        assert judge.signature(small)[:4] == ["--model", str(small), "--alias", small.stem]
    assert "42" in answer.text
    assert set(ratings) == set(prompts.PAIRWISE_CRITERIA)
    assert all(1.0 <= r <= 5.0 for r in ratings.values())
    models = Counter(r["request"]["model"] for r in recorded_replies(bench.llm.cache.root))
    assert models == {settings.llm.model: 1, small.stem: len(ratings)}  # recorded apart


def test_a_new_project_indexes_and_answers_with_the_embedded_model(tmp_path, capsys):
    """A new user's first minutes: init, two short documents, index, ask; all with the
    defaults (the embedded model, the record extraction, community reports)."""
    root = tmp_path / "first-project"
    assert cli_main(["init", str(root)]) == 0
    (root / "input" / "institute.txt").write_text(PARAGRAPH, encoding="utf-8")
    (root / "input" / "grant.txt").write_text(
        "In 2021 the Kestrel Bay Marine Institute won a grant from the Ocean Fund to map the "
        "seagrass of Harrow Shoal. Mara Okafor announced the grant in Port Aldry.",
        encoding="utf-8",
    )
    assert cli_main(["--root", str(root), "index", "--quiet"]) == 0
    capsys.readouterr()
    question = "Who leads the Kestrel Bay Marine Institute?"
    assert cli_main(["--root", str(root), "query", question, "--method", "local", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)["local"]
    assert "Okafor" in answer["text"]
    # the project's own cache holds every reply: asking again calls no model
    assert cli_main(["--root", str(root), "--cache", "replay", "query", question]) == 0
    assert any((root / "cache" / "llm").rglob("*.json"))
