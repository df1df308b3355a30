"""Choosing a query setting without choosing it on the questions it is scored on.

A setting tuned on the test questions reports an optimistic score, so the questions are split
into seeded folds and each fold is scored under the candidate setting that did best on the
*other* folds. Input: retrieval report folders of the same questions, one per candidate (the
first is the default and wins ties); output: a retrieval report of ``<method> (cross-fitted)``
against naive RAG, with each fold's choice (also ``selection.csv``).

    python -m studies.crossfit --runs RETRIEVAL_DIR... --method ppr --out FOLDER

It re-chooses a setting the baseline ignores (naive's scores must not change): so far PPR's
passage weight on MuSiQue-100. docs/defaults-provenance.md lists every measured default, the
questions and split it was chosen on, and how the test headlines handle it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from studies.report_prose import add_prose, read_report
from workbench.eval import stats
from workbench.eval.retrieval import BASELINE, SCORES, RetrievalEvalError
from workbench.report.retrieval_report import RECORDS, write_report
from workbench.report.tables import MISSING, md, number, table

SETTING_KEY = "query settings not at their defaults"
SELECTION = "selection.csv"


def fold_of(question_ids: Sequence[str], folds: int, seed: int) -> dict[str, int]:
    """Return each question's fold (0 .. folds-1): a seeded permutation dealt round-robin, so
    folds differ in size by at most one and the split does not follow the file's order."""
    if folds < 2:
        raise RetrievalEvalError(f"--folds {folds}: cross-fitting needs at least 2 folds")
    ids = sorted(set(question_ids))
    if len(ids) < folds:
        raise RetrievalEvalError(f"--folds {folds}: only {len(ids)} questions")
    order = np.random.default_rng(seed).permutation(len(ids))
    return {ids[i]: position % folds for position, i in enumerate(order)}


