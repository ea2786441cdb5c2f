"""``url`` and ``email``: ASCII web addresses inside Chinese text, and the spans they cover.

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

``outside_links`` is how the other extractors keep out of addresses: a number inside
``https://bank.example.com/notice/2024/05/01`` or ``13812345678@example.com`` is part of the
address, not a date or a phone, and reformatting it would break the link.
"""

from __future__ import annotations

import re

from charter.contracts.rules import Item, ValueKind
from charter_zh._common import ASCII_ALNUM

_URL_CHARS = r"A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%"
# The two forms of a URL, each led by one literal character, which re finds with a plain loop (a
# pattern led by the class [hHwW] is checked character by character, ten times slower on a
# 500-character text): the ":" of http:// or https:// (any case; the scheme is checked by
# lookbehind), and the "." of www. (any case). A match starts 4 or 5 characters (http, https),
# or 3 (www), before its lead.
_HTTP = re.compile(
    rf":(?:(?<=[hH][tT][tT][pP]:)|(?<=[hH][tT][tT][pP][sS]:))//[A-Za-z0-9\[][{_URL_CHARS}]*"
)
_WWW = re.compile(
    rf"\.(?<=[wW][wW][wW]\.)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:[/?#:][{_URL_CHARS}]*)?"
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

Found = tuple[tuple[int, int, str], ...]  # (start, end, written)

# The URLs, and the URL and e-mail spans, of the last text looked at. The extractors of one text
# run one after the other, and url, money, date, percent... all want them: one entry is enough,
# and a tuple is replaced in one step, so threads at worst recompute.
_last_urls: tuple[str, Found] = ("", ())
_last_links: tuple[str, tuple[tuple[int, int], ...]] = ("", ())


def _trim(url: str) -> str:
    while url:
        last = url[-1]
        unbalanced = last in _PAIRS and url.count(last) > url.count(_PAIRS[last])
        if last in _TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def _candidates(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_www) of every match of the two forms, in order of start."""
    found: list[tuple[int, int, bool]] = []
    if ":" in text:
        for m in _HTTP.finditer(text):
            colon, end = m.span()
            found.append((colon - 5 if text[colon - 1] in "sS" else colon - 4, end, False))
    if "." in text and ("w" in text or "W" in text):
        for m in _WWW.finditer(text):
            dot, end = m.span()
            found.append((dot - 3, end, True))
    if len(found) > 1:
        found.sort()
    return found


def _find_urls(text: str) -> Found:
    """The URLs of ``text``: matches never overlap (one inside another, like the www. of
    http://www..., is part of it), then trimmed and checked."""
    global _last_urls
    last = _last_urls
    if last[0] == text:
        return last[1]
    found: list[tuple[int, int, str]] = []
    consumed = 0
    for start, end, is_www in _candidates(text):
        if start < consumed:
            continue
        consumed = end
        if start > 0 and text[start - 1] in (_BEFORE_WWW if is_www else ASCII_ALNUM):
            continue
        url = _trim(text[start:end])
        if is_www and "." not in url[4:]:
            continue
        if not is_www and url.endswith("//"):
            continue
        found.append((start, start + len(url), url))
    result = tuple(found)
    _last_urls = (text, result)
    return result


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


def _find_emails(text: str) -> Found:
    found: list[tuple[int, int, str]] = []
    last_end = 0
    at = text.find("@")
    while at != -1:
        start = _local_start(text, at, max(last_end, at - _MAX_LOCAL - 1))
        domain = _DOMAIN.match(text, at + 1) if start is not None else None
        if start is not None and domain is not None:
            last_end = domain.end()
            found.append((start, last_end, text[start:last_end]))
        at = text.find("@", max(at + 1, last_end))
    return tuple(found)


def _link_spans(text: str) -> tuple[tuple[int, int], ...]:
    global _last_links
    last = _last_links
    if last[0] == text:
        return last[1]
    spans = [(start, end) for start, end, _ in _find_urls(text)]
    if "@" in text:
        spans += [(start, end) for start, end, _ in _find_emails(text)]
    result = tuple(spans)
    _last_links = (text, result)
    return result


def outside_links(text: str, items: list[Item]) -> list[Item]:
    """The items that overlap no URL and no e-mail address of ``text``.

    Addresses are only looked for when the text has a ``/`` (every ``http://`` has), a ``w`` or
    ``W`` (every ``www.`` has) or an ``@``: one-character ``in`` tests, which are all that most
    texts cost, unless the addresses of the text are known already (the text looked at last).
    """
    last = _last_links
    if last[0] == text:  # the extractors of one text run one after the other: nearly always
        spans = last[1]
    elif not ("/" in text or "@" in text or "w" in text or "W" in text):
        return items
    else:
        spans = _link_spans(text)
    if not spans:
        return items
    kept: list[Item] = []
    for item in items:
        for start, end in spans:
            if start < item.end and item.start < end:
                break
        else:
            kept.append(item)
    return kept


class UrlExtractor:
    """http(s) URLs and ``www.`` hosts; the value is the URL as written."""

    name: str = "url"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        return tuple(Item(s, e, url, url, None, None, {}) for s, e, url in _find_urls(text))

    def canonical(self, item: Item) -> str | None:
        """None: URLs are reported, never rewritten."""
        return None


class EmailExtractor:
    """E-mail addresses; the value is the address lower-cased."""

    name: str = "email"
    value_kind: ValueKind = "text"
    has_units: bool = False

    def extract(self, text: str) -> tuple[Item, ...]:
        if "@" not in text:
            return ()
        return tuple(
            Item(s, e, address, address.lower(), None, None, {})
            for s, e, address in _find_emails(text)
        )

    def canonical(self, item: Item) -> str | None:
        """None: addresses are reported, never rewritten."""
        return None
