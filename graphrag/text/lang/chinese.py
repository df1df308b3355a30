"""Chinese: sentences end at 。！？；… (and at English ends), words come from jieba, whose
dictionary ships inside its wheel (nothing is downloaded); names are its proper-noun tags.

jieba keeps a prefix-dictionary cache file; it goes to the user's cache folder (not a shared
temporary one), and jieba's start-up messages are silenced.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from pathlib import Path

from graphrag.text.lang import english

CODE = "zh"
HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN = re.compile(f"[{HAN_RANGES}]")
_SENTENCE = re.compile(r"[^。！？；…\n]+(?:[。！？；…]+[”’」』）)]*)?")
# Function words too common to rank by (a short list: BM25's idf weighs the rest).
STOP_WORDS = frozenset(
    """的 了 在 是 和 与 及 也 就 都 而 或 被 把 对 从 这 那 之 其 等 为 以 于 上 中 将 并 由
    向 着 又 但 所 则 其中 我 你 他 她 它 我们 你们 他们 她们 这个 那个 这些 那些 一个 已经 以及
    并且 因为 所以 如果 虽然 但是 而且 可以 没有 不 有 说 要 会 能 吗 呢 吧 啊""".split()
)
# jieba's proper-noun tags and the entity type each names.
NAME_TAGS = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "geo", "nt": "organization"}
# Words ending a proper noun's organization or place ("阿里巴巴" + "集团", "中国" + "船级社").
SUFFIX_TYPES = {
    **dict.fromkeys(
        """集团 公司 银行 大学 学院 研究院 研究所 中心 委员会 协会 学会 社 基金会 医院 政府 局 部
        实验室 俱乐部 工厂 电视台 日报""".split(),
        "organization",
    ),
    **dict.fromkeys("省 市 县 区 镇 乡 村 湾 港 岛 河 江 湖 山 路 街".split(), "geo"),
}
_SUFFIX = re.compile(f"(?:{'|'.join(sorted(SUFFIX_TYPES, key=len, reverse=True))})$")
# Tails a full name drops in its short form with no change of referent (舟山市 → 舟山,
# 阿里巴巴集团 → 阿里巴巴), and the entity type each marks: alias merging's prefix rule.
GENERIC_TAILS = {
    **dict.fromkeys("省 市 县 区 州 镇 乡 地区 自治区 自治州 特别行政区".split(), "geo"),
    **dict.fromkeys(
        "集团 公司 有限公司 集团公司 总公司 股份有限公司 有限责任公司 集团有限公司".split(),
        "organization",
    ),
}
_SUFFIX_REACH = 3  # words between a proper noun and its suffix ("青澜湾" 海藻 养殖 "合作社")
_INNER_TAGS = frozenset({"n", "vn", "l", "ns", "nt", "nz", "b", "j"})
# Single-character surnames jieba cuts from the given name ("周/nr 明远/a").
SURNAMES = frozenset(
    """王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 高 林 罗 郑 梁 谢 宋 唐 许 韩 冯 邓 曹
    彭 曾 肖 田 董 袁 潘 于 蒋 蔡 余 杜 叶 程 苏 魏 吕 丁 任 沈 姚 卢 姜 崔 钟 谭 陆 汪 范 金 石
    廖 贾 夏 韦 付 方 白 邹 孟 熊 秦 邱 江 尹 薛 闫 段 雷 侯 龙 史 陶 黎 贺 顾 毛 郝 龚 邵 万 钱
    严 覃 武 戴 莫 孔 向 汤""".split()
)
_GIVEN_TAGS = frozenset({"nr", "nrfg", "nrt", "a", "ng", "n"})
# Common nouns jieba's dictionary tags as names (城市/ns, 卫星/nr): never a name alone.
NOT_NAMES = frozenset("城市 都市 台风 海洋 海湾 海域 卫星 东 南 西 北 国家 地区 世界 全国".split())
# A bound morpheme or adjective jieba leaves before an unknown place ("青/a 澜湾/ns").
_PREFIX_TAGS = frozenset({"a", "ng"})
_TITLE = re.compile(r"《([^《》]{1,30})》")


@functools.cache
def _jieba():  # noqa: ANN202 - jieba has no types
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphrag"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        jieba.dt.tmp_dir = str(cache)
    except OSError:  # a read-only home: jieba's own default, the temporary folder
        pass
    jieba.initialize()
    return jieba


def suffix_type(name: str) -> str | None:
    """Return the entity type the organization or place word ending ``name`` marks (合作社:
    organization, 舟山市: geo), or None."""
    suffix = _SUFFIX.search(name)
    return SUFFIX_TYPES[suffix.group(0)] if suffix else None


def is_dictionary_word(word: str) -> bool:
    """Return whether jieba's dictionary holds ``word`` whole (北京大学 does, 青澜湾合作社 not;
    its table also lists every word's prefixes, with frequency 0)."""
    return _jieba().dt.FREQ.get(word, 0) > 0


