"""Ranking metrics of the retrieval evaluation (MRR, nDCG@k), on hand-computed cases, and the
retrieval page that shows them per method and per question type."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.store import Index
from workbench.eval.metrics import EvidenceIndex
from workbench.report.retrieval_report import write_report

# u4 is a second chunk of paragraph A; u5 packs A and B into one unit
UNITS = {"u1": ["A"], "u2": ["B"], "u3": ["C"], "u4": ["A"], "u5": ["A", "B"]}


@pytest.fixture(scope="module")
def evidence() -> EvidenceIndex:
    units = pd.DataFrame(
        {
            S.ID: list(UNITS),
            S.TEXT: [f"text of {u}" for u in UNITS],
            S.DOCUMENT_IDS: list(UNITS.values()),
        }
    )
    empty = pd.DataFrame()
    return EvidenceIndex(Index(Path("tiny"), empty, units, *[empty] * 6))


def test_gold_ranks_credit_each_gold_document_once(evidence: EvidenceIndex) -> None:
    assert evidence.gold_ranks(["u3", "u1", "u4", "u2"], ["A", "B"]) == [2, 4]
    assert evidence.gold_ranks(["text_unit:u2", "text_unit:u1"], ["A", "B"]) == [1, 2]
    assert evidence.gold_ranks(["u5", "u1", "u2"], ["A", "B"]) == [1]


def test_reciprocal_rank_by_hand(evidence: EvidenceIndex) -> None:
    assert evidence.reciprocal_rank(["u3", "u1", "u4", "u2"], ["A", "B"]) == 0.5
    assert evidence.reciprocal_rank(["u2"], ["A", "B"]) == 1.0
    assert evidence.reciprocal_rank(["u3", "u3", "u3", "u4"], ["A"]) == 0.25
    assert evidence.reciprocal_rank(["u3"], ["A"]) == 0.0
    assert evidence.reciprocal_rank([], ["A"]) == 0.0
    assert math.isnan(evidence.reciprocal_rank(["u1"], []))


def test_ndcg_by_hand(evidence: EvidenceIndex) -> None:
    ideal_two = 1 + 1 / math.log2(3)  # two gold documents at ranks 1 and 2
    ranking = ["u3", "u1", "u4", "u2"]  # gold at ranks 2 and 4 (u4 repeats A: no gain)
    assert evidence.ndcg_at_k(ranking, ["A", "B"], 5) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / ideal_two
    )
    assert evidence.ndcg_at_k(ranking, ["A", "B"], 2) == pytest.approx(1 / math.log2(3) / ideal_two)
    assert evidence.ndcg_at_k(["u1", "u2", "u3"], ["A", "B"], 5) == pytest.approx(1.0)
    assert evidence.ndcg_at_k(["u2", "u1"], ["A", "B"], 1) == pytest.approx(1.0)
    # one unit holding both gold paragraphs is one relevant position of the two an ideal has
    assert evidence.ndcg_at_k(["u5"], ["A", "B"], 5) == pytest.approx(1 / ideal_two)
    # a gold paragraph no unit holds still counts in the ideal, as it does in recall's share
    assert evidence.ndcg_at_k(["u1"], ["A", "Z"], 5) == pytest.approx(1 / ideal_two)
    assert evidence.ndcg_at_k([], ["A"], 5) == 0.0
    assert math.isnan(evidence.ndcg_at_k(["u1"], [], 5))


def _records() -> pd.DataFrame:
    """Two methods on six questions of two types; ppr ranks the gold first on local ones."""
    rows = []
    for i in range(6):
        kind = "local" if i < 3 else "multi_hop"
        for method, rr in (("naive", 0.5), ("ppr", 1.0 if kind == "local" else 0.5)):
            rows.append(
                {
                    "question_id": f"q{i}",
                    "split": "test",
                    "type": kind,
                    "method": method,
                    "ranking": ["u1"],
                    "context_tokens": 100,
                    "llm_calls": 0,
                    "evidence_recall": 1.0,
                    "recall_at_2": rr,
                    "recall_at_5": 1.0,
                    "mrr": rr + (i % 2) * 0.1,
                    "ndcg_at_5": rr,
                }
            )
    return pd.DataFrame(rows)


def test_retrieval_page_shows_ranking_metrics_per_method_and_type(tmp_path: Path) -> None:
    out = tmp_path / "report"
    tests = write_report(out, _records(), pd.DataFrame(), {}, {"seed": 1, "n_resamples": 200})
    text = (out / "summary.md").read_text(encoding="utf-8")

    assert "| Method | Evidence recall | Recall@2 | Recall@5 | MRR | nDCG@5 |" in text
    assert {"mrr", "ndcg_at_5"} <= set(tests["metric"])
    section = text.split("## Scores by question type", 1)[1].split("\n## ", 1)[0]
    mrr = section.split("### MRR", 1)[1].split("###", 1)[0]
    assert "| Method | local | multi_hop |" in mrr
    # ppr − naive: +0.5 on every local question, 0 on every multi-hop one
    assert "| ppr − naive | +0.500 [+0.500, +0.500] | +0.000 [+0.000, +0.000] |" in mrr


def _reranked_records() -> pd.DataFrame:
    """naive and naive+rerank on four questions: q0 kept, q1 first two swapped, q2 the fifth
    and sixth swapped (another set of five), q3 the third and fourth swapped; hybrid has no
    reranked variant, so it gets no row."""
    first = ["a", "b", "c", "d", "e", "f"]
    orders = {
        "q0": first,
        "q1": ["b", "a", "c", "d", "e", "f"],
        "q2": ["a", "b", "c", "d", "f", "e"],
        "q3": ["a", "b", "d", "c", "e", "f"],
    }
    rows = []
    for qid, reranked in orders.items():
        for method, ranking, mrr, tokens in (
            ("naive", first, 0.5, 0),
            ("naive+rerank", reranked, 1.0 if qid == "q1" else 0.5, 6000),
            ("hybrid", first, 0.5, 0),
        ):
            rows.append(
                {
                    "question_id": qid,
                    "split": "test",
                    "type": "x",
                    "method": method,
                    "ranking": ranking,
                    "context_tokens": 100,
                    "prompt_tokens": tokens,
                    "llm_calls": int(tokens > 0),
                    "evidence_recall": 1.0,
                    "recall_at_2": 0.5,
                    "recall_at_5": 0.5,
                    "mrr": mrr,
                    "ndcg_at_5": 0.5,
                }
            )
    return pd.DataFrame(rows)


def test_the_page_says_what_the_rerank_stage_changed_against_its_own_first_stage(
    tmp_path: Path,
) -> None:
    write_report(tmp_path, _reranked_records(), pd.DataFrame(), {}, {"seed": 1, "n_resamples": 200})
    text = (tmp_path / "summary.md").read_text(encoding="utf-8")
    section = text.split("## What the rerank stage changed", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| naive+rerank")]
    # first unit changed on q1 only; order of the first five on q1, q2, q3; their set on q2
    assert rows == [
        "| naive+rerank | 4 | 1 / 4 | 3 / 4 | 1 / 4 | +0.125 [+0.000, +0.375] "
        "| +0.000 [+0.000, +0.000] | +0.000 [+0.000, +0.000] | 100 / 100 | 6,000 |"
    ]
    assert "| hybrid" not in section  # no reranked variant of hybrid: no row


def test_a_page_with_no_reranked_method_has_no_rerank_section(tmp_path: Path) -> None:
    write_report(tmp_path, _records(), pd.DataFrame(), {}, {"seed": 1, "n_resamples": 200})
    assert "rerank" not in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_the_rerank_counts_agree_with_real_rankings_and_scores() -> None:
    """GraphRAG-Bench's dev pilot (the live 1.5B reranker's recorded rankings): where the set
    of a question's first five did not change, its recall@5 cannot have; the counts the page
    prints are the ones read off the rankings here."""
    from workbench.report.rerank_tables import rerank_row

    pilot = Path(__file__).parents[1] / "reports/graphrag_bench_rerank/dev_pilot/retrieval.parquet"
    records = pd.read_parquet(pilot)
    for base in ("naive", "hybrid"):
        wide = records[records["method"].isin([base, f"{base}+rerank"])].pivot(
            index="question_id", columns="method"
        )
        same_set = [
            set(list(r[("ranking", base)])[:5]) == set(list(r[("ranking", f"{base}+rerank")])[:5])
            for _, r in wide.iterrows()
        ]
        r5 = wide["recall_at_5"]
        assert (r5[base][same_set] == r5[f"{base}+rerank"][same_set]).all()
        row = rerank_row(records, base, f"{base}+rerank", seed=1, n_resamples=200)
        assert row[1] == str(len(wide)) and row[4] == f"{same_set.count(False)} / {len(wide)}"
