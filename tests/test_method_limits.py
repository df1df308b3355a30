"""A method recorded on part of a question set is reported on that part, with its own n.

DRIFT costs minutes of live model time per MuSiQue question, so its recording covers the first
questions before the rest; ``method_limits`` (``eval --method-limits``) lets the report show
it beside the methods recorded on every question without asking the model for the others.
"""

from __future__ import annotations

import pytest
from conftest import MUSIQUE

from graphrag.query.registry import UnknownMethodError
from studies.recorded import recorded_run
from workbench.cli import main
from workbench.eval.questions import QuestionSetError, parse_method_limits
from workbench.session import Workbench


def _naive_and_ppr(index, settings, out, ppr_limit: int | str):
    """naive and ppr evaluated on the first 8 MuSiQue questions, ppr under ``ppr_limit``."""
    with Workbench(settings=settings) as bench:  # replay: nothing asked of a model
        bench.load(index.path)
        return bench.evaluate(
            MUSIQUE / "questions.jsonl",
            out=out,
            methods=["naive", "ppr"],
            metrics=[],
            judge_controls=0,
            limit=8,
            method_limits={"ppr": ppr_limit},
            progress=False,
        )


def test_a_limited_method_answers_only_the_first_questions_and_is_paired_on_them(
    musique_index, musique_settings, tmp_path
) -> None:
    result = _naive_and_ppr(musique_index, musique_settings, tmp_path / "report", 5)
    records = result.records
    per_method = records.groupby("method")["question_id"].apply(list)
    assert len(per_method["naive"]) == 8 and len(per_method["ppr"]) == 5
    # ppr's questions are the first five naive answered, in the same order.
    assert per_method["ppr"] == per_method["naive"][:5]
    summary = result.summary
    assert "ppr: first 5" in summary
    assert "13 (question, method) rows; 8 questions × 2 methods; 3 pairs missing" in summary
    every = summary.split("## Scores by method, all questions", 1)[1].split("\n## ", 1)[0]
    assert "| ppr | 0 | " in every and "(n=5)" in every and "(n=8)" in every
    # The headline is the test questions: paired on those among the five both answered.
    test = set(records.loc[records["split"] == "test", "question_id"])
    paired = len(test & set(per_method["ppr"]))
    tests = summary.split("## Tests against naive", 1)[1].split("\n## ", 1)[0]
    assert 0 < paired < 5 and f"| evidence_recall | ppr | {paired} |" in tests


@pytest.mark.parametrize(
    ("limits", "limit", "error", "match"),
    [
        ({"drift": 1}, 2, UnknownMethodError, "drift.*naive"),  # a method not evaluated
        ({"naive": "heldout"}, None, QuestionSetError, "questions.jsonl.*heldout.*dev, test"),
    ],
    ids=["method", "split"],
)
def test_a_limit_naming_what_the_run_lacks_is_refused_by_name(
    musique_index, musique_settings, limits, limit, error, match
) -> None:
    with Workbench(settings=musique_settings) as bench:
        bench.load(musique_index.path)
        with pytest.raises(error, match=match):
            bench.evaluate(
                MUSIQUE / "questions.jsonl",
                out="unused",
                methods=["naive"],
                metrics=[],
                limit=limit,
                method_limits=limits,
                progress=False,
            )


@pytest.mark.parametrize("text", ["drift", "drift=0", "drift=1.5", "drift=-2", "drift=te st"])
def test_a_malformed_limit_names_itself_and_the_form(text: str) -> None:
    with pytest.raises(ValueError, match=f"{text!r}.*METHOD=N.*METHOD=SPLIT"):
        parse_method_limits(text)


def test_a_method_limited_to_a_split_answers_only_that_splits_questions(
    musique_index, musique_settings, tmp_path
) -> None:
    """A costly method recorded on the reported half only (``hipporag=test``): it answers
    every test question among those kept, none of the dev ones, and is paired on them."""
    result = _naive_and_ppr(musique_index, musique_settings, tmp_path / "report", "test")
    records = result.records
    naive = records[records["method"] == "naive"]
    ppr = records[records["method"] == "ppr"]
    test = list(naive.loc[naive["split"] == "test", "question_id"])
    assert 0 < len(test) < 8 and list(ppr["question_id"]) == test
    assert "ppr: test split" in result.summary
    tests = result.summary.split("## Tests against naive", 1)[1].split("\n## ", 1)[0]
    assert f"| evidence_recall | ppr | {len(test)} |" in tests


def test_the_cli_rejects_a_malformed_limit_before_loading_anything(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["eval", "--index", "x", "--questions", "y", "--out", "z", "--method-limits", "a"])
    assert exit_.value.code == 2
    assert "--method-limits" in capsys.readouterr().err


def test_the_musique_recording_names_its_limits() -> None:
    run = recorded_run(MUSIQUE)
    assert set(run.method_limits) <= set(run.methods)
    assert all(
        0 < n < run.limit if isinstance(n, int) else n in ("dev", "test")
        for n in run.method_limits.values()
    )
    assert parse_method_limits("none") == {} and parse_method_limits(" a=2, b=test ") == {
        "a": 2,
        "b": "test",
    }


def test_a_run_without_ragas_metrics_reports_no_judge_controls(
    musique_index, musique_settings, tmp_path
) -> None:
    """Controls are planted per RAGAS metric, so with none asked (and the controls left at
    their default) the report says 0 rather than the default count that never ran."""
    with Workbench(settings=musique_settings) as bench:  # replay: nothing asked of a model
        bench.load(musique_index.path)
        result = bench.evaluate(
            MUSIQUE / "questions.jsonl",
            out=tmp_path / "report",
            methods=["naive"],
            metrics=[],
            limit=2,
            progress=False,
        )
    assert "  - judge control pairs per metric: 0\n" in result.summary
