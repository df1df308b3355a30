"""Community reports: loop-guard schema caps on strings, children's summaries first,
sub-community reports substituted one at a time, largest first."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import FakeLLM
from test_reports import (
    CHILD_HEADER,
    ReportWriter,
    context_of,
    entity_ids_in,
    run,
)

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.reports import write
from graphrag.index.reports.write import (
    CHILD_SUMMARY_HEADER,
    ChildCommunity,
    community_context,
    report_text,
    report_title_and_summary,
)
from graphrag.text import tokens


def string_caps(schema: dict) -> list[str]:
    """Return the paths of every ``maxLength`` in a JSON schema."""
    found = []
    for key, value in schema.items():
        if key == "maxLength":
            found.append(key)
        elif isinstance(value, dict):
            found += [f"{key}.{path}" for path in string_caps(value)]
    return found


def test_schema_caps_are_the_loop_guards() -> None:
    schema = prompts.report_schema(4)
    assert len(string_caps(schema)) == len(prompts.REPORT_CAPS) == 5
    properties = schema["properties"]
    finding = properties["findings"]["items"]["properties"]
    caps = {
        "title": properties["title"]["maxLength"],
        "summary": properties["summary"]["maxLength"],
        "rating_explanation": properties["rating_explanation"]["maxLength"],
        "finding_summary": finding["summary"]["maxLength"],
        "finding_explanation": finding["explanation"]["maxLength"],
    }
    assert caps == prompts.REPORT_CAPS
    # a guard, not a length: a finding summary of 15 long words (what the prompt allows) fits
    assert len(" ".join(["abcdefghijk"] * 15)) < caps["finding_summary"]
    assert properties["findings"]["maxItems"] == 4
    assert "date, number" in prompts.community_report("x", 4)[0]["content"]


def test_tidy_text_drops_a_loop_and_never_ends_mid_word() -> None:
    from graphrag.index.reports.write import tidy_text

    loop = "It was founded in 1998. " + "It studies kelp farms. " * 40
    looped = loop[:300]  # the schema's cap met inside the loop, mid-word
    assert tidy_text(looped, 300) == "It was founded in 1998. It studies kelp farms."
    assert tidy_text("Short and whole.", 300) == "Short and whole."
    assert (
        tidy_text("no sentence end at all but a cut wo", 35) == "no sentence end at all but a cut"
    )
    # Below its cap a text keeps its last sentence even without a full stop.
    assert tidy_text("One. Two", 300) == "One. Two"


def test_the_recorded_report_loop_is_tidied() -> None:
    """The live demo re-index recorded a KBMI report whose summary looped for 1,200 tokens:
    under the loop-guard caps such a string ends at its cap, and tidying leaves each sentence
    once."""
    from graphrag.index.reports.write import tidy_text

    cap = prompts.REPORT_CAPS["summary"]
    sentence = (
        "The institute is a protected marine research facility that assesses, studies, and "
        "tests kelp farms. "
    )
    summary = ("Kestrel Bay Marine Institute was founded in 1998. " + sentence * 30)[:cap]
    tidy = tidy_text(summary, cap)
    assert tidy.count("protected marine research facility") == 1
    assert tidy.endswith("kelp farms.")


def test_a_repeated_finding_is_kept_once() -> None:
    """A report over the demo's pipe-style graph (recorded live) wrote one KBMI finding three
    times; tidying keeps the first, in order, and leaves a report without repeats as it
    was."""
    from graphrag.index.reports.write import tidy_report

    kbmi = {
        "summary": "The Kestrel Bay Marine Institute is a marine research institute.",
        "explanation": "It provides underwater drone footage and nutrient readings.",
    }
    kelp = {"summary": "KelpSense buoys", "explanation": "Solar-powered buoys in the bay."}
    report = {
        "title": "Kestrel Bay Marine Institute",
        "summary": "A research institute.",
        "rating": 8,
        "rating_explanation": "Central.",
        "findings": [kbmi, dict(kbmi), kelp, {**kbmi, "summary": kbmi["summary"] + " "}],
    }
    assert tidy_report(report)["findings"] == [kbmi, kelp]
    assert tidy_report({**report, "findings": [kbmi, kelp]})["findings"] == [kbmi, kelp]


def test_the_explanation_length_is_the_prompts_number() -> None:
    """Three sentences is the prompt the recorded reports were written with; fewer is asked
    for in so many words."""
    three = prompts.community_report("x", 4)[0]["content"]
    assert "explanation of at most 3 sentences" in three
    two = prompts.community_report("x", 3, explanation_sentences=2)[0]["content"]
    assert "explanation of at most 2 sentences" in two
    assert two.replace("2 sentences", "3 sentences").replace("at most 3 key", "at most 4 key") == (
        three
    )


# --------------------------------------------------------------------------- substitution


def parent_and_children(sizes: list[int]) -> tuple[pd.Series, pd.DataFrame, pd.DataFrame, list]:
    """A parent community whose children have ``sizes`` entities each (one chain per child)."""
    rows, rels, children = [], [], []
    for k, size in enumerate(sizes):
        ids = [f"c{k}e{i}" for i in range(size)]
        rows += [
            {
                S.ID: e,
                S.HUMAN_ID: len(rows) + i,
                S.TITLE: f"Entity {e}",
                S.TYPE: "organization",
                S.DESCRIPTION: f"Entity {e} was founded in 19{i:02d} with {k + 3} staff.",
                S.DEGREE: 2,
            }
            for i, e in enumerate(ids)
        ]
        rels += [
            {
                S.ID: f"r{a}-{b}",
                S.HUMAN_ID: len(rels) + j,
                S.SOURCE_ENTITY: f"Entity {a}",
                S.TARGET_ENTITY: f"Entity {b}",
                S.SOURCE_ID: a,
                S.TARGET_ID: b,
                S.DESCRIPTION: "work together",
                S.WEIGHT: 1.0,
                S.COMBINED_DEGREE: 4,
            }
            for j, (a, b) in enumerate(zip(ids, ids[1:], strict=False))
        ]
        report = report_text(
            {
                "title": f"Child {k}",
                "summary": f"Child {k} holds {size} entities.",
                "findings": [{"summary": f"fact of child {k}", "explanation": "its data"}],
            }
        )
        children.append(ChildCommunity(10 + k, ids, report))
    entities, relationships = pd.DataFrame(rows), pd.DataFrame(rels)
    parent = pd.Series(
        {S.ENTITY_IDS: list(entities[S.ID]), S.RELATIONSHIP_IDS: list(relationships[S.ID])}
    )
    return parent, entities, relationships, children


def listed_children(context: str) -> set[int]:
    """Return the numbers of the children whose entities are still listed in ``context``."""
    return {int(e.split("e")[0][1:]) + 10 for e in entity_ids_in_entities(context)}


def entity_ids_in_entities(context: str) -> set[str]:
    return {n.removeprefix("Entity ") for n in entity_ids_in(context)} if context else set()


def test_summaries_of_written_children_come_first_when_everything_fits() -> None:
    parent, entities, relationships, children = parent_and_children([3, 5, 2])
    context, source = community_context(parent, entities, relationships, children, 5000)
    assert source == "child_summaries"
    assert context.startswith(CHILD_SUMMARY_HEADER)
    for child in children:
        assert f"{child.community}|Child {child.community - 10}|" in context
    assert listed_children(context) == {10, 11, 12}  # nothing substituted


def test_only_entities_without_written_children() -> None:
    parent, entities, relationships, children = parent_and_children([3, 5])
    unwritten = [ChildCommunity(c.community, c.entity_ids, None) for c in children]
    context, source = community_context(parent, entities, relationships, unwritten, 5000)
    assert source == "entities"
    assert context.startswith("Entities (")


def test_the_largest_child_is_substituted_first_then_the_next() -> None:
    parent, entities, relationships, children = parent_and_children([3, 8, 5])
    full, _ = community_context(parent, entities, relationships, children, 10_000)
    whole = tokens.count_tokens(full)
    largest = children[1]
    steps = []
    for budget in range(whole - 1, 0, -5):
        context, source = community_context(parent, entities, relationships, children, budget)
        assert tokens.count_tokens(context) <= budget
        reports_in = {c.community for c in children if c.report in context}
        steps.append((budget, source, reports_in, listed_children(context)))
        if source == "child_reports":
            break
    # one below the whole size: exactly the largest child (8 entities) is swapped for its report
    _, source, reports_in, listed = steps[0]
    assert source == "mixed"
    assert reports_in == {largest.community}
    assert listed == {10, 12}
    assert steps[0][0] < whole
    # the order of substitution is by size: 8 entities, then 5, then 3
    swapped_sets = [frozenset(r) for _, s, r, _ in steps]
    distinct = list(dict.fromkeys(swapped_sets))
    assert distinct == [frozenset({11}), frozenset({11, 12}), frozenset({10, 11, 12})]
    assert steps[-1][1] == "child_reports"
    # a substituted child's report comes before the summaries of those still listed
    context = community_context(parent, entities, relationships, children, steps[0][0])[0]
    assert context.startswith(CHILD_HEADER)
    assert context.index(largest.report) < context.index(CHILD_SUMMARY_HEADER)


def test_a_child_without_a_report_is_never_substituted() -> None:
    parent, entities, relationships, children = parent_and_children([3, 8, 5])
    children[1] = ChildCommunity(children[1].community, children[1].entity_ids, None)
    full, _ = community_context(parent, entities, relationships, children, 10_000)
    budget = tokens.count_tokens(full) - 1
    context, source = community_context(parent, entities, relationships, children, budget)
    assert source == "mixed"
    assert children[2].report in context  # the largest written child, not the unwritten one
    assert children[0].report not in context
    assert listed_children(context) == {10, 11}
    assert "Child 1" not in context


# --------------------------------------------------------------------------- end to end (fake)


def test_reports_over_the_karate_hierarchy(
    fake_llm: FakeLLM, make_llm, karate_index: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.respond_with(ReportWriter())
    monkeypatch.setattr(write, "REPORT_MAX_TOKENS", 900)
    llm = make_llm(index={"min_report_entities": 3})
    reports, errors = run(karate_index, llm)
    communities = karate_index["communities"]
    assert errors.empty
    assert fake_llm.calls == len(communities)  # none has fewer than 3 members
    index = llm.settings.index
    system = prompts.community_report(
        "", index.report_max_findings, index.report_explanation_sentences
    )[0]["content"]
    for body in fake_llm.requests:
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema == prompts.report_schema(index.report_max_findings)  # loop-guard caps
        assert body["max_tokens"] == 900
        assert body["messages"][0]["content"] == system
    source = dict(zip(reports[S.COMMUNITY], reports[S.CONTEXT_SOURCE], strict=True))
    by_community = reports.set_index(S.COMMUNITY)
    parents = communities[communities[S.CHILDREN].map(len) > 0]
    assert len(parents)
    contexts = [context_of(b) for b in fake_llm.requests]
    for _, parent in parents.iterrows():
        assert source[parent[S.COMMUNITY]] == "child_summaries"  # the default budget fits
        titles = [by_community.loc[c, S.TITLE] for c in parent[S.CHILDREN]]
        prompt = next(c for c in contexts if all(f"|{t}|" in c for t in titles))
        assert prompt.startswith(CHILD_SUMMARY_HEADER)
        assert entity_ids_in(prompt) == set(parent[S.ENTITY_IDS])
    for leaf in communities[communities[S.CHILDREN].map(len) == 0][S.COMMUNITY]:
        assert source[leaf] == "entities"


# --------------------------------------------------------------------------- real data


def demo_parents(index) -> list[tuple[pd.Series, list[ChildCommunity]]]:
    """An index's parent communities with their children (its reports as the children's)."""
    communities = index.communities
    reports = dict(
        zip(
            index.community_reports[S.COMMUNITY],
            index.community_reports[S.FULL_CONTENT],
            strict=True,
        )
    )
    entity_ids = dict(zip(communities[S.COMMUNITY], communities[S.ENTITY_IDS], strict=True))
    return [
        (
            row,
            [ChildCommunity(int(k), list(entity_ids[k]), reports.get(k)) for k in row[S.CHILDREN]],
        )
        for _, row in communities.iterrows()
        if len(row[S.CHILDREN])
    ]


def own_tokens(context: str, child: ChildCommunity, entities: pd.DataFrame) -> int:
    """Return the tokens of a child's own lines in a parent's ``context``: its entities' lines
    and the relationship lines between two of them (what swapping it for its report frees)."""
    titles = {
        prompts.table_cell(t) for t in entities.loc[entities[S.ID].isin(child.entity_ids), S.TITLE]
    }
    lines = context.splitlines()
    start = lines.index("Entities (id|name|type|description)")
    middle = lines.index("Relationships (id|source|target|description)")
    own = [line for line in lines[start + 1 : middle] if line.split("|")[1] in titles]
    own += [
        line
        for line in lines[middle + 1 :]
        if line.split("|")[1] in titles and line.split("|")[2] in titles
    ]
    return sum(tokens.count_tokens(line) for line in own)


def test_contexts_of_the_musique_parents(musique_index) -> None:
    """On the MuSiQue index (the demo's default graph has no parent community), a parent
    whose whole context fits starts from its children's summaries and lists every entity; at
    a smaller budget its largest child is swapped for its report first, and every context
    stays within its budget."""
    entities, relationships = musique_index.entities, musique_index.relationships
    parents = [
        (parent, children)
        for parent, children in demo_parents(musique_index)
        if len(parent[S.ENTITY_IDS]) <= 15  # listed whole in 20,000 tokens
    ]
    assert len(parents) >= 10
    for parent, children in parents:
        context, source = community_context(parent, entities, relationships, children, 20_000)
        assert source == "child_summaries"
        assert context.startswith(CHILD_SUMMARY_HEADER)
        titles = [report_title_and_summary(c.report)[0] for c in children]
        assert all(f"|{prompts.table_cell(t)}|" in context for t in titles)
        assert entity_ids_in(context) == set(
            entities.loc[entities[S.ID].isin(parent[S.ENTITY_IDS]), S.TITLE]
        )
        full = tokens.count_tokens(context)
        smaller, source = community_context(parent, entities, relationships, children, full - 1)
        assert tokens.count_tokens(smaller) < full
        assert source in ("mixed", "child_reports")
        swapped = [c for c in children if c.report in smaller]
        sizes = {c.community: own_tokens(context, c, entities) for c in children}
        assert swapped and max(sizes.values()) in {sizes[c.community] for c in swapped}
