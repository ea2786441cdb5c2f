"""The ``drug`` extractor and its lexicon."""

from __future__ import annotations

import pytest

from charter_zh.lexicon import DrugExtractor, parse_lexicon

DRUG = DrugExtractor()

POSITIVE = [
    ("布洛芬缓释胶囊一天两次", ["布洛芬缓释胶囊"], ["布洛芬缓释胶囊"]),
    ("布洛芬", ["布洛芬"], ["布洛芬"]),
    ("服用Ibuprofen后", ["Ibuprofen"], ["布洛芬"]),
    ("扑热息痛和阿莫西林", ["扑热息痛", "阿莫西林"], ["对乙酰氨基酚", "阿莫西林"]),
    ("阿莫西林克拉维酸钾片", ["阿莫西林克拉维酸钾"], ["阿莫西林克拉维酸钾"]),
    ("对乙酰氨基酚", ["对乙酰氨基酚"], ["对乙酰氨基酚"]),
    ("头孢克肟不能与酒同服", ["头孢克肟"], ["头孢克肟"]),
    ("奥美拉唑、二甲双胍", ["奥美拉唑", "二甲双胍"], ["奥美拉唑", "二甲双胍"]),
    ("AMOXICILLIN 500mg", ["AMOXICILLIN"], ["阿莫西林"]),
    ("蒙脱石散和连花清瘟胶囊", ["蒙脱石散", "连花清瘟胶囊"], ["蒙脱石散", "连花清瘟胶囊"]),
    ("氯雷他定(loratadine)", ["氯雷他定", "loratadine"], ["氯雷他定", "氯雷他定"]),
    ("维生素C片", ["维生素C"], ["维生素C"]),
    ("布洛芬布洛芬缓释胶囊", ["布洛芬", "布洛芬缓释胶囊"], ["布洛芬", "布洛芬缓释胶囊"]),
]


@pytest.mark.parametrize(("text", "texts", "values"), POSITIVE)
def test_drug_finds(text: str, texts: list[str], values: list[str]) -> None:
    items = DRUG.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert all(DRUG.canonical(i) is None for i in items)


NEGATIVE = [
    "ibuprofenum",  # glued to more ASCII letters
    "xaspirin",
    "aspirin2",
    "维生素Cx",
    "请遵医嘱",
    "布洛",
    "insulinresistance",
    "",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_drug_leaves_alone(text: str) -> None:
    assert DRUG.extract(text) == ()


def test_lexicon_has_enough_drugs() -> None:
    assert len(set(DRUG.lexicon.values())) >= 80


def test_parse_lexicon_aliases_and_comments() -> None:
    names = parse_lexicon(
        ["# comment", "", "甲药|Alias A|别名  # trailing", "甲药缓释片", "乙药|别名"]
    )
    assert names == {
        "甲药": "甲药",
        "alias a": "甲药",
        "别名": "甲药",  # the first line to claim a form keeps it
        "甲药缓释片": "甲药缓释片",
        "乙药": "乙药",
    }


def test_custom_lexicon_longest_wins() -> None:
    drug = DrugExtractor({"甲乙": "甲乙", "甲乙丙": "甲乙丙", "乙丙丁": "乙丙丁"})
    assert [(i.text, i.value) for i in drug.extract("xx甲乙丙丁")] == [("甲乙丙", "甲乙丙")]
    assert DrugExtractor({}).extract("anything") == ()


@pytest.mark.parametrize(
    ("text", "texts"),
    [
        ("AsPiRiN", ["AsPiRiN"]),  # any ASCII case
        ("\u0130buprofen", []),  # İ is not I: case folding is ASCII-only
        ("Calcium Carbonate片", ["Calcium Carbonate"]),
        ("vitamin c和维生素C", ["vitamin c", "维生素C"]),
        ("aspirin-布洛芬", ["aspirin", "布洛芬"]),  # "-" is no ASCII letter or digit
    ],
)
def test_drug_case_and_boundaries(text: str, texts: list[str]) -> None:
    assert [i.text for i in DRUG.extract(text)] == texts


def test_custom_lexicon_one_character_names_and_case() -> None:
    drug = DrugExtractor({"甲": "甲", "甲乙": "甲乙", "Kx": "K药"})
    assert [i.text for i in drug.extract("甲乙甲丙")] == ["甲乙", "甲"]
    assert [(i.text, i.value) for i in drug.extract("用KX和kx")] == [("KX", "K药"), ("kx", "K药")]
    assert drug.extract("\u212ax") == ()
