"""The ``tax_doc`` extractor."""

from __future__ import annotations

import pytest

from charter_zh.tax_doc import TaxDocExtractor

TAX = TaxDocExtractor()

# text, item texts, normalised values
POSITIVE = [
    ("财税〔2023〕1号", ["财税〔2023〕1号"], ["财税〔2023〕1号"]),
    ("财税[2019]13号", ["财税[2019]13号"], ["财税〔2019〕13号"]),
    (
        "国家税务总局公告2019年第4号",
        ["国家税务总局公告2019年第4号"],
        ["国家税务总局公告2019年第4号"],
    ),
    (
        "根据财政部 税务总局公告2023年第12号规定",
        ["财政部 税务总局公告2023年第12号"],
        ["财政部 税务总局公告2023年第12号"],
    ),
    ("税总发〔2017〕124号", ["税总发〔2017〕124号"], ["税总发〔2017〕124号"]),
    ("根据财税〔2019〕13号文件", ["财税〔2019〕13号"], ["财税〔2019〕13号"]),
    ("最新财税〔2019〕13号", ["财税〔2019〕13号"], ["财税〔2019〕13号"]),  # 新 is no province here
    ("京财税〔2019〕5号", ["京财税〔2019〕5号"], ["京财税〔2019〕5号"]),
    ("财税（2019）第013号", ["财税（2019）第013号"], ["财税〔2019〕13号"]),
    ("国发【2020】5号", ["国发【2020】5号"], ["国发〔2020〕5号"]),
    (
        "财政部、税务总局 公告 2023 年第 12 号",
        ["财政部、税务总局 公告 2023 年第 12 号"],
        ["财政部 税务总局公告2023年第12号"],
    ),
    ("国家税务总局令第48号", ["国家税务总局令第48号"], ["国家税务总局令第48号"]),
    (
        "财税〔2019〕13号和国家税务总局公告2019年第4号",
        ["财税〔2019〕13号", "国家税务总局公告2019年第4号"],
        ["财税〔2019〕13号", "国家税务总局公告2019年第4号"],
    ),
    # right after a link: an address is ASCII, so it ends before the issuer
    (
        "原文https://www.chinatax.gov.cn/财税〔2019〕13号",
        ["财税〔2019〕13号"],
        ["财税〔2019〕13号"],
    ),
]


@pytest.mark.parametrize(("text", "texts", "values"), POSITIVE)
def test_tax_doc_finds(text: str, texts: list[str], values: list[str]) -> None:
    items = TAX.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values


NEGATIVE = [
    "财税〔19〕13号",  # two-digit year
    "财税〔2019〕十三号",  # Chinese numerals
    "订单号12345",
    "XX〔2019〕13号",  # unknown issuer
    "财税政策2019年第4号",
    "公告2019年第4号",  # no issuing body
    "财税〔2019〕13",  # no 号
    "国家税务总局公告",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_tax_doc_leaves_alone(text: str) -> None:
    assert TAX.extract(text) == ()


CANONICAL = [
    ("财税[2019]13号", "财税〔2019〕13号"),
    ("财税〔2023〕1号", "财税〔2023〕1号"),
    ("税总函（2018）第 7 号", "税总函〔2018〕7号"),
    ("财政部、税务总局公告2023年第12号", "财政部 税务总局公告2023年第12号"),
    ("国家税务总局公告2019年4号", "国家税务总局公告2019年第4号"),
    ("国家税务总局令 第48号", "国家税务总局令第48号"),
]


@pytest.mark.parametrize(("written", "canonical"), CANONICAL)
def test_tax_doc_canonical(written: str, canonical: str) -> None:
    (item,) = TAX.extract(written)
    assert TAX.canonical(item) == canonical
