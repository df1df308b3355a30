"""Description summaries: descriptions packed into an input
budget (most frequent, longest first), a fact-keeping prompt with a larger output budget, and
relationship descriptions summarized when many or long."""

from __future__ import annotations

import pytest
from conftest import FakeLLM
from test_graph import entity_mentions, relationship_mentions

from graphrag import prompts
from graphrag import schemas as S
from graphrag.index.graph import merge
from graphrag.index.graph.merge import (
    merge_entities,
    merge_relationships,
    packed_descriptions,
    summarize_entities,
    summarize_relationships,
)
from graphrag.text.tokens import count_tokens


def described_lines(body: dict) -> list[str]:
    """Return the descriptions a summary request lists (its "- " lines)."""
    user = body["messages"][1]["content"]
    return [line[2:] for line in user.splitlines() if line.startswith("- ")]


def test_summaries_order_descriptions_by_frequency_then_length() -> None:
    mentions = entity_mentions(
        ("Hub", "hub", "organization", "Short.", "u1"),
        ("Hub", "hub", "organization", "A longer description.", "u2"),
        ("Hub", "hub", "organization", "Said twice.", "u3"),
        ("Hub", "hub", "organization", "Said twice.", "u4"),
    )
    assert merge_entities(mentions)[S.DESCRIPTIONS].iloc[0] == [
        "Short.",
        "A longer description.",
        "Said twice.",
    ]
    assert merge_entities(mentions, by_frequency=True)[S.DESCRIPTIONS].iloc[0] == [
        "Said twice.",
        "A longer description.",
        "Short.",
    ]


def test_packing_keeps_the_order_and_the_budget() -> None:
    descriptions = [f"Fact {i}: " + "word " * (5 + 7 * (i % 3)) for i in range(40)]
    for budget in (30, 100, 400):
        packed = packed_descriptions(descriptions, budget)
        assert sum(count_tokens(d) + 2 for d in packed) <= budget
        assert packed == [d for d in descriptions if d in packed]  # order kept
        assert packed[0] == descriptions[0]
        # a description left out did not fit beside those kept before it
        used = 0
        for d in descriptions:
            if d in packed:
                used += count_tokens(d) + 2
            else:
                assert used + count_tokens(d) + 2 > budget
    assert packed_descriptions(descriptions, 10_000) == descriptions


def test_a_summary_reads_a_packed_input_within_its_output_budget(
    fake_llm: FakeLLM, make_llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        ("Hub", "hub", "organization", f"In {1990 + i} the Hub hired {i} divers.", f"u{i}")
        for i in range(60)
    ] + [("Solo", "solo", "person", "Only one.", "u0")]
    entities = merge_entities(entity_mentions(*rows), by_frequency=True)
    fake_llm.respond_with(lambda body: "Merged facts.")
    monkeypatch.setattr(merge, "SUMMARY_INPUT_TOKENS", 120)
    llm = make_llm()
    result, errors = summarize_entities(entities, llm, llm.settings.index, progress=False)

    assert errors.empty
    assert fake_llm.calls == 1  # one description needs no summary
    body = fake_llm.requests[0]
    listed = described_lines(body)
    hub = entities.set_index(S.TITLE).loc["Hub", S.DESCRIPTIONS]
    assert 3 < len(listed) < len(hub)
    assert listed == hub[: len(listed)]
    assert sum(count_tokens(d) + 2 for d in listed) <= 120
    assert body["max_tokens"] == 200
    system = body["messages"][0]["content"]
    assert system == prompts.summarize_descriptions("Hub", listed, 120)[0]["content"]
    assert "every date, number" in system
    assert result.set_index(S.TITLE).loc["Hub", S.DESCRIPTION] == "Merged facts."
    assert result.set_index(S.TITLE).loc["Solo", S.DESCRIPTION] == "Only one."


def pair_tables(descriptions_of: dict[tuple[str, str], list[str]]):
    names = sorted({n for pair in descriptions_of for n in pair})
    entities = merge_entities(
        entity_mentions(*[(n, n.lower(), "person", f"{n}.", "u1") for n in names])
    )
    rows = [
        (a, b, d, 2, f"u{i}")
        for (a, b), texts in descriptions_of.items()
        for i, d in enumerate(texts)
    ]
    return merge_relationships(relationship_mentions(*rows), entities, keep_descriptions=True)


def test_relationship_summary_is_triggered_by_count_or_length(fake_llm: FakeLLM, make_llm) -> None:
    long = "They signed a contract worth 4.2 million in March 2019 and renewed it twice " * 6
    relationships = pair_tables(
        {
            ("Ana", "Ben"): ["met in 2001", "worked together"],  # 2 short: joined
            ("Ana", "Cy"): [f"project {i} in {2000 + i}" for i in range(4)],  # 4 > 3: summary
            ("Ben", "Cy"): [long, long + "again"],  # 2 but long: summary
            ("Cy", "Dee"): ["one description only"],
        }
    )
    fake_llm.respond_with(lambda body: "Summarized pair.")
    llm = make_llm()
    result, errors = summarize_relationships(relationships, llm, False)

    assert errors.empty
    assert S.DESCRIPTIONS not in result.columns
    by_pair = {
        (s, t): d
        for s, t, d in result[[S.SOURCE_ENTITY, S.TARGET_ENTITY, S.DESCRIPTION]].itertuples(
            index=False
        )
    }
    assert by_pair[("Ana", "Ben")] == "met in 2001; worked together"
    assert by_pair[("Ana", "Cy")] == "Summarized pair."
    assert by_pair[("Ben", "Cy")] == "Summarized pair."
    assert by_pair[("Cy", "Dee")] == "one description only"
    assert fake_llm.calls == 2
    subjects = sorted(b["messages"][1]["content"].splitlines()[0] for b in fake_llm.requests)
    assert subjects == ["Relationship: Ana -> Cy", "Relationship: Ben -> Cy"]
    assert all(b["max_tokens"] == 200 for b in fake_llm.requests)


def test_a_failed_relationship_summary_keeps_the_joined_text(fake_llm: FakeLLM, make_llm) -> None:
    relationships = pair_tables({("Ana", "Cy"): [f"project {i}" for i in range(5)]})
    fake_llm.respond_with(lambda body: "")
    llm = make_llm()
    result, errors = summarize_relationships(relationships, llm, False)
    assert result[S.DESCRIPTION].iloc[0] == "; ".join(f"project {i}" for i in range(5))
    assert errors[S.STAGE].tolist() == ["summarize_relationships"]


# --------------------------------------------------------------------------- real data


def test_demo_hubs_under_the_summary_budgets(demo_mentions) -> None:
    """On the demo, the hub entities' descriptions all fit the default 1,500-token input budget
    (nothing is dropped before the summary), while a small budget keeps the most frequent."""
    entity, relationship, _ = demo_mentions
    entities = merge_entities(entity, by_frequency=True)
    hub = entities.loc[entities[S.FREQUENCY].idxmax()]
    assert hub[S.FREQUENCY] >= 7
    assert packed_descriptions(hub[S.DESCRIPTIONS], 1500) == hub[S.DESCRIPTIONS]
    small = packed_descriptions(hub[S.DESCRIPTIONS], 60)
    assert 0 < len(small) < len(hub[S.DESCRIPTIONS])
    assert small[0] == hub[S.DESCRIPTIONS][0]
    relationships = merge_relationships(relationship, entities, keep_descriptions=True)
    joined = relationships[S.DESCRIPTION]
    listed = relationships[S.DESCRIPTIONS].map("; ".join)
    assert (joined.str.len() == listed.str.len()).all()  # the same texts, maybe reordered
