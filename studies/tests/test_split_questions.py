"""The committed question sets' dev/test split: drawn by ``studies.split_questions``, seeded,
idempotent, and changing nothing in a question set but its ``split`` field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from graphrag.settings import REPO_ROOT
from studies.split_questions import (
    MUSIQUE_50,
    MUSIQUE_100,
    WHOLE_SETS,
    draw,
    splits,
    summary,
    write,
)
from studies.tests.golden import assert_printed
from workbench.eval.questions import load_questions

SETS = [*WHOLE_SETS, MUSIQUE_50, MUSIQUE_100]


def test_the_split_is_the_recorded_one() -> None:
    # Each set's counts and its test questions' ids, as the seeded draw gives them.
    assert_printed("split_questions", summary())


def test_the_committed_sets_carry_the_split_the_script_draws() -> None:
    drawn = splits()
    for path in SETS:
        loaded = load_questions(REPO_ROOT / path)
        assert dict(zip(loaded["id"], loaded["split"], strict=True)) == drawn[path], path


def _copy(sets: list[Path], root: Path) -> None:
    for path in sets:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / path, root / path)


def test_rerunning_changes_nothing_and_only_the_split_field_is_written(tmp_path: Path) -> None:
    _copy(SETS, tmp_path)
    assert write(tmp_path, check=True) == []  # the committed files are up to date
    assert write(tmp_path) == []
    # From sets without the field (as converted or written), the same bytes come back and
    # every other field of every line is as it was.
    for path in SETS:
        lines = (tmp_path / path).read_text(encoding="utf-8").splitlines()
        bare = [{k: v for k, v in json.loads(line).items() if k != "split"} for line in lines]
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in bare)
        (tmp_path / path).write_text(text, encoding="utf-8")
    assert sorted(write(tmp_path, check=True)) == sorted(SETS)
    assert sorted(write(tmp_path)) == sorted(SETS)
    for path in SETS:
        assert (tmp_path / path).read_bytes() == (REPO_ROOT / path).read_bytes(), path


def test_musique_halves_share_their_hop_mix_and_agree_across_the_two_sets() -> None:
    drawn = splits()
    records = [json.loads(line) for line in (REPO_ROOT / MUSIQUE_50).read_text().splitlines()]
    hops = {r["id"]: r["hops"] for r in records}
    for hop in (2, 3, 4):
        ids = [q for q, h in hops.items() if h == hop]
        dev = sum(drawn[MUSIQUE_50][q] == "dev" for q in ids)
        assert abs(dev - (len(ids) - dev)) <= 1, hop
    assert all(drawn[MUSIQUE_100][q] == s for q, s in drawn[MUSIQUE_50].items())
    assert list(drawn[MUSIQUE_100].values()).count("test") == 50
    # Another seed draws another split: the seed, not the file order, decides.
    assert draw(records, seed=1) != drawn[MUSIQUE_50]
