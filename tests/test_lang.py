"""The language modules (graphrag/text/lang): detection by script, sentences, search words and
Chinese names on hand-checked text, English exactly as bm25s tokenized it, BM25 over Chinese
passages through the query layer's tokenizer, and mixed-script names kept whole."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest

from graphrag.query.rankers import bm25_index, bm25_scores, descending, tokenize
from graphrag.settings import REPO_ROOT
from graphrag.text import lang
from graphrag.text.lang import chinese, english

DEMO_DOCS = sorted((REPO_ROOT / "data" / "kestrel_bay" / "docs").glob("*.md"))


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("The Kestrel Bay Marine Institute studies kelp.", "en"),
        ("舟山市青澜湾海藻养殖合作社成立于2015年。", "zh"),
        # a Chinese sentence with Latin-script names is Chinese ...
        ("BlueTide Energy首席执行官Sarah Collins在杭州表示，公司看好海洋碳汇市场。", "zh"),
        # ... an English one quoting a Chinese name is English
        ("Mao Zedong (毛泽东) was born in Shaoshan, Hunan, in 1893.", "en"),
        ("", "en"),
        ("2023", "en"),
    ],
)
def test_detect_goes_by_script_share(text: str, code: str) -> None:
    assert lang.detect(text) == code


def test_a_language_can_be_set_and_an_unknown_one_is_named() -> None:
    assert lang.words("Kelp 海带", language="en") == english.words("Kelp 海带")
    assert lang.sentences("第一句。第二句。", language="zh") == ["第一句。", "第二句。"]
    with pytest.raises(lang.UnknownLanguageError, match="'fr' has no module; known: en, zh"):
        lang.words("Bonjour", language="fr")


def test_english_words_are_bm25s_tokens_exactly() -> None:
    texts = [p.read_text(encoding="utf-8") for p in DEMO_DOCS]
    texts += ["Who wrote it? The 1,200 kelp-lines' O'Brien & co. ÉCOLE naïve", "", "a I"]
    expected = bm25s.tokenize(texts, stopwords="en", return_ids=False, show_progress=False)
    assert [english.words(t) for t in texts] == expected
    assert tokenize(texts) == expected


def test_english_sentences_are_unchanged() -> None:
    text = 'Dr. Okafor spoke. "We begin," she said! Was it 3 p.m.? # Heading\nNext line'
    assert english.sentences(text) == [
        "Dr.",
        "Okafor spoke.",
        '"We begin," she said!',
        "Was it 3 p.m.? # Heading",
        "Next line",
    ]


def test_chinese_sentences_end_at_chinese_marks_and_keep_their_quotes() -> None:
    text = (
        "林海燕说：“我们将扩大规模！”合作社有社员一百二十户；主要养殖海带……"
        "明年见？Hello there. This is English.\n标题行"
    )
    assert chinese.sentences(text) == [
        "林海燕说：“我们将扩大规模！”",
        "合作社有社员一百二十户；",
        "主要养殖海带……",
        "明年见？",
        "Hello there.",
        "This is English.",
        "标题行",
    ]


def test_chinese_words_are_segmented_and_latin_words_follow_the_english_rule() -> None:
    words = chinese.words("阿里巴巴集团的CEO在杭州宣布：KelpSense平台上线了！ＡＩ")
    assert words == [
        "阿里", "巴巴", "阿里巴巴", "集团", "ceo", "杭州", "宣布", "kelpsense", "平台", "上线", "ai"
    ]  # fmt: skip
    assert "的" not in words and "了" not in words  # stop words
    # the search cut keeps the long word and the words inside it
    assert {"华为", "公司", "华为技术有限公司"} <= set(chinese.words("华为技术有限公司"))


def test_full_width_punctuation_folds_to_ascii() -> None:
    assert chinese.fold_punctuation("（ＡＩ），２０２３！　好") == "(AI),2023! 好"
    assert chinese.fold_punctuation("《长津湖》。、“”") == "《长津湖》。、“”"


def test_chinese_names_with_types_and_mixed_script_names_whole() -> None:
    found = dict(
        chinese.names(
            "阿里巴巴集团旗下的阿里云与BlueTide Energy宣布投资，首席执行官Sarah Collins在杭州表示，"
            "浙江大学教授周明远在《海洋科学》发表论文。"
        )
    )
    assert found["阿里巴巴集团"] == "organization"  # a proper noun joined to its suffix
    assert found["BlueTide Energy"] == "concept"  # Latin-script names stay whole words
    assert found["Sarah Collins"] == "concept"
    assert found["杭州"] == "geo"
    assert found["周明远"] == "person"  # jieba cuts it 周 / 明远: the surname rule joins it
    assert found["海洋科学"] == "work"  # a 《title》
    assert "Energy" not in found and "Sarah" not in found


def test_jieba_keeps_its_cache_in_the_user_cache_folder() -> None:
    jieba = chinese._jieba()
    assert jieba.dt.initialized
    assert jieba.dt.tmp_dir.endswith("graphrag")


PASSAGES = [p.read_text(encoding="utf-8") for p in sorted(
    (REPO_ROOT / "data" / "zh_demo" / "docs").glob("*.md")
)]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("台风造成了多少损失？", "02_typhoon"),
        ("谁质疑了碳汇数据？", "06_dispute"),
        ("海带每公顷能吸收多少二氧化碳", "04_study"),
        ("KelpSense的数据接入了哪个县的监测系统？", "05_county"),
    ],
)
def test_bm25_ranks_the_right_chinese_passage_first(query: str, best: str) -> None:
    names = [p.stem for p in sorted((REPO_ROOT / "data" / "zh_demo" / "docs").glob("*.md"))]
    scores = bm25_scores(bm25_index(PASSAGES), len(PASSAGES), query)
    assert names[descending(scores)[0]] == best


def test_bm25_before_segmentation_found_nothing_in_chinese() -> None:
    """The old rule (bm25s's \\w\\w+) made each run of Chinese characters one word, so a
    question shared no word with the passage that answers it."""
    old = bm25s.tokenize(PASSAGES, stopwords="en", return_ids=False, show_progress=False)
    asked = bm25s.tokenize(["台风造成了多少损失？"], stopwords="en", return_ids=False)[0]
    assert not set(asked) & {w for words in old for w in words}
    scores = bm25_scores(bm25_index(PASSAGES), len(PASSAGES), "台风造成了多少损失？")
    assert np.count_nonzero(scores) >= 1
