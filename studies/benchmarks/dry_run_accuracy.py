"""The dry run's time against the run that follows it, on this machine, for the demo index
(#60: within 1.5×), live; prints the ratio, never asserts it.

    python -m studies.benchmarks.dry_run_accuracy      # ~15-40 min on 2 cores; writes the record
    python -m studies.benchmarks.dry_run_accuracy --show   # the record as docs/cost.md's table

Two projects, each with an empty cache, so every call is live. First a short run indexes the
first ``--calibrate`` demo documents: it keeps this machine's speed in its project
(graphrag/llm/cost.py). That file is copied into the second project, whose dry run for
the whole demo corpus is then made and followed by its live index. The record holds, per LLM
stage, the estimate's seconds with this machine's speed and with the committed figures
(measured elsewhere), and the seconds the run took; the ratio is actual / estimate.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from graphrag.llm import cost
from graphrag.llm.cost import embedded_speed
from graphrag.settings import REPO_ROOT
from workbench.project import init_project
from workbench.report.tables import table as markdown
from workbench.session import Workbench

RECORD = REPO_ROOT / "studies" / "benchmarks" / "records" / "dry_run_accuracy.json"
DOCS = REPO_ROOT / "data" / "kestrel_bay" / "docs"
LLM_STAGES = ("extract", "graph", "reports")  # the stages that call the model


def project(root: Path, documents: list[Path]) -> Path:
    init_project(root)
    for path in documents:
        shutil.copy(path, root / "input" / path.name)
    return root


def stage_seconds(estimate) -> dict[str, float]:
    return {s.stage: s.seconds or 0.0 for s in estimate.stages if s.stage in LLM_STAGES}


def measure(calibrate: int) -> dict:
    documents = sorted(DOCS.glob("*.md"))
    with tempfile.TemporaryDirectory() as tmp:
        first = project(Path(tmp) / "calibration", documents[:calibrate])
        started = time.monotonic()
        with Workbench(root=first, cache="on") as bench:
            bench.index(progress=False)
        calibration_seconds = time.monotonic() - started
        kept = cost.speed_file(Workbench(root=first).settings)
        kept_figures = json.loads(kept.read_text(encoding="utf-8"))  # the folder goes below
        second = project(Path(tmp) / "demo", documents)
        with Workbench(root=second, cache="on") as bench:
            target = cost.speed_file(bench.settings)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(kept, target)
            estimate = bench.estimate_index()
            committed = embedded_speed(bench.settings)
            speed = cost.local_speed(bench.settings)
            summary = bench.index(progress=False)
    actual = {k: v["wall_seconds"] for k, v in summary.stages.items() if k in LLM_STAGES}
    with_local = stage_seconds(estimate)
    scale = speed.prompt_tokens_per_second / committed.prompt_tokens_per_second
    with_committed = {k: v * scale for k, v in with_local.items()}
    total = sum(actual.values())
    return {
        "command": "python -m studies.benchmarks.dry_run_accuracy",
        "machine": cost.machine(),
        "load_average_after": round(os.getloadavg()[1], 2),  # over the last 5 minutes
        "calibration": {
            "documents": calibrate,
            "seconds": round(calibration_seconds, 1),
            "kept": kept_figures,
        },
        "speed_used": speed.source,
        "estimate_seconds": with_local,
        "estimate_seconds_committed_figures": with_committed,
        "actual_seconds": actual,
        "ratio": round(total / max(sum(with_local.values()), 1e-6), 3),
        "ratio_committed_figures": round(total / max(sum(with_committed.values()), 1e-6), 3),
    }


def table(record: dict) -> str:
    """Return the record as a markdown table, per LLM stage and in all (docs/cost.md)."""
    estimate, committed = record["estimate_seconds"], record["estimate_seconds_committed_figures"]
    actual = record["actual_seconds"]
    header = ["stage", "dry run, this machine's speed (s)", "dry run, committed figures (s)"]
    header += ["the run (s)", "run / dry run"]
    rows = []
    for stage in (*LLM_STAGES, "all"):
        parts = [
            sum(d.values()) if stage == "all" else d[stage] for d in (estimate, committed, actual)
        ]
        ratio = parts[2] / parts[0] if parts[0] else float("nan")
        rows.append([stage, *(f"{v:,.0f}" for v in parts), f"{ratio:.2f}"])
    summary = (
        f"{record['machine']}, load average {record['load_average_after']} over the run's "
        f"last 5 minutes; calibration: {record['calibration']['documents']} documents in "
        f"{record['calibration']['seconds']:,.0f} s; run / dry run with the committed figures: "
        f"{record['ratio_committed_figures']:.2f}."
    )
    return "\n".join([*markdown(header, rows), "", summary])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calibrate", type=int, default=3, help="documents of the first run")
    parser.add_argument("--out", type=Path, default=RECORD)
    parser.add_argument("--show", action="store_true", help="print the record's table, no run")
    args = parser.parse_args(argv)
    if args.show:
        print(table(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    record = measure(args.calibrate)
    args.out.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(
        f"actual / dry run: {record['ratio']:.2f} with this machine's speed, "
        f"{record['ratio_committed_figures']:.2f} with the committed figures "
        f"(load {record['load_average_after']}); wrote {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
