"""The guard every Cypher query written outside the workbench passes (the ``cypher`` method, the
MCP tool): read-only, one statement, bounded paths, no cartesian product, a LIMIT. It reads
tokens outside strings and comments, and is stricter than Cypher: a refusal can be repaired,
a write that got through could not be taken back."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Clauses that write, change the schema, read files or reach outside the database.
WRITE_KEYWORDS = frozenset(
    "CREATE MERGE DELETE DETACH SET REMOVE DROP LOAD COPY ALTER INSTALL ATTACH USE IMPORT "
    "EXPORT CHECKPOINT BEGIN COMMIT ROLLBACK FOREACH PROFILE EXPLAIN".split()
)
# Schema look-ups a query may CALL (LadybugDB's and Neo4j's), lower case
ALLOWED_PROCEDURES = frozenset(
    {"show_tables", "table_info", "db.labels", "db.relationshiptypes", "db.propertykeys"}
)
_TOKEN = re.compile(
    r"(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<string>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<quoted>`(?:[^`]|``)*`)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<number>\d+(?:\.\d+)?)"
    r"|(?P<space>\s+)"
    r"|(?P<symbol>\.\.|<-|->|<>|<=|>=|=~|.)",
    re.DOTALL,
)
_CLAUSE_END = frozenset({"WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "ORDER"})
_SHORTEST = frozenset({"SHORTEST", "ALL", "WSHORTEST", "TRAIL", "ACYCLIC"})


class CypherRefused(ValueError):
    """A query the guard will not run; the message names the rule it breaks."""


@dataclass(frozen=True)
class Token:
    kind: str  # word, string, quoted, number, symbol
    text: str
    start: int = 0  # where it stands in the query

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text


@dataclass(frozen=True)
class GuardLimits:
    """How far a guarded query may reach."""

    max_rows: int = 50
    max_hops: int = 3
    procedures: frozenset[str] = field(default=ALLOWED_PROCEDURES)


def tokens(query: str) -> list[Token]:
    """Return the tokens of ``query`` without comments and white space; an unterminated
    string, quoted name or comment is refused (it would hide the rest of the query)."""
    found = []
    for m in _TOKEN.finditer(query):
        kind, text = m.lastgroup or "symbol", m.group()
        if kind in ("comment", "space"):
            continue
        if kind == "symbol" and (text in "'\"`" or query.startswith("/*", m.start())):
            raise CypherRefused(f"unterminated string, quoted name or comment at {text!r}")
        found.append(Token(kind, text, m.start()))
    return found


def guard(query: str, limits: GuardLimits = GuardLimits()) -> str:
    """Return ``query`` bounded (its LIMIT added or clamped to ``limits.max_rows``), or raise
    CypherRefused naming why it may not run. No database is needed (see :func:`run_guarded`)."""
    toks = tokens(query)
    while toks and toks[-1].text == ";":
        toks.pop()
    if not toks:
        raise CypherRefused("empty query")
    words = [t.upper for t in toks]
    _check_clauses(toks, words, limits)
    _check_paths(toks, limits.max_hops)
    _check_connected(query, toks)
    return _bounded(query, toks, words, limits.max_rows)


def _check_clauses(toks: list[Token], words: list[str], limits: GuardLimits) -> None:
    for i, tok in enumerate(toks):
        after_dot = i > 0 and toks[i - 1].text == "."
        if tok.text == ";":
            raise CypherRefused("multiple statements (';'): write one query")
        if tok.kind != "word" or after_dot:
            continue
        word = tok.upper
        if word in WRITE_KEYWORDS:
            raise CypherRefused(f"{word} is not allowed: the query must only read the graph")
        if word == "UNION":
            raise CypherRefused("UNION is not allowed: write one query with one RETURN")
        if word == "CALL":
            _check_call(toks, i, limits.procedures)
        if _is_namespaced_call(toks, i) and not _after_call(toks, i):
            name = _dotted_name(toks, i)
            raise CypherRefused(f"function {name} is not allowed: use built-in functions only")
    if "RETURN" not in [w for t, w in zip(toks, words, strict=True) if t.kind == "word"]:
        raise CypherRefused("no RETURN clause: the query must return rows")


def _dotted_name(toks: list[Token], i: int) -> str:
    parts = [toks[i].text]
    while i + 2 < len(toks) and toks[i + 1].text == "." and toks[i + 2].kind == "word":
        parts.append(toks[i + 2].text)
        i += 2
    return ".".join(parts)


def _is_namespaced_call(toks: list[Token], i: int) -> bool:
    """A word that starts ``a.b(``: a function from a namespace (e.g. apoc), never a property."""
    if i > 0 and toks[i - 1].text == ".":
        return False
    j = i
    while j + 2 < len(toks) and toks[j + 1].text == "." and toks[j + 2].kind == "word":
        j += 2
    return j > i and j + 1 < len(toks) and toks[j + 1].text == "("


def _after_call(toks: list[Token], i: int) -> bool:
    return i > 0 and toks[i - 1].upper == "CALL"


def _check_call(toks: list[Token], i: int, procedures: frozenset[str]) -> None:
    if i + 1 >= len(toks) or toks[i + 1].kind != "word":
        raise CypherRefused("CALL of a subquery is not allowed: write one query")
    name = _dotted_name(toks, i + 1)
    if name.lower() not in procedures:
        allowed = ", ".join(sorted(procedures))
        raise CypherRefused(f"CALL {name} is not allowed: only {allowed} may be called")


def _check_paths(toks: list[Token], max_hops: int) -> None:
    """Refuse a variable-length relationship without an upper bound or beyond ``max_hops``,
    and quantified path patterns."""
    in_relationship = False
    for i, tok in enumerate(toks):
        previous = toks[i - 1].text if i else ""
        if tok.text == "[" and previous in ("-", "<-"):
            in_relationship = True
        elif tok.text == "]":
            in_relationship = False
        elif tok.text == "*" and in_relationship:
            _check_hops(toks, i + 1, max_hops)
        elif tok.text in ("+", "{") and previous == ")" and _in_pattern(toks, i):
            raise CypherRefused("quantified path patterns are not allowed: write [*1..N]")


def _in_pattern(toks: list[Token], i: int) -> bool:
    following = toks[i + 1].text if i + 1 < len(toks) else ""
    return toks[i].text == "+" or following.isdigit() or following == ","


def _check_hops(toks: list[Token], j: int, max_hops: int) -> None:
    while j < len(toks) and toks[j].upper in _SHORTEST:
        j += 1
    bounds = []
    while j < len(toks) and (toks[j].kind == "number" or toks[j].text == ".."):
        bounds.append(toks[j].text)
        j += 1
    text = "".join(bounds)
    upper = text.split("..")[-1] if text else ""
    if ".." not in text and text:
        upper = text  # *2: exactly two hops
    if not upper:
        raise CypherRefused(
            f"variable-length path [*{text}] has no upper bound: write [*1..{max_hops}] or fewer"
        )
    if float(upper) > max_hops:
        raise CypherRefused(
            f"variable-length path [*{text}] reaches {upper} hops: at most {max_hops} are allowed"
        )


def _check_connected(query: str, toks: list[Token]) -> None:
    """Refuse MATCH patterns that share no variable with the rest (a cartesian product),
    unless each such pattern is anchored by an inline property map, ``(n {title: ...})``."""
    bound: set[str] = set()
    i = 0
    while i < len(toks):
        if toks[i].upper != "MATCH" or (i and toks[i - 1].text == "."):
            i += 1
            continue
        parts, i = _pattern_parts(toks, i + 1)
        for part in parts:
            names = _variables(part)
            anchored = any(t.text == "{" for t in part)
            if bound and not names & bound and not anchored:
                shown = query[part[0].start : part[-1].start + len(part[-1].text)]
                raise CypherRefused(
                    f"cartesian product: the pattern {shown} shares no variable with the "
                    "patterns before it; connect them with a relationship, or give each an "
                    "inline property filter such as (b:Entity {title: '...'})"
                )
            bound |= names


def _pattern_parts(toks: list[Token], i: int) -> tuple[list[list[Token]], int]:
    """Return the comma-separated patterns of the MATCH clause starting at ``i``, and where it
    ends."""
    parts: list[list[Token]] = [[]]
    depth = 0
    while i < len(toks):
        tok = toks[i]
        if depth == 0 and tok.kind == "word" and tok.upper in _CLAUSE_END:
            break
        if tok.text in "([{":
            depth += 1
        elif tok.text in ")]}":
            depth -= 1
        if depth == 0 and tok.text == ",":
            parts.append([])
        else:
            parts[-1].append(tok)
        i += 1
    return [p for p in parts if p], i


def _variables(part: list[Token]) -> set[str]:
    """Return the node, relationship and path variables a pattern names."""
    names = set()
    for j, tok in enumerate(part[:-1]):
        nxt = part[j + 1]
        if tok.text in "([" and nxt.kind in ("word", "quoted"):
            names.add(nxt.text)
        if nxt.text == "=" and tok.kind == "word" and j == 0:
            names.add(tok.text)
    return names


def _bounded(query: str, toks: list[Token], words: list[str], max_rows: int) -> str:
    """Return the query with comments blanked, its last clause's LIMIT clamped to
    ``max_rows`` (or added) and nothing after its last token (a ';')."""
    text = _without_comments(query)[: toks[-1].start + len(toks[-1].text)]
    last_return = max(i for i, w in enumerate(words) if w == "RETURN")
    depth = 0
    for i in range(last_return, len(toks)):
        depth += toks[i].text in "([{"
        depth -= toks[i].text in ")]}"
        if depth == 0 and words[i] == "LIMIT" and toks[i].kind == "word":
            number = toks[i + 1] if i + 1 < len(toks) else None
            if number is None or number.kind != "number" or "." in number.text:
                raise CypherRefused("LIMIT must be followed by a whole number")
            end = number.start + len(number.text)
            return f"{text[: number.start]}{min(int(number.text), max_rows)}{text[end:]}"
    return f"{text} LIMIT {max_rows}"


def _without_comments(query: str) -> str:
    """Return ``query`` with each comment blanked to spaces (positions kept)."""
    return "".join(
        " " * len(m.group()) if m.lastgroup == "comment" else m.group()
        for m in _TOKEN.finditer(query)
    )


def run_guarded(
    db: Any,
    query: str,
    limits: GuardLimits = GuardLimits(),
    timeout_s: float | None = 10.0,
    params: dict[str, Any] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """Return the bounded query and its rows: guarded, planned by the engine (its error raised as
    given), run read-only within ``timeout_s``, at most ``limits.max_rows`` rows."""
    bounded = guard(query, limits)
    db.explain(bounded)
    rows = db.run(bounded, params, timeout_s=timeout_s, read_only=True)
    return bounded, rows[: limits.max_rows]
