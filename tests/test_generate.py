"""Generated questions (``graphrag questions generate``) over the real demo index: candidates
come from its real text units, bridge entities and reports; the filters drop what they should;
splits are seeded; the output is a question set ``eval`` reads. The model is scripted (the
logic is under test, not the model): it answers each prompt kind by what the prompt holds."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest
from conftest import FakeLLM

from graphrag import prompts
from graphrag import schemas as S
from workbench.cli import main
from workbench.eval.generate import KINDS, candidates, tidy
from workbench.eval.generate_filter import (
    DUPLICATE_COSINE,
    answered_closed_book,
    assign_splits,
    generate_question_set,
    in_turn,
)
from workbench.eval.questions import load_questions
from workbench.session import Workbench

SYSTEMS = {
    name: prompts.load_template(name).text("system")
    for name in (
        "question_local",
        "question_bridge",
        "question_global",
        "question_answerable",
        "question_closed_book",
    )
}
WORD = re.compile(r"[A-Za-z]{6,}|\d{4}")


ANSWER = "The records say so.\nAnswer: the records say so."


def kind_of(body: dict[str, Any]) -> str:
    """The generation prompt ``body`` is, or "answer" (a retrieval method's prompts)."""
    system = body["messages"][0]["content"]
    return next((name for name, text in SYSTEMS.items() if system == text), "answer")


def a_keyword(text: str, question: str) -> str:
    """A word of ``text`` the question does not hold: what a keyword must be."""
    return next(w for w in reversed(WORD.findall(text)) if w.lower() not in question.lower())


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0]


class ScriptedModel:
    """Answers the generation prompts with questions from ``questions`` (focus -> question),
    the closed-book prompt with ``closed_book`` (question -> answer, else "I do not know"),
    and the judge with "no" for the questions in ``unanswerable``."""

    def __init__(self) -> None:
        self.questions: dict[str, str] = {}
        self.closed_book: dict[str, str] = {}
        self.unanswerable: set[str] = set()
        self.seen: dict[str, list[dict]] = {}

    def __call__(self, body: dict[str, Any]) -> str:
        kind = kind_of(body)
        self.seen.setdefault(kind, []).append(body)
        user = body["messages"][-1]["content"]
        if kind == "answer":
            return ANSWER
        if kind == "question_closed_book":
            return self.closed_book.get(user, "I do not know.")
        if kind == "question_answerable":
            question = re.search(r"Question: (.*)\n", user)[1]
            return json.dumps({"verdict": "no" if question in self.unanswerable else "yes"})
        focus = user.rsplit("\n", 1)[-1].split(": ", 1)[-1]  # "Ask about: X" / "Bridge: X"
        if kind == "question_global":
            focus = user.split("\n")[1].lstrip("# ")  # the report's title line
        question = self.questions.get(focus, f"What is known about {focus}?")
        passage = user.split("\n", 1)[1].rsplit("\n\n", 1)[0]  # after "Passage:", before the ask
        reply = {
            "question": question,
            "answer": first_sentence(passage.split("\n\n")[-1]),
            "keywords": [a_keyword(passage, question), "not in any passage"],
        }
        return json.dumps(reply)


@pytest.fixture
def model(fake_llm: FakeLLM) -> ScriptedModel:
    scripted = ScriptedModel()
    fake_llm.respond_with(scripted)
    return scripted


@pytest.fixture
def bench(demo_index, fake_llm, judge_endpoint, make_settings, make_embedder, model):
    """A workbench over the demo index whose answering model is ``fake_llm`` and whose judge
    is another endpoint answering like it."""
    judge_endpoint.respond_with(model)
    settings = make_settings(
        fake_llm.base_url, judge={"base_url": judge_endpoint.base_url, "model": "judge"}
    )
    workbench = Workbench(settings=settings)
    workbench.__dict__["embedder"] = make_embedder(settings)
    workbench.load(demo_index.path)
    return workbench


# ---------------------------------------------------------------- candidates from the index


def test_local_candidates_are_real_text_units_and_an_entity_they_mention(demo_index) -> None:
    chosen = candidates(demo_index, ["local"], 14, seed=3)
    units = demo_index.text_units.set_index(S.ID)
    mentioned = demo_index.entities.set_index(S.TITLE)[S.TEXT_UNIT_IDS]
    assert len(chosen) == 14
    first_round = [c.support_units[0] for c in chosen[: len(units)]]
    assert sorted(first_round) == sorted(units.index)  # every unit once before any twice
    for c in chosen:
        (unit,) = c.support_units
        focus = c.source.split(", about ")[1]
        assert unit in list(mentioned[focus])
        assert c.documents == list(units.loc[unit, S.DOCUMENT_IDS])
        assert units.loc[unit, S.TEXT] in c.messages[1]["content"]
        assert c.messages[1]["content"].endswith(f"Ask about: {focus}")
    assert [c.id for c in chosen[:2]] == ["L01", "L02"]


