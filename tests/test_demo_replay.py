"""The committed recordings reproduce: the demo index and the demo answers of every method
replay from data/llm_cache alone, with no model and no endpoint (a miss is an error)."""

from __future__ import annotations

import pytest
from conftest import ANSWERED_ON_DEFAULTS, index_texts

from graphrag import schemas as S
from graphrag.index.extract.quality import extraction_quality, load_gold_graph
from graphrag.index.store import Index
from graphrag.llm.client import ChatLLM
from graphrag.query.registry import METHODS, OPT_IN_METHODS, make_methods
from graphrag.settings import REPO_ROOT
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import load_questions

DEMO = REPO_ROOT / "data" / "kestrel_bay"
QUESTIONS = load_questions(DEMO / "questions.jsonl").set_index("id")
REPLAYED_QUESTIONS = ["q01", "q11", "q19"]  # the first of each type: a local, multi-hop, global


def test_demo_index_replays_from_the_recorded_cache_alone(demo_index: Index) -> None:
    stages = demo_index.manifest["summary"]["stages"]
    assert sum(s["calls"] for s in stages.values()) > 0
    for name, stage in stages.items():
        assert stage["calls"] == stage["cache_hits"], f"stage {name} made live calls"
    assert demo_index.manifest["summary"]["failed"] == []
    assert set(demo_index.documents[S.ID]) == {p.stem for p in (DEMO / "docs").glob("*.md")}


def test_demo_index_has_a_graph_with_reported_communities(demo_index: Index) -> None:
    assert len(demo_index.entities) >= 20
    assert len(demo_index.relationships) > 0
    communities = demo_index.communities
    level0 = set(communities.loc[communities[S.LEVEL] == 0, S.COMMUNITY])
    assert len(level0) >= 1
    reports = demo_index.community_reports
    assert level0 <= set(reports.loc[reports[S.LEVEL] == 0, S.COMMUNITY])
    assert all(text.strip() for text in reports[S.FULL_CONTENT])
    assert set(reports[S.COMMUNITY]) == set(communities[S.COMMUNITY])


def test_demo_extraction_finds_most_gold_entities(demo_index: Index) -> None:
    gold = load_gold_graph(DEMO / "gold_graph.json")
    quality = extraction_quality(demo_index.entities, demo_index.relationships, gold)
    assert quality.entity_recall >= 0.5, quality.render()


# The default methods, and the opt-in ones whose demo answers are recorded (on the defaults).
REPLAYED_METHODS = [*METHODS, *(m for m in OPT_IN_METHODS if m in ANSWERED_ON_DEFAULTS)]


@pytest.mark.parametrize("name", REPLAYED_METHODS)
@pytest.mark.parametrize("qid", REPLAYED_QUESTIONS)
def test_recorded_demo_answers_replay(
    demo_index: Index, replay_settings, replay_embedder, name: str, qid: str
) -> None:
    index, settings = demo_index, replay_settings
    method = make_methods(index, [name], settings, ChatLLM(settings), replay_embedder)[name]
    question = QUESTIONS.loc[qid, "question"]
    answer = method.answer(question)

    assert answer.text.strip()
    assert answer.contexts and all(c.strip() for c in answer.contexts)
    assert answer.sources
    assert answer.usage.calls == answer.usage.cache_hits > 0, "every call came from the cache"
    known = index_texts(index)
    assert set(answer.sources) <= set(known), "every source is a row of the index"
    assert set(answer.cited) <= set(answer.sources)
    # the router answers with the method of the question's kind
    answered_by = answer.route.split(" -> ")[-1] if name == "router" else name
    if answered_by == "global":
        # Global sources are reports of the level it maps (the level the data chooses, rolled
        # up); its contexts what the map read of the reports the kept points came from: the
        # report's text, and under an LLM-written one its entities' facts
        # (query.global.report_facts_tokens), never anything else.
        global_search = method.method("global") if name == "router" else method
        mapped = global_search.level_reports(question)[S.COMMUNITY]
        assert set(answer.sources) <= {f"report:{c}" for c in mapped}
        assert len(answer.contexts) == len(answer.sources)
        for context, source in zip(answer.contexts, answer.sources, strict=True):
            report, _, facts = context.partition("\n\nFacts:\n")
            assert report == known[source]
            assert all(line.startswith("- ") for line in facts.splitlines())
        assert any("\n\nFacts:\n" in c for c in answer.contexts), "facts are read"
        assert answer.ranking == []  # it ranks no text units
    elif answered_by == "drift":
        # the intermediate answers the reduce read first, then the texts the steps read
        steps = len(answer.contexts) - len(answer.sources)
        assert steps >= 1 and answer.contexts[steps:] == [known[s] for s in answer.sources]
        assert answer.ranking == []
    else:
        assert answer.contexts == [known[s] for s in answer.sources]
        # The prompt held the text of some document, and the ranking is of text units.
        every_document = list(index.documents[S.ID])
        assert EvidenceIndex(index).documents_read(answer.contexts, every_document)
        assert answer.ranking and all(r.startswith("text_unit:") for r in answer.ranking)
