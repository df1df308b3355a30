"""Runs that tell the truth about time: a stopped run says how far it got and exits non-zero,
a model far below its calibrated speed is named once, the embedded server's threads follow the
cores this process may use. The model is a scripted fake endpoint (it is not under test)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import FakeLLM, Reply, indexing_model

from graphrag.llm import progress
from graphrag.llm.context_check import PROBE_INSTRUCTION
from graphrag.llm.coroutines import gather_with_progress, run_sync
from graphrag.llm.cost import ModelSpeed, usable_cores
from graphrag.llm.embedded.server import EmbeddedServer
from graphrag.llm.progress import RunProgress
from graphrag.llm.stream import StopRuleFactory
from graphrag.settings import REPO_ROOT

EXTRACTION = "You build a knowledge graph"


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a script's `graphrag ... &` starts


@pytest.mark.parametrize("started_by", ["a terminal", "a script with &"])
def test_sigterm_mid_extraction_reports_k_of_n_and_exits_non_zero(
    fake_llm: FakeLLM, demo_subset: Path, tmp_path: Path, started_by: str
) -> None:
    """The second extraction call is held until the run is stopped: the log must not say
    "done", and the exit code must say the run did not finish. A background job of a script
    ignores SIGINT; SIGTERM must stop it all the same (it once left such a run going)."""
    arrived, release, extractions = threading.Event(), threading.Event(), [0]

    def held_model(body: dict) -> str:
        if body["messages"][0]["content"].startswith(PROBE_INSTRUCTION):
            return "ok"  # the start-up context check
        if body["messages"][0]["content"].startswith(EXTRACTION):
            extractions[0] += 1
            if extractions[0] == 2:
                arrived.set()
                release.wait(60)
        return indexing_model(body)

    fake_llm.respond_with(held_model)
    project = tmp_path / "project"
    project.mkdir()
    (project / "graphrag.toml").write_text(
        f'[project]\ninput = "{demo_subset}"\n'
        f'[llm]\nbase_url = "{fake_llm.base_url}"\nmax_retries = 0\nconcurrency = 1\n'
        "[index]\npack_documents_tokens = 0\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    command = [sys.executable, "-m", "graphrag", "index", "--root", str(project)]
    preexec = _ignore_sigint if started_by == "a script with &" else None
    run = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    try:
        while not arrived.wait(0.05):
            assert run.poll() is None, run.stderr.read()
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        release.set()
        run.kill()
    assert run.returncode == 128 + signal.SIGTERM
    stopped = re.search(r"extract: .*interrupted after (\d+) of (\d+) items", err)
    assert stopped, err
    assert int(stopped[1]) == 1 < int(stopped[2])
    assert "extract: 1/" in err and "done in" not in err.split("[2/")[1]
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"graphrag: extract: interrupted after 1 of {stopped[2]} items")
    assert "the same command resumes" in last


def _stage_of_calls(calls: int, make_llm, capsys) -> str:  # noqa: ANN001
    llm = make_llm()
    lines = RunProgress(["answer"], enabled=True, unit="answers")
    with lines.stage("answer"):
        coros = [llm.atext([{"role": "user", "content": f"question {i}?"}]) for i in range(calls)]
        run_sync(gather_with_progress(coros, "answers"))
    return capsys.readouterr().err


def test_a_model_far_below_its_calibrated_speed_is_named_once(
    fake_llm: FakeLLM, make_llm, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "_calibration", None)
    monkeypatch.setattr(progress, "WARN_AFTER_SECONDS", 0.0)  # judge from the first reply
    # each reply takes 0.3 s for ~10 tokens: at 1,000 tokens/s it would take 0.01 s
    fake_llm.respond_with(lambda body: Reply(content="An answer.", delay=0.3))
    progress.calibrate(ModelSpeed(1000.0, 1000.0, "measured elsewhere"), "/tmp/server-x.log")
    err = _stage_of_calls(3, make_llm, capsys)
    assert err.count("warning: the model runs at") == 1, err
    assert "another process busy on these CPU cores" in err and "/tmp/server-x.log" in err
    assert re.search(r"answer: 3/3 answers, 3 LLM calls, [\d.]+ tok/s", err)
    # a model at its calibrated speed is not warned about
    monkeypatch.setattr(progress, "_calibration", None)
    progress.calibrate(ModelSpeed(1.0, 1.0, "a slow machine"), "/tmp/server-y.log")
    assert "warning" not in _stage_of_calls(2, make_llm, capsys)


def test_streamed_reply_tokens_count_while_they_arrive(fake_llm: FakeLLM, make_llm, capsys) -> None:
    """A stage whose one call streams for a while shows reply tokens before the call ends."""
    seen: list[int] = []
    pieces = [f"w{i} " for i in range(40)]
    fake_llm.respond_with(lambda body: Reply(content="", pieces=pieces))
    llm = make_llm()

    class Watch:
        def check(self, partial: str) -> None:
            seen.append(progress._current.get().streamed)

    rule = StopRuleFactory("watch", Watch)
    lines = RunProgress(["extract"], enabled=False)
    with lines.stage("extract") as line:
        run_sync(llm.achat([{"role": "user", "content": "go"}], stop_rule=rule))
        after = line.streamed
    assert seen[-1] == len(pieces) and after == 0  # in flight, then counted in the usage


def test_server_threads_follow_the_usable_cores(make_settings) -> None:
    cores = len(os.sched_getaffinity(0))
    assert usable_cores() == cores
    signature = EmbeddedServer(make_settings()).signature(Path("model.gguf"))
    assert signature[signature.index("--threads") + 1] == str(cores)


def test_a_query_shows_its_calls_on_one_live_line(fake_llm: FakeLLM, make_llm, capsys) -> None:
    fake_llm.respond_with(lambda body: "An answer.")
    llm = make_llm()
    lines = RunProgress(["query"], unit="LLM calls")
    with lines.stage("query"):
        for i in range(2):
            run_sync(llm.atext([{"role": "user", "content": f"question {i}?"}]))
    err = capsys.readouterr().err
    assert re.search(r"\[1/1\] query: 2 LLM calls, [\d.]+ tok/s, done in", err), err