def _load(folder: Path, method: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    report = read_report(folder)
    for name in (BASELINE, method):
        if name not in set(report.records["method"]):
            raise RetrievalEvalError(f"{folder / RECORDS}: no records of method {name!r}")
    return report.records, report.hops, report.run


def cross_fit(
    folders: Sequence[str | Path],
    method: str,
    out: str | Path,
    select: str = "evidence_recall",
    folds: int = 2,
    seed: int = stats.DEFAULT_SEED,
    command: str | None = None,
) -> pd.DataFrame:
    """Write the retrieval report of ``method``'s cross-fitted records beside naive RAG to
    ``out``; return the selection table (per fold and candidate: its mean ``select`` on the
    other folds, and whether it was chosen)."""
    if select not in SCORES:
        raise RetrievalEvalError(f"--select {select}: one of {', '.join(SCORES)}")
    if len(folders) < 2:
        raise RetrievalEvalError("--runs: cross-fitting needs at least 2 candidate folders")
    loaded = [(Path(f), *_load(Path(f), method)) for f in folders]
    first_folder, base_records, base_hops, base_run = loaded[0]
    baseline = base_records[base_records["method"] == BASELINE]
    for folder, records, _, run in loaded[1:]:
        if run.get("questions") != base_run.get("questions"):
            raise RetrievalEvalError(
                f"{folder}: questions {run.get('questions')!r}, but {first_folder} has "
                f"{base_run.get('questions')!r}; candidates must score the same questions"
            )
        theirs = records[records["method"] == BASELINE].set_index("question_id")
        ours = baseline.set_index("question_id")
        if not theirs[list(SCORES)].equals(ours.loc[theirs.index, list(SCORES)]):
            raise RetrievalEvalError(
                f"{folder}: {BASELINE}'s scores differ from {first_folder}'s, so the swept "
                f"setting changes the baseline too; cross-fit a setting {BASELINE} ignores"
            )
    fold = fold_of(baseline["question_id"].tolist(), folds, seed)
    label = f"{method} (cross-fitted)"
    selection, chosen_records, chosen_hops = [], [], []
    for k in range(folds):
        scores = []
        for position, (folder, records, _, run) in enumerate(loaded):
            mine = records[records["method"] == method]
            training = mine[mine["question_id"].map(fold) != k]
            scores.append(
                {
                    "fold": k + 1,
                    "candidate": position,
                    "folder": folder.name,
                    "setting": run.get(SETTING_KEY, MISSING),
                    "training_questions": len(training),
                    "training_mean": float(training[select].mean()),
                }
            )
        best = max(scores, key=lambda row: (row["training_mean"], -row["candidate"]))
        selection += [{**row, "chosen": row is best} for row in scores]
        _, records, hop_rows, _ = loaded[best["candidate"]]
        for frames, chosen in ((chosen_records, records), (chosen_hops, hop_rows)):
            held_out = (chosen["method"] == method) & (chosen["question_id"].map(fold) == k)
            frames.append(chosen[held_out].assign(method=label))
    order = {q: i for i, q in enumerate(baseline["question_id"])}
    assembled = pd.concat(chosen_records).sort_values(
        "question_id", key=lambda ids: ids.map(order), kind="stable"
    )
    records = pd.concat([baseline, assembled], ignore_index=True)
    hop_rows = pd.concat(
        [base_hops[base_hops["method"] == BASELINE], *chosen_hops], ignore_index=True
    )
    selection = pd.DataFrame(selection)
    resamples = int(base_run.get("n_resamples", stats.DEFAULT_RESAMPLES))
    options = {"seed": seed, "n_resamples": resamples}
    choices = "; ".join(
        f"fold {row.fold}: {row.setting}"
        for row in selection[selection["chosen"]].itertuples(index=False)
    )
    meta = {
        "questions": base_run.get("questions", MISSING),
        "index": base_run.get("index", MISSING),
        "methods": f"{BASELINE}, {label}",
        SETTING_KEY: f"{method} cross-fitted on {select} over {folds} folds ({choices})",
        "candidates": ", ".join(str(Path(f)) for f in folders),
        "generated by": command or MISSING,
    }
    write_report(out, records, hop_rows, meta, options, extra=selection_lines(selection, select))
    add_prose(out)
    selection.to_csv(Path(out) / SELECTION, index=False)
    return selection


def selection_lines(selection: pd.DataFrame, select: str) -> list[str]:
    """Return the ``## Cross-fitting`` section: per fold, each candidate's mean ``select`` on
    the questions outside the fold, the chosen one marked."""
    rows = [
        [str(row.fold), md(row.folder), md("defaults" if row.setting == "none" else row.setting)]
        + [str(row.training_questions), number(row.training_mean), "chosen" if row.chosen else ""]
        for row in selection.itertuples(index=False)
    ]
    header = ["Fold", "Candidate", "Setting", "Questions outside the fold", f"Mean {select}", ""]
    return [
        "## Cross-fitting",
        "",
        f"Questions split into {selection['fold'].nunique()} folds by a seeded permutation; "
        f"each fold is scored under the candidate with the best mean {select} on the other "
        "folds (ties: the earlier candidate), so no question helps choose its own setting.",
        "",
        *table(header, rows),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="choose a query setting per fold on the other folds' questions"
    )
    parser.add_argument(
        "--runs",
        nargs="+",
        required=True,
        metavar="RETRIEVAL_DIR",
        help="retrieval report folders of the same questions, one per candidate (first: default)",
    )
    parser.add_argument("--method", required=True, help="the method whose setting was varied")
    parser.add_argument("--select", default="evidence_recall", help="score the choice maximizes")
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=stats.DEFAULT_SEED, help="fold split seed")
    parser.add_argument("--out", required=True, help="folder for the cross-fitted report")
    args = parser.parse_args(argv)
    command = "python -m studies.crossfit " + " ".join(sys.argv[1:] if argv is None else argv)
    selection = cross_fit(
        args.runs,
        args.method,
        args.out,
        select=args.select,
        folds=args.folds,
        command=command,
        seed=args.seed,
    )
    chosen = selection[selection["chosen"]]
    print(
        "; ".join(f"fold {r.fold}: {r.folder}" for r in chosen.itertuples(index=False))
        + f"; see {args.out}/summary.md"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
