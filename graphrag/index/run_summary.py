"""What an indexing run made and what each stage cost: the summary ``index`` and ``update``
print and keep in the manifest."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from graphrag import schemas as S
from graphrag.index.extract.grounding import UNGROUNDED, unsupported_sentences
from graphrag.index.extract.stage import NOT_IN_CHUNK, SELF_LOOP
from graphrag.llm.usage import Usage, track_usage
from graphrag.settings import repo_relative

Tables = dict[str, pd.DataFrame]
T = TypeVar("T")


@dataclass
class IndexSummary:
    """What an indexing run produced and what each stage cost."""

    out: Path
    counts: dict[str, Any]
    failed: list[dict[str, str]]
    stages: dict[str, dict[str, float]] = field(default_factory=dict)
    skipped_documents: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k != "out"}

    def render(self, timings: bool = True) -> str:
        """Return the run summary; ``timings=False`` leaves out the seconds (which vary)."""
        c = self.counts
        levels = ", ".join(f"level {k}: {v}" for k, v in c["communities_per_level"].items())
        lines = [
            f"index written to {repo_relative(self.out)}",
            f"documents {c['documents']}, chunks {c['text_units']}, entities "
            f"{c['entities']}, relationships {c['relationships']}",
            f"communities {c['communities']} ({levels}), reports {c['community_reports']}",
            f"names dropped as not in their chunk: {c.get('ungrounded_names_dropped', 0)}, "
            f"self-loops dropped: {c.get('self_loops_dropped', 0)} (see the dropped table)",
            grounding_line(c),
            f"failed items {len(self.failed)}"
            + "".join(f"\n  {f[S.STAGE]} {f[S.ITEM_ID]}: {f[S.ERROR][:200]}" for f in self.failed),
        ]
        if self.skipped_documents:
            lines.append(
                "skipped documents:"
                + "".join(f"\n  {p}: {why}" for p, why in self.skipped_documents)
            )
        return "\n".join(lines + stage_lines(self.stages, timings))


def stage_lines(stages: dict[str, dict[str, float]], timings: bool) -> list[str]:
    """Return the per-stage cost table of a run summary (index build or update)."""
    header = f"{'stage':<12}{'calls':>7}{'cached':>8}{'prompt tok':>12}{'compl. tok':>12}"
    lines = [header + (f"{'LLM s':>9}{'wall s':>9}" if timings else "")]
    for name, s in stages.items():
        row = (
            f"{name:<12}{s['calls']:>7.0f}{s['cache_hits']:>8.0f}"
            f"{s['prompt_tokens']:>12.0f}{s['completion_tokens']:>12.0f}"
        )
        seconds = f"{s['seconds']:>9.1f}{s['wall_seconds']:>9.1f}"
        lines.append(row + (seconds if timings else ""))
    return lines


def timed(costs: dict[str, dict[str, float]], name: str, step: Callable[[], T]) -> T:
    """Return ``step()``, keeping its LLM usage and wall seconds as ``costs[name]``."""
    started = time.monotonic()
    with track_usage() as usage:
        result = step()
    costs[name] = {**usage.to_dict(), "wall_seconds": time.monotonic() - started}
    return result


def total_usage(costs: dict[str, dict[str, float]], exclude: tuple[str, ...] = ()) -> Usage:
    """Return the summed usage of the stages in ``costs`` (but those named in ``exclude``)."""
    total = Usage()
    for name, stage in costs.items():
        if name not in exclude:
            total.add(Usage(**{k: v for k, v in stage.items() if k != "wall_seconds"}))
    return total


def index_counts(tables: Tables) -> dict[str, Any]:
    """Return the row counts of an index's tables, as the run summary reports them."""
    communities, dropped = tables["communities"], tables["dropped"]["reason"].value_counts()
    sentences = unsupported_sentences(
        tables["entities"], tables["relationships"], tables["text_units"]
    )
    return {
        "documents": len(tables["documents"]),
        "text_units": len(tables["text_units"]),
        "corpus_tokens": int(tables["text_units"][S.N_TOKENS].sum()),
        "entities": len(tables["entities"]),
        "relationships": len(tables["relationships"]),
        "communities": len(communities),
        "communities_per_level": {
            int(k): int(v) for k, v in communities[S.LEVEL].value_counts().sort_index().items()
        },
        "community_reports": len(tables["community_reports"]),
        "ungrounded_names_dropped": int(dropped.get(NOT_IN_CHUNK, 0)),
        "self_loops_dropped": int(dropped.get(SELF_LOOP, 0)),
        "description_sentences": len(sentences),
        "unsupported_description_sentences": int((sentences["missing"].map(len) > 0).sum()),
        "ungrounded_sentences_dropped": int(dropped.get(UNGROUNDED, 0)),
    }


def grounding_line(counts: dict[str, Any]) -> str:
    """Return the run summary's line on description grounding (index/grounding.py)."""
    unsupported = counts.get("unsupported_description_sentences", 0)
    dropped = counts.get("ungrounded_sentences_dropped", 0)
    line = (
        f"description sentences naming a name or number their chunks lack: {unsupported} of "
        f"{counts.get('description_sentences', 0)}"
    )
    if dropped:
        return line + f"; {dropped} more dropped by index.ground_descriptions"
    return line + (" (index.ground_descriptions drops them)" if unsupported else "")
