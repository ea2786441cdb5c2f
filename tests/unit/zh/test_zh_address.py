"""The ``address`` extractor and the divisions data it reads."""

from __future__ import annotations

import pytest

from charter_zh.address import _ANCHOR_CHARS, Address, AddressExtractor
from charter_zh.regions import COUNTY, PREFECTURE, PROVINCE, regions

ADDRESS = AddressExtractor()

# text, item text, (province, city, district, detail), region (generalised to the district)
POSITIVE: list[tuple[str, str, tuple[str | None, str | None, str | None, str], str]] = [
    (
        "浙江省杭州市西湖区文三路90号",
        "浙江省杭州市西湖区文三路90号",
        ("浙江省", "杭州市", "西湖区", "文三路90号"),
        "浙江省杭州市西湖区",
    ),
    (
        "请把发票寄到北京朝阳区建国路8号，谢谢",
        "北京朝阳区建国路8号",
        ("北京市", "北京市", "朝阳区", "建国路8号"),
        "北京市朝阳区",
    ),
    (
        "上海市浦东新区世纪大道100号",
        "上海市浦东新区世纪大道100号",
        ("上海市", "上海市", "浦东新区", "世纪大道100号"),
        "上海市浦东新区",
    ),
    (
        "住址：江苏省南京市鼓楼区中山路1号2栋301室。",
        "江苏省南京市鼓楼区中山路1号2栋301室",
        ("江苏省", "南京市", "鼓楼区", "中山路1号2栋301室"),
        "江苏省南京市鼓楼区",
    ),
    (
        "浙江省杭州市西湖区文三路90号3栋2单元302",
        "浙江省杭州市西湖区文三路90号3栋2单元302",
        ("浙江省", "杭州市", "西湖区", "文三路90号3栋2单元302"),
        "浙江省杭州市西湖区",
    ),
    (
        "收货地址：广东省深圳市南山区粤海街道科技园中区1栋A座1201室，电话13812345678",
        "广东省深圳市南山区粤海街道科技园中区1栋A座1201室",
        ("广东省", "深圳市", "南山区", "粤海街道科技园中区1栋A座1201室"),
        "广东省深圳市南山区",
    ),
    (
        "浙江杭州市余杭区五常街道文一西路969号",
        "浙江杭州市余杭区五常街道文一西路969号",
        ("浙江省", "杭州市", "余杭区", "五常街道文一西路969号"),
        "浙江省杭州市余杭区",
    ),
    (
        "北京市海淀区中关村大街27号",
        "北京市海淀区中关村大街27号",
        ("北京市", "北京市", "海淀区", "中关村大街27号"),
        "北京市海淀区",
    ),
    ("杭州西湖区", "杭州西湖区", ("浙江省", "杭州市", "西湖区", ""), "浙江省杭州市西湖区"),
    ("重庆市武隆区", "重庆市武隆区", ("重庆市", "重庆市", "武隆区", ""), "重庆市武隆区"),
    ("湖北省仙桃市", "湖北省仙桃市", ("湖北省", None, "仙桃市", ""), "湖北省仙桃市"),
    (
        "吉林省吉林市船营区",
        "吉林省吉林市船营区",
        ("吉林省", "吉林市", "船营区", ""),
        "吉林省吉林市船营区",
    ),
    (
        "恩施州利川市",
        "恩施州利川市",
        ("湖北省", "恩施土家族苗族自治州", "利川市", ""),
        "湖北省恩施土家族苗族自治州利川市",
    ),
    (
        "宁夏银川市兴庆区",
        "宁夏银川市兴庆区",
        ("宁夏回族自治区", "银川市", "兴庆区", ""),
        "宁夏回族自治区银川市兴庆区",
    ),
    (
        "广东省东莞市虎门镇",
        "广东省东莞市虎门镇",
        ("广东省", "东莞市", None, "虎门镇"),
        "广东省东莞市",
    ),
    ("阳泉市城区", "阳泉市城区", ("山西省", "阳泉市", "城区", ""), "山西省阳泉市城区"),
    (
        "上海市黄浦区新天地广场2号楼",
        "上海市黄浦区新天地广场2号楼",
        ("上海市", "上海市", "黄浦区", "新天地广场2号楼"),
        "上海市黄浦区",
    ),
    (
        "江苏省苏州工业园区星湖街328号",
        "江苏省苏州工业园区星湖街328号",
        ("江苏省", "苏州市", None, "工业园区星湖街328号"),
        "江苏省苏州市",
    ),
    (
        "广州市天河区 体育西路103号",
        "广州市天河区 体育西路103号",
        ("广东省", "广州市", "天河区", "体育西路103号"),
        "广东省广州市天河区",
    ),
    # the chain ends where the names stop nesting: 南京 is not in 上海
    (
        "上海市南京西路1号",
        "上海市南京西路1号",
        ("上海市", "上海市", None, "南京西路1号"),
        "上海市",
    ),
    # 西湖区 is in 杭州 and in 南昌: a district alone settles neither province nor city
    ("西湖区文三路90号", "西湖区文三路90号", (None, None, "西湖区", "文三路90号"), "西湖区"),
    (
        "浙江省杭州市西湖区的文三路",
        "浙江省杭州市西湖区",
        ("浙江省", "杭州市", "西湖区", ""),
        "浙江省杭州市西湖区",
    ),
    # a URL ends at the first CJK character: the address after it is outside the link
    (
        "见https://a.example.cn/浙江省杭州市西湖区",
        "浙江省杭州市西湖区",
        ("浙江省", "杭州市", "西湖区", ""),
        "浙江省杭州市西湖区",
    ),
]


