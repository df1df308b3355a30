"""Community reports: every community, leaves first, child reports for large parents."""

from __future__ import annotations

import itertools
import json

import jsonschema
import pandas as pd
import pytest
from conftest import FakeLLM

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.reports.write import report_text, write_community_reports
from graphrag.text import tokens

ENTITY_HEADER = "Entities (id|name|type|description)"
RELATIONSHIP_HEADER = "Relationships (id|source|target|description)"
CHILD_HEADER = "Reports of its sub-communities"


def context_of(body: dict) -> str:
    """Return the community data of a report request (repair rounds append turns after it)."""
    return body["messages"][1]["content"].removeprefix("Data:\n")


def entity_ids_in(context: str) -> set[str]:
    """Return the entity ids listed in a report context (``Member pNN`` lines)."""
    lines = context.splitlines()
    if ENTITY_HEADER not in lines:
        return set()
    rest = lines[lines.index(ENTITY_HEADER) + 1 :]
    listed = itertools.takewhile(lambda line: line != RELATIONSHIP_HEADER, rest)
    return {line.split("|")[1].removeprefix("Member ") for line in listed}


class ReportWriter:
    """Writes a valid report for each request, numbered in the order requests arrive."""

    def __init__(self, invalid_for: set[str] | None = None) -> None:
        self.counter = itertools.count()
        self.invalid_for = invalid_for

    def __call__(self, body: dict) -> str:
        context = context_of(body)
        if self.invalid_for is not None and entity_ids_in(context) == self.invalid_for:
            return '{"title": "missing everything else"}'
        n = next(self.counter)
        findings = [
            {"summary": f"finding {i}", "explanation": f"line count {len(context.splitlines())}"}
            for i in range(1 + n % 2)
        ]
        return json.dumps(
            {
                "title": f"R{n}",
                "summary": f"Community seen as request {n}.",
                "rating": n % 11,
                "rating_explanation": "by arrival",
                "findings": findings,
            }
        )


def run(tables: dict, llm, settings=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    return write_community_reports(
        tables["communities"],
        tables["entities"],
        tables["relationships"],
        llm,
        settings or llm.settings.index,
        progress=False,
    )


def test_every_community_gets_a_valid_report_deepest_level_first(
    fake_llm: FakeLLM, make_llm, karate_index: dict
) -> None:
    fake_llm.respond_with(ReportWriter())
    llm = make_llm()
    reports, errors = run(karate_index, llm)
    communities = karate_index["communities"]

    assert errors.empty
    assert fake_llm.calls == len(communities)
    assert reports[S.COMMUNITY].tolist() == communities[S.COMMUNITY].tolist()
    assert reports[S.ID].tolist() == communities[S.ID].tolist()
    schema = prompts.report_schema(llm.settings.index.report_max_findings)
    for report in reports.to_dict("records"):
        reply = {k: report[k] for k in ("title", "summary", "rating_explanation", "findings")}
        reply["rating"] = report[S.RANK]
        jsonschema.validate(reply, schema)
        assert report[S.FULL_CONTENT] == report_text(reply)
        assert report[S.FULL_CONTENT].startswith(f"# {report[S.TITLE]}\n\n")
        # everything fits the default budget: a parent starts from its children's summaries
        parent = bool(communities.set_index(S.COMMUNITY).loc[report[S.COMMUNITY], S.CHILDREN])
        assert report[S.CONTEXT_SOURCE] == ("child_summaries" if parent else "entities")

    order = dict(zip(reports[S.COMMUNITY], reports[S.TITLE].str[1:].astype(int), strict=True))
    level_of = dict(zip(communities[S.COMMUNITY], communities[S.LEVEL], strict=True))
    deepest = [order[c] for c in order if level_of[c] == 1]
    top = [order[c] for c in order if level_of[c] == 0]
    assert max(deepest) < min(top)

    # each request lists exactly its community's entities, highest degree first
    members = {frozenset(m) for m in communities[S.ENTITY_IDS]}
    asked = [entity_ids_in(context_of(b)) for b in fake_llm.requests]
    assert {frozenset(a) for a in asked} == members
    degree = dict(
        zip(karate_index["entities"][S.ID], karate_index["entities"][S.DEGREE], strict=True)
    )
    for body in fake_llm.requests:
        lines = context_of(body).splitlines()
        listed = lines[lines.index(ENTITY_HEADER) + 1 : lines.index(RELATIONSHIP_HEADER)]
        degrees = [degree[line.split("|")[1].removeprefix("Member ")] for line in listed]
        assert degrees == sorted(degrees, reverse=True)


def test_a_parent_over_budget_uses_its_children_reports(
    fake_llm: FakeLLM, make_llm, karate_index: dict
) -> None:
    fake_llm.respond_with(ReportWriter())
    budget = 90
    llm = make_llm(index={"report_context_tokens": budget})
    reports, errors = run(karate_index, llm)
    assert errors.empty
    communities = karate_index["communities"].set_index(S.COMMUNITY)
    source = dict(zip(reports[S.COMMUNITY], reports[S.CONTEXT_SOURCE], strict=True))
    by_community = reports.set_index(S.COMMUNITY)
    contexts = {}
    for body in fake_llm.requests:
        context = context_of(body)
        assert tokens.count_tokens(context) <= budget
        contexts[context] = body

    parents = [c for c, row in communities.iterrows() if row[S.CHILDREN]]
    assert parents
    for community in communities.index:
        if community in parents:
            assert source[community] == "child_reports"
        else:
            assert source[community] == "entities"
    # the parent's prompt carries a child's report text, written before it
    child_texts = {c: by_community.loc[c, S.FULL_CONTENT] for c in by_community.index}
    for parent in parents:
        children = communities.loc[parent, S.CHILDREN]
        with_children = [
            ctx
            for ctx in contexts
            if ctx.startswith(CHILD_HEADER) and any(child_texts[c] in ctx for c in children)
        ]
        assert with_children, f"no prompt of community {parent} used its children's reports"


def test_an_invalid_report_is_recorded_as_an_error(
    fake_llm: FakeLLM, make_llm, karate_index: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    communities = karate_index["communities"]
    leaf = communities[communities[S.LEVEL] == 1].iloc[0]
    fake_llm.respond_with(ReportWriter(invalid_for=set(leaf[S.ENTITY_IDS])))
    monkeypatch.setattr("graphrag.llm.replies.JSON_REPAIR_ROUNDS", 1)
    llm = make_llm()
    reports, errors = run(karate_index, llm)

    assert errors[[S.STAGE, S.ITEM_ID]].to_dict("records") == [
        {S.STAGE: "reports", S.ITEM_ID: leaf[S.ID]}
    ]
    assert errors[S.ERROR].iloc[0].startswith("JSONOutputError: community_report")
    assert leaf[S.COMMUNITY] not in set(reports[S.COMMUNITY])
    assert sorted(reports[S.COMMUNITY]) == sorted(
        c for c in communities[S.COMMUNITY] if c != leaf[S.COMMUNITY]
    )
    assert fake_llm.calls == len(communities) + 1  # one repair round for the bad one
