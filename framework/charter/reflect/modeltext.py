"""The built-in checks of a model's answer, before any pack rule: facts from nowhere, echoes of
the prompt, repetition, another language, no content.

``check_model_text`` returns ``Finding`` objects like a pack's rules do, each with action
``retry`` and a Chinese message written as guidance for the model's next attempt:

=========================  =====================================================================
rule                       fails when
=========================  =====================================================================
``model-text/empty``       nothing but spaces, punctuation and symbols (the other checks are
                           then skipped)
``model-text/echo``        the answer repeats the system message or the prompt's lines
``model-text/repetition``  a unit or a sentence is written three or more times in a row
``model-text/language``    fewer than half of the letters are in the locale's script
``model-text/grounded``    an amount, date, number, identifier or status no ground backs
=========================  =====================================================================

The grounds are the texts the turn gave the model (skill results, recalled memories, the user's
input, the pack's constants) and the prompt its messages; the caller gathers both. See
``charter.reflect.grounding`` and ``charter.reflect.degenerate`` for what each check accepts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from charter.contracts.rules import Extractor
from charter.reflect.degenerate import Degenerate, degenerate, language_of
from charter.reflect.engine import Finding
from charter.reflect.grounding import Ungrounded, ungrounded

RULE_GROUNDED = "model-text/grounded"
RULE_ECHO = "model-text/echo"
RULE_REPETITION = "model-text/repetition"
RULE_LANGUAGE = "model-text/language"
RULE_EMPTY = "model-text/empty"
RULES = (RULE_EMPTY, RULE_ECHO, RULE_REPETITION, RULE_LANGUAGE, RULE_GROUNDED)
ACTION = "retry"

GROUNDED_MESSAGE = "只能使用技能结果、记忆或用户提供的金额、日期和编号：{items} 没有出处。"
ECHO_MESSAGE = "不要复述提示里的说明和资料，直接用自己的话回答用户的问题。"
REPETITION_MESSAGE = "不要重复同样的内容：{pieces}。"
LANGUAGE_MESSAGE = "请用{language}回答。"
EMPTY_MESSAGE = "回答没有任何内容，请直接回答用户的问题。"
LANGUAGE_NAMES = {
    "zh": "中文",
    "ja": "日语",
    "ko": "韩语",
    "en": "英语",
    "fr": "法语",
    "de": "德语",
    "es": "西班牙语",
    "it": "意大利语",
    "pt": "葡萄牙语",
    "ru": "俄语",
    "vi": "越南语",
    "th": "泰语",
    "ar": "阿拉伯语",
    "fa": "波斯语",
    "he": "希伯来语",
    "el": "希腊语",
}
MAX_QUOTE = 20  # characters of a repeated unit quoted in the message


def _quote(unit: str) -> str:
    unit = " ".join(unit.split())
    return unit if len(unit) <= MAX_QUOTE else unit[:MAX_QUOTE] + "…"


def _finding(rule: str, message: str, pieces: Sequence[Degenerate | Ungrounded]) -> Finding:
    return Finding(
        rule,
        ACTION,
        message,
        tuple(p.span for p in pieces),
        tuple(p.text for p in pieces),
    )


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def check_model_text(
    text: str,
    *,
    grounds: Sequence[str] = (),
    prompt: Sequence[str] = (),
    locale: str = "zh-CN",
    extractors: Mapping[str, Extractor] | None = None,
    statuses: Sequence[str] = (),
) -> tuple[Finding, ...]:
    """The findings of the built-in model-text rules on ``text``, in the order of ``RULES``.

    ``extractors`` is the registry's (``Registry.extractors``); ``statuses`` the vocabulary of
    status words (the skills' output enums) an answer may only repeat from the grounds.
    """
    problems = degenerate(text, prompt=prompt, locale=locale, grounds=grounds)
    if problems and problems[0].kind == "empty":
        return (_finding(RULE_EMPTY, EMPTY_MESSAGE, problems),)
    findings: list[Finding] = []
    echoes = [p for p in problems if p.kind == "echo"]
    if echoes:
        findings.append(_finding(RULE_ECHO, ECHO_MESSAGE, echoes))
    repeated = [p for p in problems if p.kind == "repetition"]
    if repeated:
        pieces = "，".join(f"“{_quote(p.unit)}”重复了{p.count}次" for p in repeated)
        findings.append(
            _finding(RULE_REPETITION, REPETITION_MESSAGE.format(pieces=pieces), repeated)
        )
    foreign = [p for p in problems if p.kind == "language"]
    if foreign:
        lang = language_of(locale)
        name = LANGUAGE_NAMES.get(lang, f"{locale}对应的语言")
        findings.append(_finding(RULE_LANGUAGE, LANGUAGE_MESSAGE.format(language=name), foreign))
    missing = ungrounded(text, grounds, extractors or {}, statuses=statuses)
    if missing:
        items = "、".join(_unique([m.text for m in missing]))
        findings.append(_finding(RULE_GROUNDED, GROUNDED_MESSAGE.format(items=items), missing))
    return tuple(findings)
