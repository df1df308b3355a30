"""Judge-free metrics pinned on hand-made cases whose right value is known, and checked over the
real recorded demo answers (the committed report's records) by a second route."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from graphrag import schemas as S
from graphrag.index.extract.quality import load_gold_graph
from graphrag.index.store import Index
from graphrag.settings import REPO_ROOT
from workbench.eval.metrics import (
    RECALL_K,
    CorpusTerms,
    EvidenceIndex,
    answer_tokens,
    exact_match,
    final_answer,
    fold_terms,
    gold_entities_of,
    gold_entity_reach,
    grounded_sentences,
    holds_term,
    judge_free_columns,
    keyword_hit_rate,
    normalize_answer,
    token_f1,
    unasked,
)
from workbench.eval.questions import load_questions

DEMO = REPO_ROOT / "data" / "kestrel_bay"
COMMITTED = REPO_ROOT / "reports" / "kestrel_bay" / "records.parquet"


def unit(index: Index, document: str) -> tuple[str, str]:
    """Return (id, text) of the first text unit of ``document``."""
    units = index.text_units
    for unit_id, text, docs in zip(units[S.ID], units[S.TEXT], units[S.DOCUMENT_IDS], strict=True):
        if document in docs:
            return unit_id, text
    raise AssertionError(document)


# --------------------------------------------------------------------------- short answers


def test_an_answer_equal_to_an_alias_is_an_exact_match() -> None:
    references = ["G. Stanley Hall", "Stanley Hall"]
    assert exact_match("Stanley Hall", references) == 1.0
    assert exact_match("the G. Stanley Hall.", references) == 1.0  # article and punctuation
    assert exact_match("Hall", references) == 0.0
    assert token_f1("Stanley Hall", references) == 1.0


def test_token_f1_by_hand() -> None:
    # prediction tokens: stanley hall was president; gold: g stanley hall -> 2 in common
    assert token_f1("Stanley Hall was president", ["G. Stanley Hall"]) == pytest.approx(4 / 7)
    assert token_f1("Karl Renner", ["G. Stanley Hall"]) == 0.0
    assert token_f1("the", ["a"]) == 1.0  # both normalize to nothing
    assert normalize_answer("The  Lake, an Island!") == "lake island"


def test_the_final_answer_line_is_what_em_scores() -> None:
    text = "The journal is published by the APA [1]. Its first president was Hall [2].\n"
    assert final_answer(text + "Answer: G. Stanley Hall") == "G. Stanley Hall"
    assert final_answer(text + "**Answer:** G. Stanley Hall") == "G. Stanley Hall"
    assert final_answer("answer: 35\n") == "35"
    assert final_answer(text) == text.strip()  # no line: the whole answer is scored
    assert exact_match(final_answer(text + "Answer: Stanley Hall"), ["G. Stanley Hall"]) == 0.0


# --------------------------------------------------------------------------- keywords


@pytest.mark.parametrize(
    ("answer", "keyword", "hit"),
    [
        ("an emergency plan", "merge", 0.0),  # inside a longer word
        ("The KelpSense buoys", "kelp", 0.0),
        ("a whale was seen", "Hale", 0.0),
        ("In 14 days", "4", 0.0),
        ("by 2031", "31", 0.0),
        ("about 4.5 tonnes", "4", 0.0),  # a number inside a decimal
        ("about 0.4 tonnes", "4", 0.0),
        ("on 4 March", "4", 1.0),
        ("merge them", "merge", 1.0),
        ("About 30,000 salmon", "30000", 1.0),  # digit-group commas are ignored
        ("About 30000 salmon", "30,000", 1.0),
        ("It weighed 1,250.5 kg.", "1250.5", 1.0),
        ("It weighed 1250.5 kg.", "1,250.5", 1.0),
        ("It weighed 1,250.5 kg.", "250.5", 0.0),
        ("Items 1,2 and 3.", "12", 0.0),  # "1,2" is no thousands separator
        ("SALTMERE University", "saltmere", 1.0),  # case
        ("ＫＥＬＰ farms", "kelp", 1.0),  # NFKC folds full-width letters
        ("STRASSE", "straße", 1.0),  # casefold, not lower
        ("The Regional\n  Council agreed.", "regional council", 1.0),  # several words
        ("The Regional Councillor", "regional council", 0.0),
        ("born at St. Mary's hospital", "St. Mary's", 1.0),  # punctuation inside a keyword
        ("born at St. Mary’s hospital", "St. Mary's", 1.0),  # a curly apostrophe
        ("the U.S. navy", "U.S.", 1.0),
        ("in the U.S.", "U.S.", 1.0),
        ("the USSR", "U.S.", 0.0),
        ("a kelp-forest survey", "kelp", 1.0),  # hyphens separate words
        ("a kelp-forest survey", "kelp-forest", 1.0),
        ("Tidewell's farm", "Tidewell", 1.0),  # a possessive names the word
    ],
)
def test_keywords_are_found_as_whole_words(answer: str, keyword: str, hit: float) -> None:
    assert keyword_hit_rate(answer, [keyword]) == hit
    assert CorpusTerms([answer]).holds(keyword) == bool(hit)  # one rule for both
    assert holds_term(fold_terms(answer), keyword) == bool(hit)


def test_keyword_hit_rate_is_the_share_of_keywords_found() -> None:
    assert keyword_hit_rate("an emergency plan", ["merge"]) == 0
    assert keyword_hit_rate("In 1998 it was founded.", ["1998", "Saltmere", "Council"]) == 1 / 3
    assert math.isnan(keyword_hit_rate("Any answer at all.", []))
    assert not holds_term(fold_terms("anything"), " ")  # an empty keyword is never found


# --------------------------------------------------------------------------- retrieval


def test_a_context_holding_one_of_two_supporting_documents_scores_half(
    demo_index: Index,
) -> None:
    evidence = EvidenceIndex(demo_index)
    _, storm = unit(demo_index, "03_storm_corvin")
    support = ["03_storm_corvin", "07_lawsuit_filed"]
    assert evidence.evidence_recall([storm], support) == 0.5
    assert evidence.evidence_recall(["[1] " + " ".join(storm.split())], support) == 0.5
    assert evidence.evidence_recall([storm, unit(demo_index, "07_lawsuit_filed")[1]], support) == 1
    assert evidence.evidence_recall([], support) == 0.0
    assert math.isnan(evidence.evidence_recall([storm], []))


def test_reports_and_entity_descriptions_are_not_evidence(demo_index: Index) -> None:
    """Text the model wrote about a document does not count as having read the document."""
    evidence = EvidenceIndex(demo_index)
    reports = list(demo_index.community_reports[S.FULL_CONTENT])
    descriptions = list(demo_index.entities[S.DESCRIPTION])
    every_document = sorted({d for docs in demo_index.text_units[S.DOCUMENT_IDS] for d in docs})
    assert evidence.evidence_recall(reports + descriptions, every_document) == 0.0


def test_recall_at_k_counts_only_the_first_k_ranked(demo_index: Index) -> None:
    evidence = EvidenceIndex(demo_index)
    support = ["03_storm_corvin", "07_lawsuit_filed"]
    storm, lawsuit = (f"text_unit:{unit(demo_index, d)[0]}" for d in support)
    others = [
        f"text_unit:{u}"
        for u, docs in zip(
            demo_index.text_units[S.ID], demo_index.text_units[S.DOCUMENT_IDS], strict=True
        )
        if not set(docs) & set(support)
    ]
    assert evidence.recall_at_k([storm, *others], support, RECALL_K) == 0.5
    ranking = [*others[: RECALL_K - 1], lawsuit, storm]
    assert evidence.recall_at_k(ranking, support, RECALL_K) == 0.5
    assert evidence.recall_at_k(ranking, support, RECALL_K + 1) == 1.0
    assert evidence.recall_at_k([], support) == 0.0


def test_gold_entities_are_the_reference_s_minus_the_question_s() -> None:
    gold = load_gold_graph(DEMO / "gold_graph.json")
    questions = load_questions(DEMO / "questions.jsonl").set_index("id")
    q = questions.loc["q07"]
    names = [e[0] for e in gold_entities_of(q["question"], q["reference"], gold)]
    assert names == ["Nadia Fenwick"]  # "Seagrass Guardians" is named by the question
    q01 = questions.loc["q01"]
    names = [e[0] for e in gold_entities_of(q01["question"], q01["reference"], gold)]
    # "KBMI" is an alias of the institute the question names; "Kestrel Bay" inside
    # "Kestrel Bay Regional Council" is not a mention.
    assert names == ["Saltmere University", "Kestrel Bay Regional Council"]
    assert gold_entities_of("Who founded Seagrass Guardians?", "Seagrass Guardians.", gold) == []
    assert unasked([["Karl Renner"], ["Vienna"]], "Where did Karl Renner die?") == [["Vienna"]]


def test_listed_gold_entities_leave_out_those_the_question_names(demo_index: Index) -> None:
    questions = pd.DataFrame(
        [
            {
                "id": "m1",
                "question": "Where was Karl Renner born?",
                "reference": "Unter-Tannowitz",
                "support": [],
                "answer_keywords": [],
                "gold_entities": ["Karl Renner", "Moravia"],
            },
            {
                "id": "m2",
                "question": "Who was Karl Renner?",
                "reference": "A chancellor",
                "support": [],
                "answer_keywords": [],
                "gold_entities": ["Karl Renner"],
            },
        ]
    )
    records = records_frame(
        [
            {"question_id": q, "method": "naive", "answer": "x", "contexts": ["Karl Renner."]}
            for q in ("m1", "m2")
        ]
    )
    reach = judge_free_columns(records, questions, demo_index)["gold_entity_reach"]
    assert reach.iloc[0] == 0.0  # only Moravia counts, and the context does not name it
    assert math.isnan(reach.iloc[1])  # every gold entity is the question's own: no score

    entities = [["Nadia Fenwick", "Fenwick"], ["Seagrass Guardians"]]
    assert gold_entity_reach(["Lawyer Fenwick filed it."], entities) == 0.5
    assert gold_entity_reach(["Fenwickson filed it."], entities) == 0.0  # whole words only
    assert gold_entity_reach(["The Seagrass Guardians case."], [["Seagrass"], *entities]) == 1 / 3
    assert math.isnan(gold_entity_reach(["anything"], []))


# --------------------------------------------------------------------------- records


def records_frame(rows: list[dict]) -> pd.DataFrame:
    base = {"answer_error": None, "contexts": [], "ranking": []}
    return pd.DataFrame([{**base, **row} for row in rows])


def test_a_failed_answer_scores_zero_and_short_sets_get_em(demo_index: Index, tmp_path) -> None:
    questions = load_questions(DEMO / "questions.jsonl")
    _, storm = unit(demo_index, "03_storm_corvin")
    records = records_frame(
        [
            {
                "question_id": "q03",
                "method": "naive",
                "answer": "About 30000, off Corran.",
                "contexts": [storm],
            },
            {
                "question_id": "q03",
                "method": "local",
                "answer": "",
                "answer_error": "RuntimeError: boom",
            },
            {
                "question_id": "q01",
                "method": "local",
                "answer": "In 1998.",
                "ranking": [f"text_unit:{unit(demo_index, '01_kbmi_profile')[0]}"],
            },
            {"question_id": "q01", "method": "global", "answer": "", "answer_error": "boom"},
        ]
    )
    scored = judge_free_columns(records, questions, demo_index)
    assert scored.loc[2, f"recall_at_{RECALL_K}"] == 1.0
    # Global ranks no text units: recall@k does not apply to it, failed or not.
    assert math.isnan(scored.loc[3, f"recall_at_{RECALL_K}"])
    assert scored.loc[3, "evidence_recall"] == 0.0
    assert scored.loc[0, "keyword_hit_rate"] == 1.0 and scored.loc[0, "evidence_recall"] == 1.0
    failed = scored.loc[1]
    assert failed["keyword_hit_rate"] == failed["evidence_recall"] == 0.0
    assert failed["grounded_sentences"] == 0.0  # the demo says "30,000" and "Corran Island"
    assert scored.loc[0, "grounded_sentences"] == scored.loc[2, "grounded_sentences"] == 1.0
    assert failed[f"recall_at_{RECALL_K}"] == 0.0
    # The demo's references are sentences: EM and F1 do not apply (NaN), even to a failure.
    assert math.isnan(failed["exact_match"]) and math.isnan(failed["token_f1"])
    assert "keyword_hit_rate" not in records.columns  # the input is left as it was

    short = questions.copy()
    short["aliases"] = [["Corran"] if q == "q03" else [] for q in short["id"]]
    short["answer_format"] = "short"
    records.loc[0, "answer"] = "Two pens broke apart [1].\nAnswer: Corran"
    scored = judge_free_columns(records, short, demo_index)
    assert scored.loc[0, "exact_match"] == 1.0 and scored.loc[0, "short_answer"] == "Corran"
    assert scored.loc[1, "exact_match"] == 0.0 and scored.loc[1, "token_f1"] == 0.0


def test_grounded_sentences_counts_sentences_naming_only_what_the_corpus_or_question_holds() -> (
    None
):
    corpus = CorpusTerms(["Tidewell Aquaculture lost 30,000 salmon at Corran Island in 2021."])
    question = "What did the Gull Point farm lose?"
    assert grounded_sentences("Tidewell's pens broke. It lost 30000 salmon.", corpus) == 1.0
    # An invented town and a year no document holds: one sentence of two fails.
    answer = "Tidewell lost salmon in 2021. The storm hit Cliftonport in 2012."
    assert grounded_sentences(answer, corpus) == 0.5
    # "Gull Point" is the question's: repeating it invents nothing; a bare list number and
    # bold are no names; case does not matter; a whole word only ("Corran" is not "Corr").
    listed = "1. **Gull Point** lost nothing.\n2. corran island was hit. It hit Corr Island too."
    assert grounded_sentences(listed, corpus, question) == pytest.approx(2 / 3)
    assert math.isnan(grounded_sentences("", corpus))


# --------------------------------------------------------------------------- real answers


@pytest.fixture(scope="module")
def committed() -> pd.DataFrame:
    return pd.read_parquet(COMMITTED)


def test_recorded_naive_evidence_recall_matches_its_text_unit_sources(
    demo_index: Index, committed: pd.DataFrame
) -> None:
    """For text-unit methods the contexts are the units: both routes must give one number."""
    questions = load_questions(DEMO / "questions.jsonl").set_index("id")
    docs_of = dict(
        zip(demo_index.text_units[S.ID], demo_index.text_units[S.DOCUMENT_IDS], strict=True)
    )
    rows = committed[committed["method"].isin(["naive", "hyde", "multi_query", "local"])]
    assert len(rows) > 0
    for row in rows.itertuples(index=False):
        support = questions.loc[row.question_id, "support"]
        units = [s.removeprefix("text_unit:") for s in row.sources if s.startswith("text_unit:")]
        read = {d for u in units for d in docs_of[u]}
        expected = sum(1 for d in support if d in read) / len(support)
        assert row.evidence_recall == pytest.approx(expected), (row.question_id, row.method)


def test_recorded_global_answers_read_no_document(committed: pd.DataFrame) -> None:
    rows = committed[committed["method"] == "global"]
    assert len(rows) > 0 and (rows["evidence_recall"] == 0.0).all()
    assert rows[f"recall_at_{RECALL_K}"].isna().all()  # it ranks no text units
    # Its map points still name gold entities on some questions.
    assert rows["gold_entity_reach"].max() > 0


def test_recorded_chunk_answers_are_grounded_and_global_ones_less(
    demo_index: Index, committed: pd.DataFrame
) -> None:
    """Naive RAG's recorded answers name only what the demo's documents name; global
    search's, written from model-written reports, name years and numbers no document holds
    in some answers ("founded in 2010"), and each such score is the check's own."""
    by_method = committed.groupby("method")["grounded_sentences"]
    assert by_method.min()["naive"] == 1.0
    assert by_method.mean()["global"] < 1.0
    corpus = CorpusTerms(demo_index.text_units[S.TEXT])
    flagged = committed[(committed["method"] == "global") & (committed["grounded_sentences"] < 1)]
    assert flagged["answer"].str.contains("2010").any()
    for row in flagged.itertuples(index=False):
        expected = grounded_sentences(row.answer, corpus, row.question)
        assert row.grounded_sentences == expected < 1.0


