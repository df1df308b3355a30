"""Per-hop evidence: which hop's gold paragraph each method's prompt held, per question."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from graphrag.settings import REPO_ROOT
from studies.hop_figures import plot_hop_evidence, telling_question
from workbench.eval.hops import (
    all_hops_found,
    found_table,
    has_decompositions,
    hop_evidence,
    hop_shares,
)
from workbench.eval.metrics import EvidenceIndex
from workbench.eval.questions import load_questions
from workbench.report.hop_tables import hops_section

PARAGRAPHS = {
    "p_film": "Blue Harbour is a 1961 film directed by Ana Lind.",
    "p_lind": "Ana Lind was born in Tromsø, a city in northern Norway.",
    "p_troms": "Tromsø has a population of 77,000 and hosts the Arctic university.",
    "p_other": "The river Elv runs past the old mill and into the fjord.",
}


def tiny_index() -> Index:
    """An index whose only table that matters here is text_units: one unit per paragraph."""
    units = pd.DataFrame(
        {
            S.ID: [f"u_{d}" for d in PARAGRAPHS],
            S.TEXT: list(PARAGRAPHS.values()),
            S.DOCUMENT_IDS: [[d] for d in PARAGRAPHS],
        }
    )
    empty = pd.DataFrame()
    return Index(Path("tiny"), empty, units, empty, empty, empty, empty, empty, empty)


def questions() -> pd.DataFrame:
    hop = [
        {"question": "Who directed Blue Harbour?", "answer": "Ana Lind", "support": "p_film"},
        {"question": "Where was #1 born?", "answer": "Tromsø", "support": "p_lind"},
        {"question": "Population of #2?", "answer": "77,000", "support": "p_troms"},
    ]
    return pd.DataFrame(
        {
            "id": ["q3", "q2", "flat"],
            "decomposition": [hop, hop[:2], []],
        }
    )


def record(question: str, method: str, *paragraphs: str, extra: str = "") -> dict:
    contexts = [f"[{i}] {PARAGRAPHS[p]}" for i, p in enumerate(paragraphs)]
    return {
        "question_id": question,
        "method": method,
        "contexts": contexts + ([extra] if extra else []),
    }


@pytest.fixture
def hops() -> pd.DataFrame:
    records = pd.DataFrame(
        [
            # naive reads the first hop's paragraph only (the one the question names).
            record("q3", "naive", "p_film", "p_other"),
            record("q2", "naive", "p_film"),
            # ppr follows the chain; on q3 it misses the last hop.
            record("q3", "ppr", "p_film", "p_lind"),
            record("q2", "ppr", "p_lind", "p_film"),
            # a summary that names the facts is not the paragraph: global finds no hop.
            record("q3", "global", extra="Ana Lind, born in Tromsø (population 77,000)."),
            record("q2", "global", extra="Blue Harbour was directed by Ana Lind."),
            record("flat", "naive", "p_other"),
        ]
    )
    return hop_evidence(records, questions(), EvidenceIndex(tiny_index()))


def test_each_hop_is_found_only_when_its_paragraph_was_in_the_prompt(hops: pd.DataFrame) -> None:
    found = {(r.question_id, r.method, r.hop): r.found for r in hops.itertuples()}
    assert found[("q3", "naive", 1)] == 1.0 and found[("q3", "naive", 2)] == 0.0
    assert found[("q3", "naive", 3)] == 0.0
    assert (found[("q3", "ppr", 1)], found[("q3", "ppr", 2)], found[("q3", "ppr", 3)]) == (
        1.0,
        1.0,
        0.0,
    )
    assert found[("q2", "ppr", 1)] == 1.0 and found[("q2", "ppr", 2)] == 1.0
    assert all(r.found == 0.0 for r in hops.itertuples() if r.method == "global")
    # A question without a decomposition gives no hop rows; every row knows its chain length.
    assert "flat" not in set(hops["question_id"])
    assert set(hops.loc[hops["question_id"] == "q3", "hops"]) == {3}
    assert list(hops.loc[(hops["question_id"] == "q3") & (hops["method"] == "ppr"), "support"]) == [
        "p_film",
        "p_lind",
        "p_troms",
    ]


def test_shares_per_hop_position_count_only_questions_with_that_hop(hops: pd.DataFrame) -> None:
    shares = hop_shares(hops)
    assert list(shares["method"].drop_duplicates()) == ["naive", "ppr", "global"]

    def share(method: str, hop: int) -> tuple[float, int]:
        row = shares[(shares["method"] == method) & (shares["hop"] == hop)].iloc[0]
        return float(row["found_mean"]), int(row["found_n"])

    assert share("naive", 1) == (1.0, 2) and share("naive", 2) == (0.0, 2)
    assert share("ppr", 2) == (1.0, 2)
    assert share("ppr", 3) == (0.0, 1)  # only q3 has a third hop
    assert share("global", 1) == (0.0, 2)


def test_found_table_and_whole_chains(hops: pd.DataFrame) -> None:
    marks = found_table(hops)
    assert list(marks.columns) == ["naive", "ppr", "global"]
    assert marks.loc["q3", "naive"] == "✓✗✗"
    assert marks.loc["q3", "ppr"] == "✓✓✗"
    assert marks.loc["q2", "ppr"] == "✓✓"
    chains = all_hops_found(hops)
    assert chains.loc["q2", "ppr"] == 1.0 and chains.loc["q3", "ppr"] == 0.0
    assert chains["naive"].sum() == 0.0
    # A method that did not answer a question (recorded on the first ones only) shows a dash.
    fewer = found_table(hops[~((hops["method"] == "ppr") & (hops["question_id"] == "q3"))])
    assert fewer.loc["q3", "ppr"] == "—" and fewer.loc["q2", "ppr"] == "✓✓"


def test_a_hop_without_a_support_paragraph_is_not_applicable() -> None:
    steps = [{"question": "a", "support": "p_film"}, {"question": "b"}]
    frame = pd.DataFrame({"id": ["q"], "decomposition": [steps]})
    rows = hop_evidence(
        pd.DataFrame([record("q", "naive", "p_film")]), frame, EvidenceIndex(tiny_index())
    )
    assert rows["found"].iloc[0] == 1.0 and math.isnan(rows["found"].iloc[1])
    assert found_table(rows).loc["q", "naive"] == "✓·"
    assert all_hops_found(rows).loc["q", "naive"] == 1.0


def test_section_prints_shares_with_n_and_the_per_question_marks(hops: pd.DataFrame) -> None:
    text = "\n".join(hops_section(hops))
    assert text.startswith("## Evidence per hop")
    assert "| Method | hop 1 | hop 2 | hop 3 |" in text
    assert "| ppr | 1.000 [1.000, 1.000] (n=2) | 1.000 [1.000, 1.000] (n=2) | 0.000" in text
    assert "| q3 | ✓✗✗ | ✓✓✗ | ✗✗✗ |" in text
    assert "degraded" not in text
    assert hops_section(hops.iloc[0:0]) == []


def test_a_degraded_answer_is_marked_in_the_per_question_table(hops: pd.DataFrame) -> None:
    text = "\n".join(hops_section(hops, degraded={("q3", "global")}))
    assert "| q3 | ✓✗✗ | ✓✓✗ | ✗✗✗ (degraded) |" in text
    assert text.count("(degraded)") == 2, "the one cell, and the note under the table"
    assert "hop 1 first; (degraded) a degraded answer):" in text


def test_benchmark_sets_have_decompositions_and_the_demo_has_none() -> None:
    musique = load_questions(REPO_ROOT / "data" / "musique" / "questions.jsonl")
    demo = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
    assert has_decompositions(musique) and not has_decompositions(demo)


def test_real_demo_answers_per_hop_agree_with_their_evidence_recall(demo_index) -> None:
    """Real data: the committed demo answers and the demo index. Each multi-hop question's
    support documents, taken as its hops, are found exactly as evidence recall counted them."""
    records = pd.read_parquet(REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet")
    asked = load_questions(REPO_ROOT / "data" / "kestrel_bay" / "questions.jsonl")
    asked = asked[asked["id"].isin(records["question_id"]) & (asked["type"] == "multi_hop")]
    chained = asked.assign(
        decomposition=asked["support"].map(
            lambda docs: [{"question": f"hop {i}", "support": d} for i, d in enumerate(docs)]
        )
    )
    rows = hop_evidence(records, chained, EvidenceIndex(demo_index))
    assert len(rows) == sum(len(s) for s in chained["support"]) * records["method"].nunique()
    mean_found = rows.groupby(["question_id", "method"])["found"].mean()
    recall = records.set_index(["question_id", "method"])["evidence_recall"]
    assert mean_found.to_dict() == pytest.approx(recall.loc[mean_found.index].to_dict())
    # The demo's multi-hop answers differ per hop: not every hop of every method is found.
    assert 0.0 < rows["found"].mean() < 1.0


def test_hop_plot_draws_one_bar_per_method_and_hop_with_its_n(hops: pd.DataFrame) -> None:
    figure = plot_hop_evidence(hop_shares(hops))
    axes = figure.axes[0]
    heights = [round(patch.get_height(), 3) for patch in axes.patches]
    # hops 1 and 2 for three methods, hop 3 (q3 only) for three: 9 bars, in method order.
    assert heights == [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    assert [t.get_text() for t in axes.get_xticklabels()] == [
        "hop 1\n(n=2)",
        "hop 2\n(n=2)",
        "hop 3\n(n=1)",
    ]


def test_the_committed_musique_report_holds_hops_that_agree_with_its_records() -> None:
    """Real data: the MuSiQue report written by `eval` (records, hops.csv and summary.md).
    Each answer's hops are its question's decomposition, and the share of distinct hop
    paragraphs found is the evidence recall computed from the same contexts."""
    folder = REPO_ROOT / "reports" / "musique"
    records = pd.read_parquet(folder / "records.parquet")
    hops = pd.read_csv(folder / "hops.csv")
    asked = load_questions(REPO_ROOT / "data" / "musique" / "questions.jsonl").set_index("id")
    for (question, _method), rows in hops.groupby(["question_id", "method"], sort=False):
        steps = asked.loc[question, "decomposition"]
        assert list(rows["hop"]) == list(range(1, len(steps) + 1))
        assert list(rows["support"]) == [step["support"] for step in steps]
    assert len(hops.groupby(["question_id", "method"])) == len(records)
    distinct = hops.drop_duplicates(["question_id", "method", "support"])
    found = distinct.groupby(["question_id", "method"])["found"].mean()
    recall = records.set_index(["question_id", "method"])["evidence_recall"]
    assert found.to_dict() == pytest.approx(recall.loc[found.index].to_dict())
    # The report prints them, with global search finding no hop (it reads summaries only).
    assert "## Evidence per hop" in (folder / "summary.md").read_text()
    assert (hops.loc[hops["method"] == "global", "found"] == 0.0).all()


def test_the_question_shown_hop_by_hop_is_one_where_methods_differ(hops: pd.DataFrame) -> None:
    # q3 comes first and the methods differ on its hop 2 (ppr found it, naive did not).
    assert telling_question(hops) == "q3"
    agreeing = hops[hops["method"] == "global"]
    assert telling_question(agreeing) == "q3"  # no split: the first with a missed hop
    found_everywhere = hops[(hops["method"] == "ppr") & (hops["question_id"] == "q2")]
    assert telling_question(found_everywhere) == "q2"
    # A method that did not answer q3 (recorded on fewer questions) moves the choice to q2,
    # which every method answered, so the hop-by-hop view has a mark for each of them.
    without = hops[~((hops["method"] == "naive") & (hops["question_id"] == "q3"))]
    assert telling_question(without) == "q2"