def test_bridge_candidates_join_two_documents_through_a_graph_entity(demo_index) -> None:
    chosen = candidates(demo_index, ["multi_hop"], 10, seed=3)
    entities = demo_index.entities.set_index(S.TITLE)
    units = demo_index.text_units.set_index(S.ID)
    assert len(chosen) == 10
    pairs = [frozenset(c.support_units) for c in chosen]
    assert len(set(pairs)) == len(pairs)
    for c in chosen:
        first, second = c.support_units
        assert entities.loc[c.bridge, S.DEGREE] > 0  # in the graph, not an isolated name
        assert {first, second} <= set(entities.loc[c.bridge, S.TEXT_UNIT_IDS])
        assert units.loc[first, S.DOCUMENT_IDS] != units.loc[second, S.DOCUMENT_IDS]
        user = c.messages[1]["content"]
        assert user.index(units.loc[first, S.TEXT]) < user.index(units.loc[second, S.TEXT])
        assert user.endswith(f"Bridge: {c.bridge}")
        assert c.record("test")["bridge_entity"] == c.bridge
        assert len(c.record("test")["support"]) == 2


def test_global_candidates_are_reports_with_their_communities_documents(demo_index) -> None:
    chosen = candidates(demo_index, ["global"], 20, seed=3)
    reports = demo_index.community_reports
    assert len(chosen) == len(reports)  # fewer sources than asked: every report once
    assert [c.source.split("level ")[1][0] for c in chosen[:5]] == ["0"] * 5  # broadest first
    communities = demo_index.communities.set_index(S.COMMUNITY)
    units = demo_index.text_units.set_index(S.ID)
    for c in chosen:
        community = int(c.source.split()[1])
        report = reports[reports[S.COMMUNITY] == community].iloc[0]
        assert c.support_text == report[S.FULL_CONTENT]
        assert c.support_units == list(communities.loc[community, S.TEXT_UNIT_IDS])
        expected = {d for u in c.support_units for d in units.loc[u, S.DOCUMENT_IDS]}
        assert set(c.documents) == expected and len(c.documents) >= 1


def test_the_seed_decides_the_draw_and_one_kind_does_not_move_another(demo_index) -> None:
    def ids(kinds: list[str], seed: int) -> list[tuple[str, str]]:
        return [(c.id, c.source) for c in candidates(demo_index, kinds, 6, seed)]

    assert ids(list(KINDS), 5) == ids(list(KINDS), 5)
    assert ids(["local"], 5) != ids(["local"], 6)
    assert ids(["global"], 5) == [x for x in ids(list(KINDS), 5) if x[0][0] == "G"]
    with pytest.raises(ValueError, match="unknown question kind"):
        candidates(demo_index, ["thematic"], 2, 5)


# ---------------------------------------------------------------- the filters


def test_each_filter_drops_what_it_should(bench, model) -> None:
    chosen = candidates(bench.index_in_use, ["local"], 6, seed=47)
    focus = [c.source.split(", about ")[1] for c in chosen]
    model.questions = {
        focus[0]: f"In what year did {focus[0]} first appear in Kestrel Bay?",
        focus[1]: f"In which year did {focus[0]} first appear in Kestrel Bay?",  # a rewording
        focus[2]: f"Who is in charge of {focus[2]}?",
        focus[3]: f"How many people work for {focus[3]}?",
        focus[4]: f"Tell me about {focus[4]}",  # no question mark
        focus[5]: f"Which places does {focus[5]} deal with?",
    }
    # the closed-book answer of question 3 is its reference: that question is dropped
    passage = chosen[2].support_text.split("\n\n")[-1]
    model.closed_book = {model.questions[focus[2]]: first_sentence(passage)}
    model.unanswerable = {model.questions[focus[3]]}
    generated = bench.generate_questions(kinds=["local"], count=6, seed=47)
    fates = {c.id: (c.dropped, c.why) for c in generated.candidates}
    assert fates == {
        "L01": ("", ""),
        "L02": ("duplicate", "of L01"),
        "L03": ("closed-book", "answered without the corpus"),
        "L04": ("unanswerable", "the judge found no answer in the support"),
        "L05": ("malformed", "not a question"),
        "L06": ("", ""),
    }
    assert [r["id"] for r in generated.records] == ["L01", "L06"]
    assert generated.dropped_lines() == [
        "dropped 4 of 6 candidates",
        "  1 duplicate: of a kept question",
        "  1 closed-book: answered without the corpus",
        "  1 unanswerable: the judge found no answer in the support",
        "  1 malformed: not a question",
    ]
    kept = generated.records[0]
    assert kept["answer_keywords"] and "not in any passage" not in kept["answer_keywords"]
    assert (
        kept["support"] == chosen[0].documents and kept["support_units"] == chosen[0].support_units
    )
    # the closed-book prompt holds the question alone; the judge (its own endpoint) reads the unit
    closed = model.seen["question_closed_book"]
    assert all(b["messages"][-1]["content"].endswith("?") for b in closed)
    assert len(closed) == 5 and not any(chosen[0].support_text in str(b) for b in closed)
    judged = [b["messages"][-1]["content"] for b in model.seen["question_answerable"]]
    assert len(judged) == 4 and any(chosen[0].support_text in j for j in judged)
    log = {row["kind"]: row for row in generated.log()}
    assert log["local"] == {
        "kind": "local",
        "candidates": 6,
        "malformed": 1,
        "duplicate": 1,
        "closed-book": 1,
        "unanswerable": 1,
        "kept": 2,
        "share kept": 0.333,
    }