def test_recorded_local_search_no_longer_reaches_every_document(committed: pd.DataFrame) -> None:
    """The old retrieval_recall gave local 1.0 everywhere by counting reports' documents."""
    local = committed[committed["method"] == "local"]
    assert local["evidence_recall"].mean() < 1.0


# --------------------------------------------------------------------------- Chinese answers


@pytest.mark.parametrize(
    ("answer", "keywords", "rate", "old_rate"),
    [
        # Chinese has no spaces: the old whole-word rule found no keyword inside a sentence
        ("阿里巴巴集团今天在杭州宣布投资。", ["阿里巴巴", "杭州", "腾讯"], 2 / 3, 0.0),
        # a Latin-script name beside Chinese characters is still a whole word of its own
        ("监测平台名为KelpSense，由阿里云提供。", ["KelpSense", "Kelp"], 1 / 2, 0.0),
        ("海带每公顷每年吸收约10吨二氧化碳", ["10", "1"], 1 / 2, 0.0),
    ],
)
def test_keyword_hits_in_chinese_match_by_characters(
    answer: str, keywords: list[str], rate: float, old_rate: float
) -> None:
    assert keyword_hit_rate(answer, keywords) == pytest.approx(rate)
    old = sum(bool(re.search(rf"(?<!\w){re.escape(k)}(?!\w)", answer)) for k in keywords)
    assert old / len(keywords) == pytest.approx(old_rate)


