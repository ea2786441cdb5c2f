"""``charter_zh.street``: street addresses written without their district."""

from __future__ import annotations

import pytest

from charter_zh.street import streets


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("寄到深南大道9988号", ["深南大道9988号"]),
        ("住在梅林路18号3栋2单元501室", ["梅林路18号3栋2单元501室"]),
        ("送到文三路华星大厦12楼", ["文三路华星大厦12楼"]),
        ("收货地址改成淮海中路100号", ["淮海中路100号"]),
        ("家住阳光花园3栋1201室", ["阳光花园3栋1201室"]),
        ("东城区南锣鼓巷8号", ["东城区南锣鼓巷8号"]),  # the district is the extractor's
        ("梅林路18号3栋2单元501", ["梅林路18号3栋2单元501"]),  # the room without 室
        ("旧址文三路90号，新址学府街5号", ["文三路90号", "学府街5号"]),
        ("中山路", []),  # a road without a number
        ("坐地铁5号线到人民广场", []),  # a number without a road before it
        ("第3单元的作业", []),
        ("中山路那家店12号开门", []),  # the number is no part of the road
    ],
)
def test_streets(text: str, found: list[str]) -> None:
    assert [text[a:b] for a, b in streets(text)] == found
