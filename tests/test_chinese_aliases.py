"""Chinese short forms (index/graph/aliases.py ``short_forms``): the merges the rules make on
real Chinese names from data/zh_demo and CMRC 2018's passages, the ones they must not make
(a parent organization, a sister university, a city's urban area, a short form that could
stand for two names, another document's namesake), and both index modes using them."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import REPO_ROOT
from test_graph import entity_mentions

from graphrag import schemas as S
from graphrag.index.extract.names import name_key
from graphrag.index.extract.nlp import extract_graph_nlp
from graphrag.index.graph.aliases import find_alias_pairs, short_forms
from graphrag.settings import IndexSettings
from graphrag.text.documents import chunk_documents, load_documents


def merged(documents: dict[str, tuple[str, list[tuple[str, str]]]]) -> dict:
    """Return short_forms over {document: (text, [(name, type)])}, one text unit each."""
    units = pd.DataFrame(
        {
            S.ID: list(documents),
            S.TEXT: [text for text, _ in documents.values()],
            S.DOCUMENT_IDS: [[document] for document in documents],
        }
    )
    names = [(d, name, kind) for d, (_, found) in documents.items() for name, kind in found]
    return short_forms(names, units)


@pytest.mark.parametrize(
    ("text", "short", "full", "rule"),
    [
        # data/zh_demo 01: the headline contracts the body's name
        (
            "青澜湾海藻合作社与浙江大学签约。舟山市青澜湾海藻养殖合作社成立于2015年。",
            ("青澜湾海藻合作社", "organization"),
            ("青澜湾海藻养殖合作社", "organization"),
            "start and head",
        ),
        # CMRC dev_77: 鑫诺卫星通信公司 for 鑫诺卫星通信有限公司
        (
            "服务于鑫诺卫星通信有限公司。11月28日，鑫诺卫星通信公司正式宣布发射成功。",
            ("卫星通信公司", "organization"),
            ("卫星通信有限公司", "organization"),
            "start and head",
        ),
        # a generic tail dropped; jieba tags 阿里巴巴 as a transliterated person name (nrt)
        (
            "阿里巴巴集团旗下的阿里云宣布投资。阿里巴巴表示看好碳汇市场。",
            ("阿里巴巴", "person"),
            ("阿里巴巴集团", "organization"),
            "generic tail",
        ),
        (
            "台风登陆浙江省舟山市。舟山渔民损失严重。",
            ("舟山", "geo"),
            ("舟山市", "geo"),
            "generic tail",
        ),
        # CMRC dev_72: the text says so, though 中建 is no prefix of the full name
        (
            "其子公司及上市公司是中国建筑股份有限公司 ()，简称中建、中建股份。",
            ("中建", "geo"),
            ("中国建筑股份有限公司", "organization"),
            "简称",
        ),
    ],
)
def test_a_short_form_merges_with_its_full_name(text, short, full, rule) -> None:
    assert merged({"d1": (text, [full, short])}) == {("d1", short[0]): (full[0], rule)}


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # a sister university: jieba's dictionary knows 北京大学 as a name of its own
        (
            "北京师范大学与北京大学联合招生。",
            [("北京大学", "organization"), ("北京师范大学", "organization")],
        ),
        # a parent organization is not its institute (the dropped part holds 大学 / 院)
        (
            "浙江大学海洋学院周明远团队与浙江大学合作。",
            [("浙江大学", "organization"), ("浙江大学海洋学院", "organization")],
        ),
        (
            "中国科学院海洋研究所研究员王丽华说，中国科学院支持这项研究。",
            [("中国科学院", "organization"), ("中国科学院海洋研究所", "organization")],
        ),
        # CMRC dev_21: the city is not its urban area
        (
            "津蓟铁路是联接天津市区和蓟州区的一条支线铁路，天津市交通委员会。",
            [("天津市", "geo"), ("天津市区", "geo")],
        ),
        # CMRC dev_306: 新都 could be 新都区 or the older 新都县
        (
            "位于新都区。明代新都县人杨慎，生于新都。",
            [("新都", "geo"), ("新都区", "geo"), ("新都县", "geo")],
        ),
        # a place is not the government seated in it (types differ, no generic tail)
        ("哈尔滨市政府位于哈尔滨市。", [("哈尔滨市", "geo"), ("哈尔滨市政府", "organization")]),
        # a common noun jieba tags as a place (都市/ns) is never a short form
        ("纽约都市区是美国最大的都市。", [("都市", "geo"), ("都市区", "geo")]),
    ],
)
def test_no_merge_where_the_short_form_names_something_else(text, names) -> None:
    assert merged({"d1": (text, names)}) == {}


def test_a_merge_holds_only_in_the_document_naming_both() -> None:
    found = merged(
        {
            "18_7f91d020": (
                "一期工程起于宝山区长江南路站，途径宝山、杨浦、浦东。",
                [("宝山区", "geo"), ("宝山", "geo")],
            ),
            "dev_308": (
                "宝山镇是辽宁省凤城市下辖的一个镇，宝山镇政府驻地红旗堡。",
                [("宝山", "geo")],
            ),
        }
    )
    assert found == {("18_7f91d020", "宝山"): ("宝山区", "generic tail")}


def test_llm_mentions_merge_the_chinese_short_form_and_leave_english_alone() -> None:
    mentions = entity_mentions(
        ("舟山市", "舟山市", "geo", "浙江省的地级市。", "u1"),
        ("舟山", "舟山", "geo", "台风登陆的地方。", "u1"),
        ("北京大学", "北京大学", "organization", "一所大学。", "u2"),
        ("北京师范大学", "北京师范大学", "organization", "另一所大学。", "u2"),
        ("Port Aldry", "port aldry", "geo", "A town.", "u3"),
        ("Port Aldry Town", "port aldry town", "geo", "The same town?", "u3"),
    )
    units = pd.DataFrame(
        {
            S.ID: ["u1", "u2", "u3"],
            S.TEXT: [
                "台风登陆浙江省舟山市。舟山渔民损失严重。",
                "北京师范大学与北京大学。",
                "Port Aldry Town.",
            ],
        }
    )
    pairs = find_alias_pairs(mentions, units)
    assert [(p.alias, p.canonical, p.rule, p.text_unit_id) for p in pairs] == [
        ("舟山", "舟山市", "generic tail", "u1")
    ]


def test_the_nlp_index_of_the_chinese_demo_merges_its_headline_short_form() -> None:
    documents = load_documents(REPO_ROOT / "data" / "zh_demo" / "docs").documents
    units = chunk_documents(documents, 600, 100)
    entities, relationships, _, _ = extract_graph_nlp(units, IndexSettings())
    long = "青澜湾海藻养殖合作社"
    assert "青澜湾海藻合作社" not in set(entities[S.TITLE])
    cooperative = entities[entities[S.NAME_KEY] == name_key(long)]
    assert set(cooperative[S.TITLE]) == {long} and set(cooperative[S.TYPE]) == {"organization"}
    # its headline mention (01_cooperative) counts for the full name; no self-loop is left
    first = units.loc[units[S.DOCUMENT_IDS].str[0] == "01_cooperative", S.ID].iloc[0]
    assert first in set(cooperative[S.TEXT_UNIT_ID])
    assert not (relationships["source_key"] == relationships["target_key"]).any()
