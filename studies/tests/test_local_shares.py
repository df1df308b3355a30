"""Local search under the budget shares it had before (recorded arms): they replay from the
cache with no model, and the lines comparing them with the committed reports are as recorded
(``golden/local_shares_*.txt``)."""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pandas as pd

from graphrag.index.store import Index
from graphrag.settings import REPO_ROOT, Settings
from studies.tests.golden import assert_printed
from workbench.session import Workbench


def with_query(settings: Settings, **values: Any) -> Settings:
    """Return a copy of ``settings`` with some ``query`` settings changed, named as
    ``QuerySettings.flat`` names them (``**{"local.text_unit_share": 0.5}``)."""
    changed = copy.deepcopy(settings)
    changed.query = changed.query.changed(values)
    return changed


BALANCED = REPO_ROOT / "data" / "kestrel_bay" / "local_balanced.toml"
QUESTION_SETS = {
    "kestrel_bay": "questions.jsonl",
    "kestrel_bay_thematic": "thematic_questions.jsonl",
    "kestrel_bay_heldout": "heldout_thematic_questions.jsonl",
}


LINE_METRICS = {"keyword_hit_rate": "keyword hit", "evidence_recall": "evidence recall"}
# MuSiQue's local answers were recorded with half of local's budget for text units and a
# fifth for reports (data/musique/graphrag.toml pinned them) before the defaults changed
MUSIQUE_BEFORE = {"local.text_unit_share": 0.5, "local.community_share": 0.2}


def local_shares_line(report: str, before: pd.DataFrame, metrics: dict[str, str]) -> str:
    """The line for one question set: the committed report's local search (the
    default shares) beside local search under the shares it had before (``before``,
    replayed) and naive RAG, on ``metrics``, and the context tokens of both."""
    committed = pd.read_parquet(REPO_ROOT / "reports" / report / "records.parquet")
    mean = committed.groupby("method")[[*metrics, "context_tokens"]].mean()
    parts = [
        f"{name} {mean.loc['local', m]:.3f} (before {before[m].mean():.3f}, naive "
        f"{mean.loc['naive', m]:.3f})"
        for m, name in metrics.items()
    ]
    tokens = (
        f"context tokens {mean.loc['local', 'context_tokens']:,.0f} "
        f"(before {before['context_tokens'].mean():,.0f})"
    )
    return f"{report} (n={len(before)}): " + "; ".join([*parts, tokens])


def text_units_read(records: pd.DataFrame) -> float:
    return records["sources"].map(lambda s: sum(x.startswith("text_unit:") for x in s)).mean()


def committed_local(report: str) -> pd.DataFrame:
    records = pd.read_parquet(REPO_ROOT / "reports" / report / "records.parquet")
    return records[records["method"] == "local"]


def test_local_search_before_its_text_share_rose_replays_on_every_question_set(
    demo_index: Index, replay_settings: Settings, tmp_path
) -> None:
    """Local search's answers under its previous budget shares
    (data/kestrel_bay/local_balanced.toml) are recorded on all three question sets: they
    replay with no model, the default's prompts hold more source text than theirs, and the
    lines comparing the two (quoted in docs/research-log.md) are as recorded."""
    shares = tomllib.loads(BALANCED.read_text())["query"]["local"]
    assert shares["text_unit_share"] < replay_settings.query.methods["local"].text_unit_share
    settings = with_query(replay_settings, **{f"local.{k}": v for k, v in shares.items()})
    lines: list[str] = []
    by_set: dict[str, pd.DataFrame] = {}
    with Workbench(settings=settings) as bench:
        bench.load(demo_index.path)
        for report, questions in QUESTION_SETS.items():
            result = bench.evaluate(
                REPO_ROOT / "data" / "kestrel_bay" / questions,
                out=tmp_path / report,
                methods=["local"],
                metrics=[],
                progress=False,
            )
            before = result.records
            assert (before["answer_error"].fillna("") == "").all()
            lines.append(local_shares_line(report, before, LINE_METRICS))
            by_set[report] = before
    assert_printed("local_shares_demo", lines)
    assert text_units_read(committed_local("kestrel_bay")) > text_units_read(by_set["kestrel_bay"])


def test_local_search_on_musique_before_its_shares_changed_replays(
    musique_index: Index, musique_settings: Settings, tmp_path
) -> None:
    """MuSiQue's local answers under the shares data/musique/graphrag.toml pinned before
    (MUSIQUE_BEFORE) are recorded: they replay with no model, and the line comparing them
    with the committed report's (quoted in docs/research-log.md) is as recorded. Every paragraph a
    selected entity leads to fits either budget, so the new shares read fewer tokens."""
    now_share = musique_settings.query.methods["local"].text_unit_share
    assert now_share > MUSIQUE_BEFORE["local.text_unit_share"]
    settings = with_query(musique_settings, **MUSIQUE_BEFORE)
    limit = int((REPO_ROOT / "data" / "musique" / "recorded_eval_limit").read_text())
    with Workbench(settings=settings) as bench:
        bench.load(musique_index.path)
        before = bench.evaluate(
            REPO_ROOT / "data" / "musique" / "questions.jsonl",
            out=tmp_path / "musique",
            methods=["local"],
            metrics=[],
            limit=limit,
            progress=False,
        ).records
    assert (before["answer_error"].fillna("") == "").all()
    metrics = {**LINE_METRICS, "exact_match": "exact match", "token_f1": "token F1"}
    assert_printed("local_shares_musique", [local_shares_line("musique", before, metrics)])
    now = committed_local("musique")
    assert now["context_tokens"].mean() < before["context_tokens"].mean()
    assert text_units_read(now) >= text_units_read(before)
