"""The LLM-free graph mode: the rule-based extractor on sentences whose entities are known,
the demo corpus against its gold graph, and a whole nlp-mode index that every query method
answers on (the answer calls go to a fake endpoint; the index itself makes none)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import DEMO_DOCS, FakeLLM, nlp_settings

from graphrag import schemas as S
from graphrag.index.extract.nlp import acronym_aliases, extract_graph_nlp, sentences
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.nlp_stages import nlp_graph
from graphrag.index.pipeline import build_index
from graphrag.index.store import load_index
from graphrag.llm.client import ChatLLM
from graphrag.query.registry import ALL_METHODS, make_methods
from graphrag.settings import REPO_ROOT, load_settings
from graphrag.text.documents import chunk_documents, load_documents

GOLD = REPO_ROOT / "data" / "kestrel_bay" / "gold_graph.json"


def units(*texts: str) -> pd.DataFrame:
    return pd.DataFrame({S.ID: [f"u{i}" for i in range(len(texts))], S.TEXT: list(texts)})


def extract(*texts: str, **index: object):
    settings = load_settings(env={}, overrides={"index": index} if index else None).index
    return extract_graph_nlp(units(*texts), settings)


def titles(entities: pd.DataFrame) -> set[str]:
    return set(entities[S.TITLE])


# Sentences from the demo corpus (01_kbmi_profile.md, 06_harrow_shoal_discovery.md) whose
# entities are listed by hand.
KBMI = (
    "The Kestrel Bay Marine Institute (KBMI) is an independent research centre on the harbour "
    "front in Port Aldry. It was founded in 1998 as a partnership between Saltmere University "
    "and the Kestrel Bay Regional Council. Since 2016 the Institute has been led by Director "
    "Mara Okafor, an oceanographer. Okafor has steered KBMI toward applied work."
)


def test_capitalized_spans_acronyms_and_short_forms_give_the_known_entities() -> None:
    entities, relationships, errors, _ = extract(KBMI)

    assert titles(entities) == {
        "Kestrel Bay Marine Institute",
        "Port Aldry",
        "Saltmere University",
        "Kestrel Bay Regional Council",
        "Mara Okafor",
    }
    assert errors.empty
    kinds = dict(zip(entities[S.TITLE], entities[S.TYPE], strict=True))
    assert kinds["Mara Okafor"] == "person"  # "Director" before the name
    assert kinds["Saltmere University"] == "organization"
    assert kinds["Port Aldry"] == "geo"
    # "KBMI", "the Institute" and "Okafor" are the long names, not entities of their own,
    # so the institute's description has the three sentences naming it in any form (not the
    # one that says "It").
    institute = entities[entities[S.TITLE] == "Kestrel Bay Marine Institute"].iloc[0]
    assert institute[S.DESCRIPTION].count(".") == 3
    assert "founded in 1998" not in institute[S.DESCRIPTION]
    # every pair in the one chunk co-occurs; those sharing a sentence keep that sentence
    assert len(relationships) == 10
    pair = relationships[
        (relationships["source_key"] == "mara okafor")
        & (relationships["target_key"] == "saltmere university")
    ].iloc[0]
    assert pair[S.DESCRIPTION].endswith("same passage.") and not pair["same_sentence"]


def test_sentence_openers_headlines_and_joined_names_are_not_entities() -> None:
    entities, _, _, _ = extract(
        "# Hale Wins Port Aldry Mayoral Election\n\n"
        "However, turnout was high. Fishers voted early. Nadia Fenwick of Seagrass Guardians "
        "spoke for Lena Marsh and Owen Brask.\n\nQ: What now?\n\nReyne: Everything changes."
    )
    assert titles(entities) == {"Nadia Fenwick", "Seagrass Guardians", "Lena Marsh", "Owen Brask"}


def test_an_acronym_definition_makes_an_alias_and_a_name_can_open_a_sentence() -> None:
    assert acronym_aliases(["the Kestrel Bay Marine Institute (KBMI) said"]) == {
        "KBMI": "Kestrel Bay Marine Institute"
    }
    entities, _, _, _ = extract("KBMI grew. Saltmere University (SU) helped.", nlp_min_chunks=1)
    # "KBMI" opens its sentence but an acronym's capitals are its own, so it is kept;
    # "SU" is defined, so it merges with the university.
    assert titles(entities) == {"KBMI", "Saltmere University"}


def test_a_title_that_ends_a_sentence_names_no_one() -> None:
    # Sentences from MuSiQue's Wikipedia paragraphs (Rajya Sabha; Party leaders of the United
    # States House): a title with no name after it once ran the span past the sentence's end.
    entities, _, errors, _ = extract(
        "This is commonly the leader of the largest non-government party, and is recognized "
        "as such by the Chairman.",
        "In the instance when the Presidency and both Houses of Congress are controlled by one "
        "party, the Speaker normally assumes a lower profile and defers to the President.",
    )

    assert errors.empty
    assert {"Chairman", "President"}.isdisjoint(titles(entities))
    assert "Congress" in titles(entities)


def test_markdown_headings_and_lines_are_sentences() -> None:
    assert sentences("# Title Here\n\nOne. Two!\nThree") == ["Title Here", "One.", "Two!", "Three"]


def demo_units() -> pd.DataFrame:
    documents = load_documents(DEMO_DOCS, 200_000).documents
    return chunk_documents(documents, 600, 100)


def test_demo_corpus_recall_against_the_gold_graph() -> None:
    """Measured, not tuned in the test: 26 of 28 gold entities (the two missed are lower-case
    events, "Port Aldry mayoral election" and "Harrow Shoal case") and 45 of 60 gold pairs."""
    from graphrag.index.nlp_stages import nlp_extract_stage
    from graphrag.index.stages import IndexContext

    settings = load_settings(env={})
    tables = nlp_extract_stage({"text_units": demo_units()}, IndexContext(settings, None, None))
    entities, relationships = nlp_graph(
        tables["entity_mentions"], tables["relationship_mentions"], 800
    )
    quality = extraction_quality(entities, relationships, load_gold_graph(GOLD))
    assert quality.entity_recall >= 0.9, quality.render()
    assert quality.relationship_recall >= 0.7, quality.render()
    assert set(quality.missed_entities) <= {"Port Aldry mayoral election", "Harrow Shoal case"}
    # provenance: every entity's text units are chunks that mention it
    text_of = dict(zip(demo_units()[S.ID], demo_units()[S.TEXT], strict=True))
    okafor = entities[entities[S.TITLE] == "Mara Okafor"].iloc[0]
    assert all("Okafor" in text_of[u] for u in okafor[S.TEXT_UNIT_IDS])
    assert relationships[S.WEIGHT].gt(0).all()


ZH_GOLD = REPO_ROOT / "data" / "zh_demo" / "gold_graph.json"


def test_chinese_names_come_from_jieba_tags_with_their_types() -> None:
    entities, relationships, _, _ = extract(
        "阿里巴巴集团旗下的阿里云与BlueTide Energy在杭州签约。浙江大学教授周明远出席。",
        "BlueTide Energy首席执行官Sarah Collins表示满意。",
    )
    types = dict(zip(entities[S.TITLE], entities[S.TYPE], strict=True))
    assert types["阿里巴巴集团"] == "organization"
    assert types["杭州"] == "geo"
    assert types["周明远"] == "person"
    assert types["BlueTide Energy"] == "concept"  # a Latin-script name inside Chinese, whole
    # jieba cuts 阿里云 as 阿里 / 云: the short form stays (resolving it is later work)
    assert entities.groupby(S.TEXT_UNIT_ID)[S.TITLE].apply(set).to_dict() == {
        "u0": {"阿里巴巴集团", "阿里", "BlueTide Energy", "杭州", "浙江大学", "周明远"},
        "u1": {"BlueTide Energy", "Sarah Collins"},
    }
    pair = relationships[
        (relationships["source_key"] == "sarah collins")
        | (relationships["target_key"] == "sarah collins")
    ]
    assert len(pair) == 1 and pair.iloc[0][S.DESCRIPTION].startswith("BlueTide Energy首席")
    # names sharing a chunk but no sentence get the passage line in the chunk's language
    apart = relationships[~relationships["same_sentence"]].set_index(["source", "target"])
    assert apart.loc[("杭州", "浙江大学"), S.DESCRIPTION] == "杭州与浙江大学出现在同一段落。"
    assert len(apart) == 8  # of the 15 pairs in u0, 7 share a sentence


def test_chinese_demo_against_its_gold_graph() -> None:
    """Measured by studies/benchmarks/chinese_nlp_graph.py on data/zh_demo: 22 of 26 gold
    entities, 22 of 26 extracted once the headline's short form joins the cooperative (the
    rules were written on these six passages, so this pins behaviour rather than estimating
    it on unseen text)."""
    from graphrag.index.nlp_stages import nlp_extract_stage
    from graphrag.index.stages import IndexContext

    settings = load_settings(env={})
    documents = load_documents(REPO_ROOT / "data" / "zh_demo" / "docs").documents
    text_units = chunk_documents(documents, settings.chunking.size, settings.chunking.overlap)
    tables = nlp_extract_stage({"text_units": text_units}, IndexContext(settings, None, None))
    entities, relationships = nlp_graph(
        tables["entity_mentions"], tables["relationship_mentions"], 800
    )
    quality = extraction_quality(entities, relationships, load_gold_graph(ZH_GOLD))
    assert quality.entity_recall >= 0.8, quality.render()
    assert quality.entity_precision >= 0.84, quality.render()
    assert {"BlueTide Energy", "Sarah Collins", "KelpSense"} <= set(entities[S.TITLE])


def answering_model(body: dict) -> str:
    """Answer any query prompt in the shape its schema asks for."""
    schema = (body.get("response_format") or {}).get("json_schema", {})
    name = schema.get("name")
    if name == "rephrasings":
        n = schema["schema"]["properties"]["queries"]["minItems"]
        return json.dumps({"queries": [f"Who leads KBMI, variant {i}?" for i in range(n)]})
    if name == "map_points":
        return json.dumps({"points": [{"description": "Okafor leads KBMI [0].", "score": 60}]})
    if name == "map_sentences":
        return json.dumps({"sentences": [{"n": 1, "score": 60}]})
    if name == "drift_step":
        return json.dumps({"answer": "Mara Okafor leads it [0].", "score": 70, "follow_ups": []})
    if name == "query_keywords":
        kinds = schema["schema"]["properties"]["answer_type_keywords"]["items"]["enum"]
        named = ["Kestrel Bay Marine Institute"]
        return json.dumps({"answer_type_keywords": kinds[:1], "entities_from_query": named})
    if name in ("recognized facts", "relevance_test"):  # hipporag's filter, lazy_global's test
        return json.dumps({"relevant": [1]})
    if name == "sub_questions":  # decomposition's plan
        return json.dumps({"sub_questions": ["Who leads KBMI?", "Since when does #1 lead it?"]})
    if name:
        raise AssertionError(f"unexpected schema {name}")
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    if "You write one Cypher query" in system:  # the cypher method's query turn
        return "MATCH (e:Entity) WHERE e.title CONTAINS 'Okafor' RETURN e.title, e.description"
    return "Mara Okafor has led the Kestrel Bay Marine Institute since 2016 [1]."


@pytest.fixture(scope="module")
def nlp_index(tmp_path_factory, replay_embedder):
    settings = nlp_settings()
    out = tmp_path_factory.mktemp("nlp_index")
    llm = ChatLLM(settings)  # points at a closed port: any LLM call would fail the build
    summary = build_index(DEMO_DOCS, out, settings, llm, replay_embedder, progress=False)
    return summary, load_index(out)


def test_nlp_index_is_built_without_an_llm_call(nlp_index) -> None:
    summary, index = nlp_index
    assert sum(stage["calls"] for stage in summary.stages.values()) == 0
    assert summary.failed == []
    assert len(index.entities) >= 20 and len(index.relationships) > len(index.entities)
    assert set(index.community_reports[S.COMMUNITY]) == set(index.communities[S.COMMUNITY])
    assert (index.community_reports[S.CONTEXT_SOURCE] == "template").all()
    for _, report in index.community_reports.iterrows():
        community = index.communities[index.communities[S.COMMUNITY] == report[S.COMMUNITY]]
        members = set(
            index.entities.loc[index.entities[S.ID].isin(community.iloc[0][S.ENTITY_IDS]), S.TITLE]
        )
        assert report[S.TITLE].split(", ")[0].split(" and ")[0] in members
    assert index.manifest["usage"]["prompt_tokens"] == 0


@pytest.mark.parametrize("name", list(ALL_METHODS))
def test_every_query_method_answers_on_an_nlp_index(
    nlp_index, fake_llm: FakeLLM, make_settings, replay_embedder, name: str
) -> None:
    _, index = nlp_index
    fake_llm.respond_with(answering_model)
    settings = make_settings(fake_llm.base_url)
    method = make_methods(index, [name], settings, ChatLLM(settings), replay_embedder)[name]

    answer = method.answer("Who leads the Kestrel Bay Marine Institute?")

    assert answer.text and answer.contexts and answer.sources
    assert answer.usage.calls == fake_llm.calls >= 1
    known = {f"text_unit:{i}" for i in index.text_units[S.ID]}
    known |= {f"entity:{i}" for i in index.entities[S.ID]}
    known |= {f"relationship:{i}" for i in index.relationships[S.ID]}
    known |= {f"report:{c}" for c in index.community_reports[S.COMMUNITY]}
    assert set(answer.sources) <= known, answer.sources