@pytest.mark.parametrize(("text", "written", "parts", "region"), POSITIVE)
def test_address_finds(
    text: str,
    written: str,
    parts: tuple[str | None, str | None, str | None, str],
    region: str,
) -> None:
    (item,) = ADDRESS.extract(text)
    assert item.text == written
    assert text[item.start : item.end] == written
    value = item.value
    assert isinstance(value, Address)
    assert (value.province, value.city, value.district, value.detail) == parts
    assert value.region == region
    assert ADDRESS.canonical(item) is None


def test_two_addresses_with_the_same_district_name() -> None:
    items = ADDRESS.extract("杭州市西湖区和南昌市西湖区")
    assert [i.text for i in items] == ["杭州市西湖区", "南昌市西湖区"]
    assert [i.value.region for i in items] == ["浙江省杭州市西湖区", "江西省南昌市西湖区"]
    assert [i.attrs["code"] for i in items] == ["330106", "360103"]


NEGATIVE = [
    "我在杭州工作",  # a city alone is a place
    "浙江省",
    "上海市",
    "西湖区",
    "浙江杭州",  # no level written in full
    "杭州文三路90号",  # a short name alone proves nothing (南京西路, 中山路)
    "南京西路1号",
    "中山大学",
    "吉林大学",
    "长沙发货很快",
    "去年去了北京和上海",
    "城区",  # a district name that is an ordinary word, alone
    "郊区的房子",
    "这个城市的城区",
    "北京市北京市",  # a level twice is no chain
    "xx省yy市",
    "西湖区附近的小区",  # 的 ends a detail before it starts
    "湖南卫视",
    "沙县小吃",
    "和县",
    "市场区域",
    "超市省钱",
    "朝阳产业",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_address_leaves_alone(text: str) -> None:
    assert ADDRESS.extract(text) == ()


def test_regions_data_nests() -> None:
    data = regions()
    assert len(data.by_code) > 3000
    xihu = data.by_code["330106"]
    assert (xihu.name, xihu.level) == ("西湖区", COUNTY)
    assert data.by_code["330100"].level == PREFECTURE
    assert data.by_code["330000"].level == PROVINCE
    assert data.by_code["330000"].contains(xihu)
    assert data.by_code["330100"].contains(xihu)
    assert not data.by_code["360100"].contains(xihu)
    assert data.prefecture_of(data.by_code["110105"]) == data.by_code["110000"]  # municipality
    assert data.prefecture_of(data.by_code["429004"]) is None  # 仙桃市: under the province
    # short forms are there, and marked as such
    assert {r.code for r in data.every["杭州"]} == {"330100"}
    assert "杭州" not in data.full
    assert {r.code for r in data.every["吉林"]} == {"220000", "220200"}
    assert "恩施州" in data.full
    assert "城区" not in data.full and "城区" in data.every
    # extract gives up on texts without these characters: every full name must end in one
    assert data.suffixes <= set(_ANCHOR_CHARS)


def test_data_is_read_on_first_use_not_at_import() -> None:
    import subprocess
    import sys

    code = (
        "import charter_zh.plugin, charter_zh.regions as r;"
        "assert r.regions.cache_info().currsize == 0;"
        "charter_zh.plugin.EXTRACTORS[0].extract('x');"
        "assert r.regions.cache_info().currsize == 0;"
        "from charter_zh.address import AddressExtractor as A;"
        "A().extract('杭州市西湖区');"
        "assert r.regions.cache_info().currsize == 1"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
