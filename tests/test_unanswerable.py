"""Planted unanswerable questions and declining: made from the demo's own index with no hand
work, names the corpus never writes, scored as rejection and false-rejection rates."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.settings import REPO_ROOT
from workbench.cli import main
from workbench.eval.metrics import judge_free_columns
from workbench.eval.questions import load_questions
from workbench.eval.unanswerable import UNANSWERABLE, absent_names, declined, plant

QUESTIONS = REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl"


def test_planted_questions_name_what_the_corpus_never_writes(demo_index: Index) -> None:
    questions = load_questions(QUESTIONS)
    planted = plant(questions, demo_index, 10, seed=3)
    assert len(planted) == 10 and set(planted["type"]) == {UNANSWERABLE}
    corpus = "\n".join(demo_index.text_units[S.TEXT]).casefold()
    titles = set(demo_index.entities[S.TITLE].str.casefold())
    source = questions.set_index("id")
    for row in planted.itertuples(index=False):
        assert row.absent_name.casefold() not in corpus
        assert row.absent_name.casefold() not in titles
        assert row.absent_name in row.question
        original = source.at[row.planted_from, "question"]
        assert row.question != original and row.split == source.at[row.planted_from, "split"]
        # the twin is the source with one name swapped: what is left of it is unchanged
        head, tail = row.question.split(row.absent_name, 1)
        assert original.startswith(head) and original.endswith(tail)
    assert planted.equals(plant(questions, demo_index, 10, seed=3)), "seeded"
    assert not planted.equals(plant(questions, demo_index, 10, seed=4))


def test_absent_names_recombine_names_of_one_type(demo_index: Index) -> None:
    names = absent_names(demo_index, seed=0)
    people = set(demo_index.entities.loc[demo_index.entities[S.TYPE] == "person", S.TITLE])
    firsts = {p.split()[0] for p in people if " " in p}
    rests = {p.split(" ", 1)[1] for p in people if " " in p}
    for name in names["person"]:
        first, rest = name.split(" ", 1)
        assert first in firsts and rest in rests and name not in people


def test_a_planted_set_loads_and_plants_splits_alternately(demo_index: Index, tmp_path) -> None:
    questions = load_questions(QUESTIONS).copy()
    questions.loc[questions.index % 2 == 0, "split"] = "test"
    planted = plant(questions, demo_index, 6, seed=1)
    assert planted["split"].value_counts().to_dict() == {"dev": 3, "test": 3}
    path = tmp_path / "planted.jsonl"
    path.write_text(planted.to_json(orient="records", lines=True))
    assert list(load_questions(path)["type"]) == [UNANSWERABLE] * 6


@pytest.mark.parametrize(
    "answer",
    [
        "The documents do not mention the Bluewrack Farms.",
        "The provided context does not contain information about when it was founded.",
        "There is no information about the vote count in the context.",
        "I cannot determine who founded it from the documents.",
        "The founding year is not mentioned in the context.",
        "文档中没有提到该机构的成立时间。",
        "根据提供的资料，无法确定答案。",
        "上下文未提及澳门2021年的GDP增长。",
    ],
)
def test_declining_is_read_in_english_and_chinese(answer: str) -> None:
    assert declined(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The Kestrel Bay Marine Institute was founded in 1998 by Saltmere University [1].",
        "Not only the Cooperative but also the Council funded the survey.",
        "It did not rain; the storm made landfall on 14 November.",
        "研究所成立于1998年，由萨尔特米尔大学与地区议会共同创办。",
        "",
    ],
)
def test_an_answer_is_not_read_as_declining(answer: str) -> None:
    assert not declined(answer)


def test_recorded_demo_answers_are_not_read_as_declining() -> None:
    records = pd.read_parquet(REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet")
    assert len(records) > 100
    assert not records["answer"].fillna("").map(declined).any()


def test_a_planted_question_is_scored_only_on_declining(demo_index: Index) -> None:
    questions = load_questions(QUESTIONS).head(2)
    planted = plant(questions, demo_index, 1, seed=0)
    both = pd.concat([questions, planted], ignore_index=True)
    ids = list(both["id"])
    answers = ["Founded in 1998.", "The documents do not say.", "The context does not say."]
    records = pd.DataFrame(
        {
            "question_id": ids,
            "method": "naive",
            "answer": answers,
            "answer_error": None,
            "contexts": [[]] * 3,
            "sources": [[]] * 3,
            "ranking": [[]] * 3,
        }
    )
    scored = judge_free_columns(records, both, demo_index).set_index("question_id")
    assert list(scored["declined"]) == [0.0, 1.0, 1.0]  # the second is a false rejection
    planted_row = scored.loc[planted["id"].iloc[0]]
    assert math.isnan(planted_row["keyword_hit_rate"]) and math.isnan(
        planted_row["evidence_recall"]
    )
    without = judge_free_columns(records.head(2), questions, demo_index)
    assert "declined" not in without.columns, "no planted question: no column, reports unchanged"


def test_the_cli_plants_a_set_beside_the_questions(demo_index: Index, tmp_path, capsys) -> None:
    out = tmp_path / "unanswerable.jsonl"
    argv = ["--cache", "replay", "questions", "plant", "--index", str(demo_index.path)]
    assert main([*argv, "--from", str(QUESTIONS), "--out", str(out), "--count", "4"]) == 0
    assert "4 unanswerable questions written to" in capsys.readouterr().out
    assert len(load_questions(out)) == 4
    assert main([*argv, "--from", str(QUESTIONS), "--out", str(QUESTIONS)]) == 2
    assert "is --from's file" in capsys.readouterr().err
