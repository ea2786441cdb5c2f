"""How serious an input says things are, from its degree words.

A safety intent's examples open it for an emergency said in plain words (孩子脸发青，咳不出来)
at a deliberately low band, and with e5-small an ordinary complaint scores nearly as high
(手指划了个小口子 near 伤口很深，血喷出来了). What the customer says of the degree is what tells
them apart: 有点 / 一点 / 稍微 / 轻微 / a small cut say the matter is mild, and an emergency is
never told so. A mild input is therefore not opened as a safety intent by the examples alone;
its keywords still open it (有点喘不上气 is an emergency by its words), so recall stays with the
pack's trigger. A severe one (剧痛 / 从来没这么痛过 / 突然 / 受不了) keeps the examples'
recall-first slack even where an ordinary keyword fired (头痛得像要炸开 beside 头痛).

Pure and deterministic: NFKC-normalised, lower-cased text."""

from __future__ import annotations

import unicodedata

import regex

# low-degree words: 有点/有一点/有些 (有些人 is no degree), 一点点, 稍(微), 轻微/轻度, 略(微), 不太/
# 不怎么 + a complaint word, 不严重, and the diminutive of a wound (小口子, 小伤口, 点血)
_MILD = regex.compile(
    r"有点|有一点|有些(?!人)|一点点|[了得]一点(?![钟半])|稍微|稍稍|稍有|轻微|轻度|略微|略有|微微"
    r"|不(?:太|怎么|是很|算)(?:严重|厉害|疼|痛|舒服)|不严重|小口子|小伤口|小口|擦破|蹭破|点儿?血"
)

# high-degree words of an acute state: 剧(烈/痛), never before, sudden, unbearable, worsening
_SEVERE = regex.compile(
    r"剧烈|剧痛|[绞撕]痛|撕裂|从来没(?:这么|有过|那么)|从没(?:这么|有过)|突然|忽然|一下子"
    r"|受不了|要命|要死|炸开|炸裂|越来越(?:重|疼|痛|厉害|严重|难受)|止不住|停不下来"
)


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def mild(text: str) -> bool:
    """``text`` says the matter is mild (有点疼 / 流了点血 / 肿了一点 / 不太严重)."""
    return bool(_MILD.search(_norm(text)))


def severe(text: str) -> bool:
    """``text`` says the matter is acute or grave (剧痛 / 从来没这么痛过 / 突然 / 受不了)."""
    return bool(_SEVERE.search(_norm(text)))


__all__ = ["mild", "severe"]
