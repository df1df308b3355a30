"""The embedded model's speed on this machine: a live run keeps it in the project, and the next
dry run or ETA uses it instead of figures measured elsewhere, saying which it used."""

from __future__ import annotations

import json

import pytest
from conftest import FakeLLM, Reply

from graphrag.llm import cost, usage
from graphrag.llm.cost import embedded_speed
from workbench.cli import main


@pytest.fixture
def fresh_live(monkeypatch: pytest.MonkeyPatch) -> usage.Live:
    """This process's live calls, counted from zero for the test."""
    live = usage.Live(embedded=True)
    monkeypatch.setattr(usage, "LIVE", live)
    monkeypatch.setattr(cost, "LIVE", live)
    return live


def test_live_calls_are_counted_and_cache_hits_are_not(
    fake_llm: FakeLLM, make_llm, fresh_live: usage.Live
) -> None:
    llm = make_llm()
    fake_llm.script(Reply("Port Aldry.", prompt_tokens=40, completion_tokens=5))
    llm.chat([{"role": "user", "content": "Where is KBMI?"}])
    llm.chat([{"role": "user", "content": "Where is KBMI?"}])  # from the cache: no model time
    assert (fresh_live.calls, fresh_live.prompt_tokens, fresh_live.completion_tokens) == (1, 40, 5)
    assert fresh_live.seconds >= 0


def _run(live: usage.Live, calls: int, prompt: int, completion: int, seconds: float) -> None:
    for _ in range(calls):
        live.add(prompt // calls, completion // calls, 0.0)
    live.started = live.ended - seconds


def test_a_slow_machine_scales_the_committed_figures(make_settings, fresh_live) -> None:
    settings = make_settings("")  # the embedded model (no call is made)
    committed = embedded_speed(settings)
    expected = committed.seconds(8000, 1200, 8)
    _run(fresh_live, 8, 8000, 1200, 3 * expected)  # three times slower than committed
    path = cost.save(settings)
    assert path == cost.speed_file(settings) and path.exists()
    speed = cost.local_speed(settings)
    assert speed.prompt_tokens_per_second == pytest.approx(committed.prompt_tokens_per_second / 3)
    assert speed.completion_tokens_per_second == pytest.approx(
        committed.completion_tokens_per_second / 3
    )
    assert "this machine's last live run (8 calls" in speed.source and "3.00×" in speed.source
    assert speed.seconds(8000, 1200, 8) == pytest.approx(3 * expected)


def test_a_speed_kept_on_another_machine_is_not_used(make_settings, fresh_live) -> None:
    settings = make_settings("")  # the embedded model (no call is made)
    _run(fresh_live, 5, 5000, 500, 100.0)
    path = cost.save(settings)
    kept = json.loads(path.read_text())
    path.write_text(json.dumps({**kept, "machine": "another CPU, 64 cores"}))
    speed = cost.local_speed(settings)
    committed = embedded_speed(settings)
    assert speed.prompt_tokens_per_second == committed.prompt_tokens_per_second
    assert "measured on another machine (kept for another machine or server" in speed.source


def test_calls_no_embedded_server_answered_are_not_kept(make_settings, fresh_live) -> None:
    """A test suite's fake LLM calls (no server started) once wrote the project's speed file:
    3,591 "calls" at 1,339 reply tok/s, which made the next live run warn of contention."""
    settings = make_settings("")
    _run(fresh_live, 10, 9000, 900, 120.0)
    fresh_live.embedded = False
    assert cost.save(settings) is None


def test_too_few_or_too_short_runs_are_not_kept(make_settings, fresh_live) -> None:
    settings = make_settings("")  # the embedded model (no call is made)
    _run(fresh_live, 2, 2000, 200, 100.0)  # two calls: startup, not speed
    assert cost.save(settings) is None
    _run(fresh_live, 10, 2000, 200, 5.0)  # five seconds: noise
    assert cost.save(settings) is None
    assert "none kept" in cost.local_speed(settings).source


def test_an_endpoints_speed_is_probed_not_kept(make_settings, fresh_live, fake_llm) -> None:
    _run(fresh_live, 10, 9000, 900, 120.0)
    assert cost.save(make_settings(fake_llm.base_url)) is None


def test_the_dry_run_says_it_used_this_machines_speed(
    tmp_path, capsys, demo_subset, isolated_cwd, make_settings, fresh_live
) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(f'[cache]\npath = "{tmp_path / "llm_cache"}"\n')
    argv = ["--config", str(config), "index", "--input", str(demo_subset), "--out", "x"]
    assert main([*argv, "--dry-run"]) == 0
    assert "measured on another machine (none kept" in capsys.readouterr().out
    settings = make_settings("")  # the same cache folder as the config's
    _run(fresh_live, 6, 6000, 600, 90.0)
    cost.save(settings)
    assert main([*argv, "--dry-run"]) == 0
    assert "this machine's last live run (6 calls" in capsys.readouterr().out