def fold_punctuation(text: str) -> str:
    """Return ``text`` with full-width ASCII forms (，！？：；（）Ａ１) and the ideographic
    space folded to their ASCII forms; 。、《》“” stay, they have none."""
    return text.translate(_FULL_WIDTH)


_FULL_WIDTH = {0x3000: " ", **{c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}}


def sentences(text: str) -> list[str]:
    """Return the sentences of ``text``: after 。！？；… with their closing quotes, at line
    breaks, and at an English sentence end inside it."""
    return [s for p in _SENTENCE.findall(text) for s in english.sentences(p)]


def words(text: str) -> list[str]:
    """Return the search words of ``text``: jieba's search-engine cut (a long word and the
    shorter words inside it, so "华为" finds "华为技术有限公司"), stop words dropped; Latin-script
    runs follow the English rule, full-width letters and digits read as ASCII."""
    found = []
    for token in _jieba().cut_for_search(fold_punctuation(text)):
        token = token.strip()
        if HAN.search(token):
            if token not in STOP_WORDS:
                found.append(token)
        elif token:
            found += english.words(token)
    return found


def _suffix_end(tagged: list[tuple[str, str]], i: int) -> int:
    """Return the index of the word ending the organization or place that starts with the
    proper noun at ``i`` (``i`` itself when no suffix follows within reach)."""
    for j in range(i + 1, min(i + 1 + _SUFFIX_REACH, len(tagged))):
        word, flag = tagged[j]
        if flag not in _INNER_TAGS and word not in SUFFIX_TYPES:
            break
        suffix = _SUFFIX.search(word)
        if suffix and flag in NAME_TAGS and SUFFIX_TYPES[suffix.group(0)] == "geo":
            break  # a place of its own: "浙江省" then "舟山市"
        if suffix:
            return j
    return i


def _person(tagged: list[tuple[str, str]], i: int) -> bool:
    """Return whether words ``i`` and ``i + 1`` are a surname and its given name."""
    if i + 1 >= len(tagged):
        return False
    (word, flag), (given, given_flag) = tagged[i], tagged[i + 1]
    return (
        word in SURNAMES
        and flag in {"nr", "ng"}
        and 1 <= len(given) <= 2
        and HAN.fullmatch(given[0]) is not None
        and given_flag in _GIVEN_TAGS
    )


def names(sentence: str) -> list[tuple[str, str]]:
    """Return (name, entity type) for each name in ``sentence``: a 《title》, and jieba's
    person, place and organization words, joined to a given name after a surname and to an
    organization or place word after them (within three words); a run of capitalized
    Latin-script words is one name ("Alibaba Group")."""
    found = [(title, "work") for title in _TITLE.findall(sentence)]
    tagged = [(w, f) for w, f in _jieba().posseg.cut(_TITLE.sub(" ", sentence))]
    i = 0
    while i < len(tagged):
        word, flag = tagged[i]
        if _person(tagged, i):
            found.append((word + tagged[i + 1][0], "person"))
            i += 1
        elif flag in NAME_TAGS and word not in NOT_NAMES:
            if i > 0 and len(tagged[i - 1][0]) == 1 and tagged[i - 1][1] in _PREFIX_TAGS:
                word = tagged[i - 1][0] + word
            end = _suffix_end(tagged, i)
            if end > i:
                word += "".join(w for w, _ in tagged[i + 1 : end + 1])
                kind = suffix_type(word)
            else:
                kind = NAME_TAGS[flag]
            found.append((word, kind))
            i = end
        elif flag == "eng" and word[:1].isupper():
            while (
                i + 2 < len(tagged)
                and tagged[i + 1][0] == " "
                and tagged[i + 2][1] == "eng"
                and tagged[i + 2][0][:1].isupper()
            ):
                word, i = f"{word} {tagged[i + 2][0]}", i + 2
            found.append((word, "concept"))
        i += 1
    return found
