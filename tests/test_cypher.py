"""The cypher method (Text-to-Cypher) over the demo index loaded into a real LadybugDB, with
a scripted model (the model is not under test; the method's steps and the database are):
the query's rows become the context, their entities' text units the sources; an error or an
empty result gets one repair turn with its text; NOT_IN_GRAPH or no rows after the repair
give "not in the graph", in the question's language."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from graphrag import prompts
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM, run_sync
from graphrag.query.cypher import CypherSettings, TextToCypher, query_of, schema_prompt
from graphrag.query.registry import OPT_IN_METHODS
from graphrag.settings import REPO_ROOT
from graphrag.stores import open_graph_db
from graphrag.stores.cypher_guard import GuardLimits, run_guarded

VARGA = (
    "MATCH (p:Entity)-[:RELATED]-(o:Entity) WHERE lower(p.title) CONTAINS 'varga' RETURN o.title"
)


@pytest.fixture(scope="module")
def demo_db(demo_index: Index, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cypher") / "demo.lbug"
    with open_graph_db(path) as db:
        db.load(demo_index)
    return path


@pytest.fixture
def method(demo_index: Index, demo_db: Path, fake_llm: Any, make_settings: Any) -> TextToCypher:
    settings = make_settings(fake_llm.base_url)
    options = CypherSettings(database=str(demo_db), max_rows=5)
    yield TextToCypher(demo_index, settings, ChatLLM(settings), None, options=options)


def test_cypher_is_registered_opt_in() -> None:
    assert OPT_IN_METHODS["cypher"] is TextToCypher


def test_the_schema_prompt_is_short_and_names_the_graph(demo_db: Path) -> None:
    with open_graph_db(demo_db, read_only=True) as db:
        text = schema_prompt(db.schema())
    assert "(:Entity {title, type, description, degree})" in text
    assert "(:Entity)-[:MENTIONED_IN]->(:TextUnit)" in text and "'person'" in text
    assert len(text) < 1200  # a 1.5B model reads it at every question


@pytest.mark.parametrize(
    ("reply", "query"),
    [
        ("```cypher\nMATCH (n) RETURN n.title\n```", "MATCH (n) RETURN n.title"),
        ("Here it is:\nMATCH (n) RETURN n\n\nThis returns all nodes.", "MATCH (n) RETURN n"),
        ("NOT_IN_GRAPH", None),
        ("not_in_graph: the schema has no dates", None),
    ],
)
def test_the_query_is_taken_from_the_reply(reply: str, query: str | None) -> None:
    assert query_of(reply) == query


def test_rows_become_the_context_and_their_text_units_the_sources(
    method: TextToCypher, fake_llm: Any, demo_index: Index
) -> None:
    fake_llm.script(VARGA, "Ilse Varga is connected to Bluewrack and Bluetide Marine [1].")
    answer = run_sync(method.aanswer("Which organizations is Ilse Varga connected to?"))
    assert fake_llm.calls == 2
    assert answer.text.startswith("Ilse Varga is connected")
    assert answer.contexts[0].startswith(f"Query: {VARGA} LIMIT 5\nRows:\no.title: ")
    entities = demo_index.entities.set_index("title")
    named = [line.removeprefix("o.title: ") for line in answer.contexts[0].split("\n")[2:]]
    expected = {u for title in named for u in entities.loc[title, "text_unit_ids"]}
    assert answer.sources and {s.removeprefix("text_unit:") for s in answer.sources} == expected
    assert "Rows:\no.title: " in fake_llm.last_user()


def test_a_refused_query_gets_one_repair_turn_with_the_reason(
    method: TextToCypher, fake_llm: Any
) -> None:
    fake_llm.script("MATCH (a)-[*]-(b) RETURN a.title", VARGA, "Bluewrack [1].")
    answer = run_sync(method.aanswer("Which organizations is Ilse Varga connected to?"))
    assert fake_llm.calls == 3 and answer.text == "Bluewrack [1]."
    repair = fake_llm.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": "MATCH (a)-[*]-(b) RETURN a.title"}
    assert "has no upper bound" in repair[-1]["content"]


def test_an_engine_error_is_repaired_from_the_engines_message(
    method: TextToCypher, fake_llm: Any
) -> None:
    fake_llm.script("MATCH (e:Entity) RETURN e.name", VARGA, "Bluewrack [1].")
    run_sync(method.aanswer("Which organizations is Ilse Varga connected to?"))
    assert "Cannot find property name" in fake_llm.requests[1]["messages"][-1]["content"]


def test_not_in_graph_is_said_not_guessed(method: TextToCypher, fake_llm: Any) -> None:
    fake_llm.script("NOT_IN_GRAPH")
    answer = run_sync(method.aanswer("What did the festival tickets cost?"))
    assert fake_llm.calls == 1 and answer.text == prompts.NOT_IN_GRAPH_ANSWERS["en"]
    assert answer.contexts == [] and answer.sources == []


def test_no_rows_after_the_repair_is_not_in_the_graph_in_the_questions_language(
    method: TextToCypher, fake_llm: Any
) -> None:
    nobody = "MATCH (e:Entity) WHERE e.title = 'Nobody' RETURN e.title"
    fake_llm.script(nobody, nobody)
    answer = run_sync(method.aanswer("谁是诺博迪？"))
    assert fake_llm.calls == 2 and answer.text == prompts.NOT_IN_GRAPH_ANSWERS["zh"]
    assert "the query returned no rows" in fake_llm.requests[1]["messages"][-1]["content"]
    assert any("returned no rows" in f for f in answer.failures)


def test_the_index_own_database_is_loaded_on_first_use(
    demo_index: Index, fake_llm: Any, make_settings: Any, tmp_path: Path
) -> None:
    index = dataclasses.replace(demo_index, path=tmp_path / "index")
    settings = make_settings(fake_llm.base_url)
    method = TextToCypher(index, settings, ChatLLM(settings), None, options=CypherSettings())
    assert method.db.counts()["Entity"] == len(demo_index.entities)
    assert (tmp_path / "index.lbug").exists()


def test_every_gold_query_of_the_graph_questions_returns_its_recorded_rows(demo_db: Path) -> None:
    """data/kestrel_bay/graph_questions.jsonl: each gold Cypher query, run through the guard on
    the demo index's graph, gives the rows the set records (so its graph notes stay true)."""
    lines = (REPO_ROOT / "data" / "kestrel_bay" / "graph_questions.jsonl").read_text()
    records = [json.loads(line) for line in lines.splitlines()]
    assert len(records) == 12 and {r["split"] for r in records} == {"dev", "test"}
    with open_graph_db(demo_db, read_only=True) as db:
        for record in records:
            _, rows = run_guarded(db, record["gold_cypher"], GuardLimits(max_rows=50))
            assert rows == record["graph_rows"], record["id"]
