"""What the demo's committed reports evaluate: a corpus's ``recorded_*`` files (the ones
scripts/demo.sh reads), so a notebook or a test replays the same run from the recorded cache."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag.llm.cache import canonical_json
from workbench.eval import judge_validity
from workbench.eval.questions import MethodLimit, parse_method_limits


@dataclass
class RecordedRun:
    """What a corpus's committed report evaluates, named by its ``recorded_*`` files (the
    ones scripts/demo.sh reads): every call of such a run is in the recorded cache."""

    limit: int | None  # None: every question
    methods: list[str] | None  # None: the settings' eval.methods
    metrics: list[str]
    pairwise: str | None
    method_limits: dict[str, MethodLimit] = field(default_factory=dict)
    judge_sample: int = 0  # faithfulness and context recall on a seeded sample (0: all)
    keep_controls: Path | None = None  # the recorded planted control cases (--keep-controls)

    def evaluate_options(self) -> dict:
        """Keyword arguments of :meth:`Workbench.evaluate` that replay this run (planted
        judge controls only when a RAGAS metric is recorded, as scripts/demo.sh asks)."""
        return {
            "limit": self.limit,
            "methods": self.methods,
            "metrics": self.metrics,
            "judge_controls": judge_validity.DEFAULT_PAIRS if self.metrics else 0,
            "pairwise_pairs": self.pairwise,
            "method_limits": self.method_limits,
            "judge_sample": self.judge_sample,
            "keep_controls": self.keep_controls,
        }


def recorded_run(corpus: str | Path) -> RecordedRun | None:
    """Return the run ``corpus``'s ``recorded_*`` files name, or None when it has none (a
    user's corpus: evaluate it as its settings say). A missing eval_limit file means every
    question; a missing methods file, the settings' methods; a missing metrics or pairwise
    file, or "none", means none; a missing judge_sample file, every question judged; a
    ``recorded_judge_controls.csv``, the planted control cases the report keeps."""
    if not any(Path(corpus).glob("recorded_*")):
        return None

    def read(name: str) -> str:
        path = Path(corpus) / f"recorded_{name}"
        text = path.read_text().strip() if path.is_file() else "none"
        return "" if text == "none" else text

    kept = Path(corpus) / "recorded_judge_controls.csv"
    return RecordedRun(
        limit=int(read("eval_limit")) if read("eval_limit") else None,
        methods=read("methods").split(",") if read("methods") else None,
        metrics=[m for m in read("metrics").split(",") if m],
        pairwise=read("pairwise") or None,
        method_limits=parse_method_limits(read("method_limits")),
        judge_sample=int(read("judge_sample") or 0),
        keep_controls=kept if kept.is_file() else None,
    )


def recorded_replies(root: str | Path, schema_name: str | None = None) -> list[dict[str, Any]]:
    """Return the replies recorded in the LLM cache folder ``root``, each once, in key order;
    with ``schema_name``, only the JSON calls whose response format names that schema (e.g.
    ``"graph_extraction"``). A reply stored under two stop rules (as the format-1 migration
    kept some) is one; a recorded refusal is none."""
    found, seen = [], set()
    for file in sorted(Path(root).glob("??/*.json")):
        record = json.loads(file.read_text(encoding="utf-8"))
        response_format = record["request"].get("response_format") or {}
        named = response_format.get("json_schema", {}).get("name")
        if record.get("status", 200) != 200 or schema_name not in (None, named):
            continue
        reply = canonical_json([record["request"], record.get("identity"), record["response"]])
        if reply not in seen:
            seen.add(reply)
            found.append(record)
    return found