def test_a_closed_book_answer_matches_on_what_it_adds_to_the_question(demo_index) -> None:
    (candidate,) = candidates(demo_index, ["local"], 1, seed=47)
    candidate.question = "Who wrote the novel 'Their Eyes Were Watching God'?"
    candidate.reference, candidate.keywords = "Zora Neale Hurston", ["Hurston", "Florida"]
    # one keyword of two, but the whole reference: answered
    assert answered_closed_book(
        candidate, "Zora Neale Hurston wrote 'Their Eyes Were Watching God'."
    )
    candidate.question = "Who directed the film 'Tic Tac'?"
    candidate.reference = "Daniel Alfredson directed the film 'Tic Tac'."
    candidate.keywords = ["Daniel Alfredson"]
    # the question's own words echoed are no match (plain token F1 here is 0.57)
    assert not answered_closed_book(candidate, "The film 'Tic Tac' was directed by John Ford.")
    assert answered_closed_book(candidate, "Tic Tac was directed by Daniel Alfredson.")


def test_the_duplicate_threshold_separates_rewordings_from_other_questions(
    make_embedder,
) -> None:
    embedder = make_embedder()
    pairs = [
        (
            "In what year was the Kestrel Bay Marine Institute founded?",
            "In which year was the Kestrel Bay Marine Institute founded?",
        ),
        (
            "In what year was the Kestrel Bay Marine Institute founded?",
            "Who directs the Kestrel Bay Marine Institute?",
        ),
    ]
    cosines = [float(np.dot(*embedder.embed(list(p)))) for p in pairs]
    assert cosines[0] >= DUPLICATE_COSINE > cosines[1]


def test_a_question_pointing_at_the_text_it_was_written_from_is_unusable(demo_index) -> None:
    (candidate,) = candidates(demo_index, ["local"], 1, seed=47)
    word = a_keyword(candidate.support_text, "")
    for question, reason in [
        ("What university is mentioned in the passage?", "points at the text"),
        ("According to the report, who funds it?", "points at the text"),
        ("What university is mentioned in Passage B?", "points at the text"),
        ("Which university is named", "not a question"),
        ("Who reported the 2023 figures?", ""),
    ]:
        reply = {"question": question, "answer": "An answer.", "keywords": [word]}
        assert tidy(candidate, reply).startswith(reason), question


def test_a_keyword_the_question_gives_away_or_the_support_lacks_is_dropped(bench, model) -> None:
    (chosen,) = candidates(bench.index_in_use, ["global"], 1, seed=47)
    title = chosen.source.split(": ", 1)[1]
    model.questions = {title: f"What tensions shaped {title}?"}
    generated = generate_question_set(
        bench.index_in_use, bench.llm, bench.judge_llm, bench.embedder, kinds=["global"], count=1
    )
    (record,) = generated.records
    assert record["type"] == "global" and record["answer_keywords"]
    for keyword in record["answer_keywords"]:
        assert keyword in chosen.support_text and keyword not in record["question"]


# ---------------------------------------------------------------- splits and the output


def test_splits_are_seeded_and_balanced_within_each_kind(demo_index) -> None:
    kept = candidates(demo_index, list(KINDS), 7, seed=1)
    first, again, other = (assign_splits(kept, s) for s in (9, 9, 10))
    assert first == again and first != other
    for kind in KINDS:
        splits = [first[c.id] for c in kept if c.kind == kind]
        assert abs(splits.count("dev") - splits.count("test")) <= 1


