"""The Cypher guard and the hostile inputs it stands between: queries that write, call
procedures, read files, run several statements or scan the whole graph; a question asking the
model to delete the graph; documents whose names and descriptions carry Cypher. Each is
refused or bounded with a message naming the reason, and the real LadybugDB holding the
exported demo-style index has the same nodes and edges before and after."""

from __future__ import annotations

import re

import pytest

from graphrag.stores.cypher_guard import CypherRefused, GuardLimits, guard, tokens

REFUSED = {
    # writes and schema changes
    "MATCH (n) DETACH DELETE n": "DETACH is not allowed",
    "MATCH (n:Entity) DELETE n RETURN count(n)": "DELETE is not allowed",
    "CREATE (n:Entity {id: 'x'}) RETURN n": "CREATE is not allowed",
    "MERGE (n:Entity {id: 'x'}) RETURN n": "MERGE is not allowed",
    "MATCH (n:Entity) SET n.title = 'x' RETURN n": "SET is not allowed",
    "MATCH (n:Entity) REMOVE n.title RETURN n": "REMOVE is not allowed",
    "DROP TABLE Entity": "DROP is not allowed",
    "match (n) detach delete n": "DETACH is not allowed",
    "ALTER TABLE Entity ADD x STRING": "ALTER is not allowed",
    # files, extensions, other databases
    "LOAD CSV FROM 'file:///etc/passwd' AS line RETURN line": "LOAD is not allowed",
    "LOAD FROM 'x.csv' RETURN *": "LOAD is not allowed",
    "COPY Entity FROM 'evil.csv'": "COPY is not allowed",
    "INSTALL httpfs": "INSTALL is not allowed",
    "ATTACH 'other.lbug' AS o": "ATTACH is not allowed",
    # procedures and namespaced functions
    "CALL db.index.fulltext.createNodeIndex('x', ['Entity'], ['title']) RETURN 1": "CALL db.",
    "CALL dbms.killQueries(['1']) RETURN 1": "CALL dbms.killQueries is not allowed",
    "CALL { MATCH (n) DETACH DELETE n } RETURN 1": "is not allowed",
    "RETURN apoc.cypher.runWrite('MATCH (n) DETACH DELETE n', {})": "function apoc.cypher",
    # several statements
    "MATCH (n) RETURN n; MATCH (m) DETACH DELETE m": "multiple statements",
    "MATCH (n) RETURN n; MATCH (m) RETURN m": "multiple statements",
    # whole-graph scans
    "MATCH (a)-[*]-(b) RETURN count(*)": "has no upper bound",
    "MATCH (a)-[:RELATED*]-(b) RETURN a.title": "has no upper bound",
    "MATCH (a)-[*1..100]-(b) RETURN a.title": "reaches 100 hops",
    "MATCH (a)-[r*2..]->(b) RETURN a.title": "has no upper bound",
    "MATCH (a)-[* SHORTEST]-(b) RETURN a.title": "has no upper bound",
    "MATCH (a:Entity), (b:Entity) RETURN a.title, b.title": "cartesian product",
    "MATCH (a:Entity) MATCH (b:TextUnit) RETURN count(*)": "cartesian product",
    "MATCH p = ((a)-[:RELATED]->(b)){1,9} RETURN p": "quantified path",
    # malformed or hiding the rest
    "MATCH (n) WHERE n.title = 'open RETURN n": "unterminated",
    "MATCH (n) /* RETURN n": "unterminated",
    "MATCH (n:Entity)": "no RETURN clause",
    "MATCH (n) RETURN n UNION MATCH (m) RETURN m": "UNION is not allowed",
    "MATCH (n) RETURN n LIMIT $rows": "LIMIT must be followed by a whole number",
    "": "empty query",
}


@pytest.mark.parametrize("query", list(REFUSED))
def test_a_hostile_or_unbounded_query_is_refused_naming_why(query: str) -> None:
    with pytest.raises(CypherRefused, match=re.escape(REFUSED[query])):
        guard(query)


BOUNDED = {
    "MATCH (e:Entity) WHERE e.type = 'person' RETURN count(e) AS people": (
        "MATCH (e:Entity) WHERE e.type = 'person' RETURN count(e) AS people LIMIT 50"
    ),
    "MATCH (e:Entity) RETURN e.title LIMIT 5000;": "MATCH (e:Entity) RETURN e.title LIMIT 50",
    "MATCH (e:Entity) RETURN e.title LIMIT 3 // the three first": (
        "MATCH (e:Entity) RETURN e.title LIMIT 3"
    ),
    "MATCH (a:Entity)-[:RELATED*1..3]-(b:Entity) RETURN DISTINCT b.title": (
        "MATCH (a:Entity)-[:RELATED*1..3]-(b:Entity) RETURN DISTINCT b.title LIMIT 50"
    ),
    "MATCH (a)-[*2]-(b) RETURN count(*)": "MATCH (a)-[*2]-(b) RETURN count(*) LIMIT 50",
    # a keyword inside a string, a property or a quoted name is data, not a clause
    'MATCH (e:Entity {title: "x\'}) DETACH DELETE e //"}) RETURN e.set': (
        'MATCH (e:Entity {title: "x\'}) DETACH DELETE e //"}) RETURN e.set LIMIT 50'
    ),
    "MATCH (e:Entity) WHERE e.description CONTAINS 'CREATE' RETURN e.`delete` LIMIT 2": (
        "MATCH (e:Entity) WHERE e.description CONTAINS 'CREATE' RETURN e.`delete` LIMIT 2"
    ),
    # anchored by inline properties, two patterns may stand apart (a 1 x 1 product)
    "MATCH (a:Entity {title: 'A'}), (b:Entity {title: 'B'}) RETURN a.id, b.id": (
        "MATCH (a:Entity {title: 'A'}), (b:Entity {title: 'B'}) RETURN a.id, b.id LIMIT 50"
    ),
    "MATCH (a:Entity)-[:RELATED]-(b:Entity), (b)-[:MENTIONED_IN]->(t) RETURN t.id": (
        "MATCH (a:Entity)-[:RELATED]-(b:Entity), (b)-[:MENTIONED_IN]->(t) RETURN t.id LIMIT 50"
    ),
    "CALL show_tables() RETURN *": "CALL show_tables() RETURN * LIMIT 50",
}


@pytest.mark.parametrize("query", list(BOUNDED))
def test_a_read_query_gets_a_limit_and_keeps_its_text(query: str) -> None:
    assert guard(query) == BOUNDED[query]


def test_the_limits_are_settings() -> None:
    limits = GuardLimits(max_rows=7, max_hops=5)
    assert guard("MATCH (a)-[*1..5]-(b) RETURN a.id", limits).endswith("LIMIT 7")
    with pytest.raises(CypherRefused, match="at most 5"):
        guard("MATCH (a)-[*1..6]-(b) RETURN a.id", limits)


def test_tokens_leave_strings_and_comments_whole() -> None:
    found = tokens("MATCH (n) // DELETE\nWHERE n.t = 'a; DROP' /* SET */ RETURN n")
    assert [t.text for t in found if t.kind == "string"] == ["'a; DROP'"]
    assert not {"DELETE", "SET", "DROP"} & {t.text for t in found}