@pytest.mark.parametrize(
    ("prediction", "reference", "em", "f1"),
    [
        ("北京。", "北京", 1.0, 1.0),  # old: 0 and 0 (。 is not ASCII punctuation)
        ("杭州市", "杭州", 0.0, 0.8),  # 杭州 of 杭州市: P 2/3, R 1; old F1 0 (one token each)
        ("浙江大学的周明远", "周明远", 0.0, 2 * (3 / 8) / (3 / 8 + 1)),  # P 3/8, R 1
        # sarah, collins, 在, 杭, 州: P 2/5, R 1
        ("Sarah Collins在杭州", "Sarah Collins", 0.0, 2 * (2 / 5) / (2 / 5 + 1)),
        ("《海洋科学》", "海洋科学", 1.0, 1.0),
        ("上海", "杭州", 0.0, 0.0),
    ],
)
def test_chinese_exact_match_and_f1_go_by_characters(
    prediction: str, reference: str, em: float, f1: float
) -> None:
    assert exact_match(prediction, [reference]) == em
    assert token_f1(prediction, [reference]) == pytest.approx(f1)


def test_the_old_rules_scored_chinese_answers_wrongly() -> None:
    """Before: SQuAD's ASCII punctuation and whitespace words, so "北京。" missed "北京" and
    "杭州市" scored F1 0 against "杭州" (one whole-answer token each)."""
    assert normalize_answer("北京。") != normalize_answer("北京")
    assert normalize_answer("杭州市").split() == ["杭州市"]
    assert (exact_match("北京。", ["北京"]), token_f1("杭州市", ["杭州"])) == (1.0, 0.8)


def test_english_short_answers_still_score_by_words() -> None:
    assert exact_match("The Kestrel Bay.", ["kestrel bay"]) == 1.0
    assert token_f1("in Kestrel Bay", ["Kestrel Bay"]) == pytest.approx(0.8)
    assert answer_tokens("Mara's 30,000 kelp-lines", by_character=False) == [
        "maras", "30000", "kelplines"
    ]  # fmt: skip