def test_the_written_set_loads_and_eval_scores_it(bench, model, tmp_path) -> None:
    out = tmp_path / "generated.jsonl"
    generated = bench.generate_questions(out, count=3, seed=47)
    index = bench.index_in_use
    questions = load_questions(out, documents=set(index.documents[S.ID]))
    assert list(questions["id"]) == [r["id"] for r in generated.records]
    assert set(questions["type"]) == set(KINDS)
    assert set(questions["split"]) == {"test"}  # the user has tuned nothing on them
    log = json.loads(out.with_name("generated.filter_log.json").read_text())
    assert log["seed"] == 47 and len(log["candidates"]) == 9
    assert log["counts"][-1]["kind"] == "all" and log["counts"][-1]["kept"] == len(questions)
    # eval reads it as it is: naive answers every question (the scripted model answers)
    result = bench.evaluate(
        out,
        out=tmp_path / "report",
        methods=["naive"],
        metrics=[],
        judge_controls=0,
        progress=False,
    )
    assert len(result.records) == len(questions)
    assert set(result.records["question_id"]) == set(questions["id"])
    assert (result.records["answer"] == ANSWER).all()
    summary = (tmp_path / "report" / "summary.md").read_text(encoding="utf-8")
    assert "test questions" in summary and "tuning set" not in summary.lower()
    # asked for, both splits are dealt within each kind
    dealt = bench.generate_questions(count=3, seed=47, split="dev+test")
    assert {r["split"] for r in dealt.records} == {"dev", "test"}


def test_the_command_writes_the_set_and_prints_the_filter_log(
    demo_index, fake_llm, model, tmp_path, capsys
) -> None:
    config = tmp_path / "graphrag.toml"
    config.write_text(
        f'[llm]\nbase_url = "{fake_llm.base_url}"\nmax_retries = 0\n'
        f'[cache]\npath = "{tmp_path / "cache"}"\n'
        f'[embeddings]\ncache_path = "{tmp_path / "vectors.sqlite"}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "q.jsonl"
    args = ["--config", str(config), "questions", "generate", "--index", str(demo_index.path)]
    assert main([*args, "--out", str(out), "--count", "2", "--kinds", "local,global"]) == 0
    printed = capsys.readouterr().out
    assert "| local | 2 |" in printed and "| global | 2 |" in printed
    assert f"questions written to {out} (split: test)" in printed
    log = json.loads(out.with_name("q.filter_log.json").read_text())
    dropped = [c for c in log["candidates"] if c["dropped"]]
    assert f"dropped {len(dropped)} of {len(log['candidates'])} candidates" in printed
    more = f"`graphrag questions generate --config {config} --index {demo_index.path} "
    assert more + f"--kinds local,global --count 4 --out {out}`" in printed
    assert {r["type"] for r in load_questions(out).to_dict("records")} <= {"local", "global"}
    calls = fake_llm.calls
    # a second run replays every call from the cache it recorded: the same set, no new call
    again = tmp_path / "again.jsonl"
    assert (
        main(
            [
                "--cache",
                "replay",
                *args,
                "--out",
                str(again),
                "--count",
                "2",
                "--kinds",
                "local,global",
            ]
        )
        == 0
    )
    assert fake_llm.calls == calls and again.read_text() == out.read_text()
    # a smaller count draws a prefix of each kind: it replays from the same recording
    fewer = tmp_path / "fewer.jsonl"
    replay = ["--cache", "replay", *args, "--out", str(fewer), "--kinds", "local,global"]
    assert main([*replay, "--count", "1"]) == 0
    assert fake_llm.calls == calls
    kept = {r["id"] for r in load_questions(out).to_dict("records")}
    assert {r["id"] for r in load_questions(fewer).to_dict("records")} <= kept


def test_an_unknown_kind_is_one_line_naming_the_known_ones(demo_index, capsys) -> None:
    args = ["questions", "generate", "--index", str(demo_index.path), "--out", "unused.jsonl"]
    assert main([*args, "--kinds", "local,thematic"]) == 2
    assert "--kinds takes local, multi_hop, global; not ['thematic']" in capsys.readouterr().err


def test_candidates_are_worked_on_in_turn_across_kinds(demo_index) -> None:
    chosen = in_turn(candidates(demo_index, list(KINDS), 2, seed=1))
    assert [c.id for c in chosen] == ["L01", "M01", "G01", "L02", "M02", "G02"]
