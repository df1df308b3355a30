"""Mark every committed question set's questions ``dev`` or ``test`` (``eval.questions``).

Only the ``split`` field of each line is written; every other byte stays as it was, so no
prompt and no recorded request changes. Running it again changes nothing.

- The demo's sets: ``questions.jsonl`` (24), ``thematic_questions.jsonl`` (18) and
  ``heldout_thematic_questions.jsonl`` (h01-h12) are ``dev``: defaults were chosen on them
  (docs/defaults-provenance.md; h01-h12 were part of ``reduce_seeds``' evidence).
  ``second_heldout_thematic_questions.jsonl`` (s01-s12) answered no choice: ``test``.
- MuSiQue-50 (``data/musique``): a seeded draw, half ``dev`` and half ``test``, dealt
  alternately over a seeded permutation within each hop count, so both halves have the
  same mix of 2-, 3- and 4-hop questions (to within one).
- MuSiQue-100 (``data/musique_full``): its 50 questions that are MuSiQue-50's keep their
  split there; the other 50 are drawn the same way, so the 100 are half and half too.

    python -m studies.split_questions [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from graphrag.settings import REPO_ROOT

SEED = 46  # the issue that asked for the split
DEMO = Path("data/kestrel_bay")
MUSIQUE_50 = Path("data/musique/questions.jsonl")
MUSIQUE_100 = Path("data/musique_full/questions.jsonl")
WHOLE_SETS = {
    DEMO / "questions.jsonl": "dev",
    DEMO / "thematic_questions.jsonl": "dev",
    DEMO / "heldout_thematic_questions.jsonl": "dev",
    DEMO / "second_heldout_thematic_questions.jsonl": "test",
}


def read_records(path: Path) -> list[dict]:
    """Return the question records of a .jsonl set, in file order."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def draw(records: Iterable[dict], seed: int = SEED) -> dict[str, str]:
    """Return each question's split: within each hop count (a seeded permutation each), the
    questions are dealt alternately ``dev``, ``test``, continuing across hop counts."""
    strata: dict[int, list[str]] = {}
    for record in records:
        strata.setdefault(int(record.get("hops") or 0), []).append(record["id"])
    rng = np.random.default_rng(seed)
    dealt: list[str] = []
    for hops in sorted(strata):
        dealt += [strata[hops][i] for i in rng.permutation(len(strata[hops]))]
    return {qid: ("dev", "test")[position % 2] for position, qid in enumerate(dealt)}


def splits(root: Path = REPO_ROOT, seed: int = SEED) -> dict[Path, dict[str, str]]:
    """Return, per question set (relative to ``root``), each question id's split."""
    chosen = {
        path: {r["id"]: split for r in read_records(root / path)}
        for path, split in WHOLE_SETS.items()
    }
    chosen[MUSIQUE_50] = draw(read_records(root / MUSIQUE_50), seed)
    full = read_records(root / MUSIQUE_100)
    rest = [r for r in full if r["id"] not in chosen[MUSIQUE_50]]
    chosen[MUSIQUE_100] = {
        r["id"]: chosen[MUSIQUE_50][r["id"]] for r in full if r["id"] in chosen[MUSIQUE_50]
    } | draw(rest, seed)
    return chosen


def with_splits(text: str, split_of: dict[str, str]) -> str:
    """Return the .jsonl ``text`` with each line's ``split`` set (kept in place, else last)."""
    lines = []
    for line in text.splitlines():
        if not line.strip():
            lines.append(line)
            continue
        record = json.loads(line)
        record["split"] = split_of[record["id"]]
        lines.append(json.dumps(record, ensure_ascii=False))
    return "".join(f"{line}\n" for line in lines)


def write(root: Path = REPO_ROOT, seed: int = SEED, check: bool = False) -> list[Path]:
    """Write the splits into the question sets under ``root``; return the files that were
    (with ``check``: that would be) changed."""
    changed = []
    for path, split_of in splits(root, seed).items():
        text = (root / path).read_text(encoding="utf-8")
        new = with_splits(text, split_of)
        if new != text:
            changed.append(path)
            if not check:
                (root / path).write_text(new, encoding="utf-8", newline="\n")
    return changed


def summary(root: Path = REPO_ROOT, seed: int = SEED) -> list[str]:
    """Return one line per set: its counts and its test questions' ids."""
    lines = []
    for path, split_of in splits(root, seed).items():
        test = [qid for qid, split in split_of.items() if split == "test"]
        lines.append(f"{path}: {len(split_of) - len(test)} dev, {len(test)} test")
        lines += [f"  test {qid}" for qid in test]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mark the committed question sets dev / test")
    parser.add_argument("--check", action="store_true", help="change nothing; fail if stale")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    changed = write(seed=args.seed, check=args.check)
    print("\n".join(summary(seed=args.seed)))
    for path in changed:
        print(f"{'stale' if args.check else 'written'}: {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
