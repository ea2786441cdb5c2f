"""The ``url`` and ``email`` extractors."""

from __future__ import annotations

import pytest

from charter.contracts.rules import Item
from charter_zh.web import EmailExtractor, UrlExtractor, outside_links

URL = UrlExtractor()
EMAIL = EmailExtractor()

URL_POSITIVE = [
    ("访问https://example.com/a?b=1，然后", ["https://example.com/a?b=1"]),
    ("见https://a.com/x.", ["https://a.com/x"]),
    ("（见https://a.com/x）", ["https://a.com/x"]),
    ("(见https://a.com/x)", ["https://a.com/x"]),
    ("https://en.wikipedia.org/wiki/A_(b)", ["https://en.wikipedia.org/wiki/A_(b)"]),
    ("请访问www.example.com。", ["www.example.com"]),
    ("HTTP://EXAMPLE.COM/A", ["HTTP://EXAMPLE.COM/A"]),
    ("官网https://www.example.com/invoice提交", ["https://www.example.com/invoice"]),
    ("www.example.com:8080/x?y=1", ["www.example.com:8080/x?y=1"]),
    ("http://a.com, http://b.com!", ["http://a.com", "http://b.com"]),
    ("https://a.com/路径", ["https://a.com/"]),
    (
        "商品详情见https://shop.example.com/item/123(官方店铺)",
        ["https://shop.example.com/item/123"],
    ),
    ("链接：http://127.0.0.1:8000/api", ["http://127.0.0.1:8000/api"]),
]


@pytest.mark.parametrize(("text", "urls"), URL_POSITIVE)
def test_url_finds(text: str, urls: list[str]) -> None:
    items = URL.extract(text)
    assert [i.text for i in items] == urls
    assert [i.value for i in items] == urls
    assert all(URL.canonical(i) is None for i in items)


URL_NEGATIVE = [
    "http://",
    "www.",
    "xhttp://a.com",
    "ftp://a.com",
    "example.com",
    "me@www.example.com",
    "https：//example.com",  # full-width colon
    "没有链接",
]


@pytest.mark.parametrize("text", URL_NEGATIVE)
def test_url_leaves_alone(text: str) -> None:
    assert URL.extract(text) == ()


EMAIL_POSITIVE = [
    ("发送邮件至service@example.com，我们", ["service@example.com"], ["service@example.com"]),
    ("Foo.Bar@Example.COM.cn。", ["Foo.Bar@Example.COM.cn"], ["foo.bar@example.com.cn"]),
    ("user+tag@mail-server.co.uk", ["user+tag@mail-server.co.uk"], ["user+tag@mail-server.co.uk"]),
    ("邮箱：张三abc@qq.com谢谢", ["abc@qq.com"], ["abc@qq.com"]),
    (
        "test@163.com和test2@qq.com",
        ["test@163.com", "test2@qq.com"],
        ["test@163.com", "test2@qq.com"],
    ),
    ("..abc@x.com", ["abc@x.com"], ["abc@x.com"]),
    ("x.abc@x.com", ["x.abc@x.com"], ["x.abc@x.com"]),
    ("A_B%C@X-Y.ORG", ["A_B%C@X-Y.ORG"], ["a_b%c@x-y.org"]),
    ("(hr@corp.com)", ["hr@corp.com"], ["hr@corp.com"]),
    ("邮件: a@b.io.", ["a@b.io"], ["a@b.io"]),
]


@pytest.mark.parametrize(("text", "texts", "values"), EMAIL_POSITIVE)
def test_email_finds(text: str, texts: list[str], values: list[str]) -> None:
    items = EMAIL.extract(text)
    assert [i.text for i in items] == texts
    assert [i.value for i in items] == values
    assert all(EMAIL.canonical(i) is None for i in items)


EMAIL_NEGATIVE = [
    "a@localhost",
    "a@b.c",
    "a@b.com1",
    "a@b@c.com",
    "@@@",
    "a@-b.com",
    "a..b@x.com",
    "a.@x.com",
    "x" * 70 + "@x.com",
    "张三@qq.com",  # the local part must be ASCII
]


@pytest.mark.parametrize("text", EMAIL_NEGATIVE)
def test_email_leaves_alone(text: str) -> None:
    assert EMAIL.extract(text) == ()


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("https://a.com/?u=http://b.com", ["https://a.com/?u=http://b.com"]),  # one address
        ("Www.Example.com/x", ["Www.Example.com/x"]),
        ("HTTPS://A.COM，和www.b.cn", ["HTTPS://A.COM", "www.b.cn"]),
    ],
)
def test_url_start_cases(text: str, urls: list[str]) -> None:
    assert [i.text for i in URL.extract(text)] == urls


@pytest.mark.parametrize("text", ["hhttp://a.com", "wwww.example.com", "a.www.example.com"])
def test_url_glued_starts_are_no_urls(text: str) -> None:
    assert URL.extract(text) == ()


def test_url_results_follow_the_text() -> None:
    # the URLs of the last text are remembered; another text must not get them
    a, b = "见https://a.com/x", "见https://bb.com/y，"
    for text, url in ((a, "https://a.com/x"), (b, "https://bb.com/y"), (a, "https://a.com/x")):
        assert [i.text for i in URL.extract(text)] == [url]
    assert URL.extract("没有链接") == ()


def _item(text: str, start: int, end: int) -> Item:
    return Item(start, end, text[start:end], text[start:end])


def test_outside_links_drops_what_overlaps_an_address() -> None:
    text = "见https://a.com/2024/05/01，写信x13812345678@b.com，另2024年"
    inside_url = _item(text, text.index("2024/05/01"), text.index("2024/05/01") + 10)
    inside_mail = _item(text, text.index("13812345678"), text.index("13812345678") + 11)
    after = _item(text, text.rindex("2024"), text.rindex("2024") + 5)
    touching = _item(text, text.index("，"), text.index("，") + 1)  # right after the URL
    kept = outside_links(text, [inside_url, touching, inside_mail, after])
    assert kept == [touching, after]


def test_outside_links_without_addresses_keeps_everything() -> None:
    text = "2024/05/01和3.5%"
    items = [_item(text, 0, 10), _item(text, 11, 15)]
    assert outside_links(text, items) == items
    text = "w/@: 但没有地址 2024/05/01"  # the cheap hints are there, no address is
    items = [_item(text, text.index("2024"), len(text))]
    assert outside_links(text, items) == items
