"""``url`` and ``email``: ASCII web addresses inside Chinese text.

Both stop at the first non-ASCII character, so CJK text and full-width punctuation
(``，`` ``。`` ``）``) never become part of an address: ``访问https://example.com/a?b=1，然后``
gives ``https://example.com/a?b=1``.

url: ``http://``/``https://`` (any case) and bare ``www.`` hosts. Trailing ASCII punctuation
(``.,;:!?'"`` and opening brackets) is dropped, and so is a closing ``)``/``]`` that has no
opening partner inside the URL (``(见https://a.com/x)`` ends before ``)``,
``https://a.com/wiki/A_(b)`` keeps it).
Not matched: other schemes (``ftp:``, ``mailto:``), bare domains without ``www.``
(``example.com`` is too often a file name or a sentence), ``www.`` glued to letters, dots, ``@``
or ``/`` (part of another host, an e-mail or a URL), internationalised (non-ASCII) URLs.

email: ``local@domain.tld`` with dot-separated local parts and hyphenated labels; the value is
lower-cased. Not matched: quoted local parts, IP-literal domains, single-label domains
(``a@localhost``), addresses glued to more address characters.
"""

from __future__ import annotations

import re

from charter.protocols import Item, ValueKind
from charter_zh._common import ASCII_ALNUM

_URL_CHARS = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
# Anchored on one character class so the scan skips straight to h/H/w/W.
_URL = re.compile(
    rf"[hHwW](?:(?<=[hH])[tT][tT][pP][sS]?://[A-Za-z0-9\[][{_URL_CHARS}]*"
    rf"|(?<=[wW])[wW][wW]\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:[/?#:][{_URL_CHARS}]*)?)"
)
# An opening bracket can end a URL only in theory; in text it opens the following remark:
# 详情见https://a.com/123(官方店铺) stops the URL at the CJK character, leaving a dangling "(".
_TRAILING = ".,;:!?'\"*([{<"
_PAIRS = {")": "(", "]": "["}
_BEFORE_WWW = frozenset(ASCII_ALNUM | set(".@/-_"))

_LOCAL = re.compile(r"[A-Za-z0-9_%+\-]+(?:\.[A-Za-z0-9_%+\-]+)*")
_DOMAIN = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.[A-Za-z]{2,63}(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
_LOCAL_CHARS = frozenset(ASCII_ALNUM | set("_%+-"))
_LOCAL_RUN_CHARS = _LOCAL_CHARS | {"."}
_MAX_LOCAL = 64


def _trim(url: str) -> str:
    while url:
        last = url[-1]
        unbalanced = last in _PAIRS and url.count(last) > url.count(_PAIRS[last])
        if last in _TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


class UrlExtractor:
    """http(s) URLs and ``www.`` hosts; the value is the URL as written."""

    name: str = "url"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        for m in _URL.finditer(text):
            start = m.start()
            is_www = text[start] in "wW"
            if start > 0 and text[start - 1] in (_BEFORE_WWW if is_www else ASCII_ALNUM):
                continue
            url = _trim(m.group())
            if is_www and "." not in url[4:]:
                continue
            if not is_www and url.endswith("//"):
                continue
            end = start + len(url)
            items.append(Item(start=start, end=end, text=url, value=url))
        return tuple(items)

    def canonical(self, item: Item) -> str | None:
        """None: URLs are reported, never rewritten."""
        return None


class EmailExtractor:
    """E-mail addresses; the value is the address lower-cased."""

    name: str = "email"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        items: list[Item] = []
        last_end = 0
        at = text.find("@")
        while at != -1:
            start = self._local_start(text, at, max(last_end, at - _MAX_LOCAL - 1))
            domain = _DOMAIN.match(text, at + 1) if start is not None else None
            if start is not None and domain is not None:
                end = domain.end()
                address = text[start:end]
                items.append(Item(start=start, end=end, text=address, value=address.lower()))
                last_end = end
            at = text.find("@", max(at + 1, last_end))
        return tuple(items)

    @staticmethod
    def _local_start(text: str, at: int, limit: int) -> int | None:
        """Start of the local part before ``at``; walking back beats an end-anchored search."""
        start = at
        while start > limit and text[start - 1] in _LOCAL_RUN_CHARS:
            start -= 1
        while start < at and text[start] == ".":
            start += 1  # a sentence dot before the address is not part of it
        if start == at or _LOCAL.fullmatch(text, start, at) is None:
            return None
        if start > 0 and (text[start - 1] in _LOCAL_CHARS or text[start - 1] == "@"):
            return None  # longer than a local part may be, or a@b@c
        return start

    def canonical(self, item: Item) -> str | None:
        """None: addresses are reported, never rewritten."""
        return None
