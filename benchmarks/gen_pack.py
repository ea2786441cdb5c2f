"""A generated pack of N rules of the finance pack's kinds, and the same rules as a naive baseline.

Six kinds, in turn: bans (``contains any [...] unless preceded by``), required phrases under a
``mentions X near [...]`` guard, money-format quantifiers, ``has twin`` quantifiers, date
``matches`` under a ``contains any`` guard, and ``count(...)`` comparisons. Every rule has its
own literals and numbers, drawn from a seeded ``random.Random``: guard words are real two-character
words of the sample texts (so guards fire now and then), the rest are made-up words that never
occur (so most bans and most required phrases behave like real ones on good answers).
``one_word`` generates the simplest pack instead: N rules banning one made-up word each.

The baseline of each rule is a closure built from the same parameters, doing its own regex and
its own extraction through the helpers of ``naive_baseline``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import naive_baseline as nb
import yaml
from naive_baseline import Context, Outcome, RuleFn

SEED = 20240501
NEGATIONS = ("不", "未", "无法")
# Common characters; those found in the sample texts are removed before use.
_COMMON = (
    "的一是在了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过"
    "子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体"
    "制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内"
    "数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提"
    "直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计"
    "别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海"
    "口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身"
    "车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石"
    "记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青"
    "省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型"
    "眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严龙飞鸟鱼雪松竹梅"
    "兰菊桃柳杨狗猫猪羊牛虎龟蛇鹤鹰燕雁鸭鹅蝶蜂蚁蛙虾蟹贝珠玉琴棋诗画茶酒糖盐醋酱椒葱蒜姜瓜豆麦稻"
    "谷麻丝绸棉袜鞋帽伞灯炉锅碗筷勺盘杯壶瓶箱柜桌椅床窗墙瓦砖梯桥塔亭庙庭园池湖河溪泉瀑峰岭坡谷洞"
)
KINDS = ("ban", "require", "format", "twin", "date", "count")
_EXTRACT: dict[str, Callable[[str], list[Any]]] = {
    "money": nb.find_amounts,
    "percent": nb.find_percents,
    "date": nb.find_dates,
    "url": nb.find_urls,
}
_DATE_REGEXES = (r"^\d{4}-\d{2}-\d{2}$", r"^20\d{2}-\d{2}-\d{2}$", r"^\d{4}-(0[1-9]|1[0-2])-\d{2}$")


@dataclass(frozen=True)
class GenRule:
    id: str
    kind: str
    describe: str
    check: str
    on_fail: str
    when: str | None
    baseline: RuleFn

    def as_yaml(self) -> dict[str, str]:
        out = {"id": self.id, "describe": self.describe}
        if self.when is not None:
            out["when"] = self.when
        out["check"] = self.check
        out["on_fail"] = self.on_fail
        return out


def _quote(words: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{w}"' for w in words) + "]"


def _alternation(words: Iterable[str]) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)))


class _Words:
    """Distinct words: made-up ones (never in the samples) and real ones (from the samples)."""

    def __init__(self, rng: random.Random, texts: Iterable[str]) -> None:
        self.rng = rng
        texts = list(texts)
        seen = set("".join(texts)) | set("".join(NEGATIONS))
        pool = [ch for ch in dict.fromkeys(_COMMON) if ch not in seen]
        # Two disjoint halves, so no made-up banned word is ever inside a required phrase.
        self._ban_chars, self._phrase_chars = pool[0::2], pool[1::2]
        real = {
            t[i : i + 2]
            for t in texts
            for i in range(len(t) - 1)
            if _cjk(t[i]) and _cjk(t[i + 1]) and t[i] != t[i + 1]
        }
        self._real = sorted(real)
        rng.shuffle(self._real)
        self._used: set[str] = set()

    def _fresh(self, chars: list[str], size: int) -> str:
        while True:
            word = "".join(self.rng.sample(chars, size))
            if word not in self._used:
                self._used.add(word)
                return word

    def made_up(self) -> str:
        return self._fresh(self._ban_chars, 2)

    def phrase(self) -> str:
        return "（" + self._fresh(self._phrase_chars, 4) + "）"

    def real(self, avoid: str = "") -> str:
        while self._real:
            word = self._real.pop()
            if word not in self._used and not set(word) & set(avoid):
                self._used.add(word)
                return word
        # The samples hold about 1,700 such words, enough for some 2,000 rules; a bigger pack
        # (the validation benchmark's 3,000) takes made-up words for the rest.
        while True:
            word = self.made_up()
            if not set(word) & set(avoid):
                return word


def _cjk(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff"


# ---- one builder per kind: the DSL text and the baseline closure, from the same parameters ----


def _ban(i: int, words: _Words) -> GenRule:
    terms = [words.made_up(), words.made_up()]
    if i % 4 == 0:  # every fourth ban names a word the answers really use
        terms.append(words.real(avoid="".join(terms)))
    pattern = _alternation(terms)

    def baseline(output: str, context: Context) -> Outcome:
        for m in pattern.finditer(output):
            if not output.endswith(NEGATIONS, 0, m.start()):
                return "fail"
        return "pass"

    check = f"not output contains any {_quote(terms)} unless preceded by {_quote(NEGATIONS)}"
    return GenRule(
        f"g{i:03d}-ban", "ban", f"禁用 {'、'.join(terms)}", check, "retry", None, baseline
    )


def _require(i: int, words: _Words) -> GenRule:
    subject = ("percent", "money", "date")[i % 3]
    guard = [words.real(), words.made_up()]
    phrase = words.phrase()
    extract, near = _EXTRACT[subject], _alternation(guard)

    def baseline(output: str, context: Context) -> Outcome:
        if not any(nb.near(output, x.start, x.end, near) for x in extract(output)):
            return "skip"
        return "pass" if phrase in output else "fail"

    when = f"output mentions {subject} near {_quote(guard)}"
    on_fail = f'fix append "{phrase}"' if i % 2 else "retry"
    return GenRule(
        f"g{i:03d}-require",
        "require",
        f"提到{guard[0]}时注明{phrase}",
        f'output contains "{phrase}"',
        on_fail,
        when,
        baseline,
    )


def _guard(words: _Words) -> tuple[str, re.Pattern[str]]:
    guard = [words.real(), words.made_up()]
    return f"output contains any {_quote(guard)}", _alternation(guard)


def _format(i: int, words: _Words) -> GenRule:
    when, guard = _guard(words)
    limit = words.rng.randrange(1_000, 2_000_000)

    def baseline(output: str, context: Context) -> Outcome:
        if not guard.search(output):
            return "skip"
        for a in nb.find_amounts(output):
            if not (a.unit == "元" and a.decimals == 2 and a.value <= limit):
                return "fail"
        return "pass"

    check = f'every money in output (has unit "元" and decimals == 2 and value <= {limit})'
    return GenRule(
        f"g{i:03d}-format", "format", f"金额格式，上限 {limit}", check, "retry", when, baseline
    )


def _twin(i: int, words: _Words) -> GenRule:
    limit = words.rng.randrange(100, 200_000)
    if i % 2:

        def baseline(output: str, context: Context) -> Outcome:
            amounts = [a for a in nb.find_amounts(output) if not a.value < limit]
            if amounts:
                upper = set(nb.find_upper_amounts(output))
                if any(a.value not in upper for a in amounts):
                    return "fail"
            return "pass"

        check = f"every money in output (value < {limit} or has twin money_upper)"
    else:

        def baseline(output: str, context: Context) -> Outcome:
            upper = [v for v in nb.find_upper_amounts(output) if not v < limit]
            if upper:
                lower = {a.value for a in nb.find_amounts(output)}
                if any(v not in lower for v in upper):
                    return "fail"
            return "pass"

        check = f"every money_upper in output (value < {limit} or has twin money)"
    return GenRule(
        f"g{i:03d}-twin", "twin", f"{limit} 元以上的金额大小写双显", check, "retry", None, baseline
    )


def _date(i: int, words: _Words) -> GenRule:
    when, guard = _guard(words)
    source = _DATE_REGEXES[i % len(_DATE_REGEXES)]
    pattern = re.compile(source)

    def baseline(output: str, context: Context) -> Outcome:
        if not guard.search(output):
            return "skip"
        for d in nb.find_dates(output):
            if not pattern.search(d.text):
                return "fail"
        return "pass"

    return GenRule(
        f"g{i:03d}-date",
        "date",
        f"日期格式 {source}",
        f"every date in output matches /{source}/",
        "retry",
        when,
        baseline,
    )


def _count(i: int, words: _Words) -> GenRule:
    subject = ("money", "percent", "date", "url")[i % 4]
    limit = words.rng.randrange(1, 6)
    phrase = words.phrase()
    extract = _EXTRACT[subject]

    def baseline(output: str, context: Context) -> Outcome:
        if len(extract(output)) <= limit or phrase in output:
            return "pass"
        return "fail"

    check = f'count({subject} in output) <= {limit} or output contains "{phrase}"'
    return GenRule(
        f"g{i:03d}-count", "count", f"{subject} 至多 {limit} 个", check, "retry", None, baseline
    )


_BUILDERS: dict[str, Callable[[int, _Words], GenRule]] = {
    "ban": _ban,
    "require": _require,
    "format": _format,
    "twin": _twin,
    "date": _date,
    "count": _count,
}


def generate(n: int, texts: Iterable[str], seed: int = SEED) -> list[GenRule]:
    """``n`` distinct rules, the kinds in turn; the same ``seed`` gives the same rules."""
    words = _Words(random.Random(seed), texts)
    return [_BUILDERS[KINDS[i % len(KINDS)]](i, words) for i in range(n)]


def one_word(n: int, texts: Iterable[str], seed: int = SEED) -> list[GenRule]:
    """``n`` rules that each ban one made-up word (``not output contains "…"``), all distinct:
    the smallest rule there is, many times over."""
    words = _Words(random.Random(seed), texts)
    return [_one_word(i, words.made_up()) for i in range(n)]


def _one_word(i: int, word: str) -> GenRule:
    def baseline(output: str, context: Context) -> Outcome:
        return "fail" if word in output else "pass"

    check = f'not output contains "{word}"'
    return GenRule(f"w{i:04d}", "word", f"禁用 {word}", check, "retry", None, baseline)


def write_pack(rules: list[GenRule], directory: Path) -> Path:
    """Write pack.yaml and rules.yaml into ``directory`` (created) and return it."""
    directory.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": "bench-generated",
        "version": "0.1.0",
        "kind": "domain",
        "description": f"{len(rules)} generated rules for the benchmark",
        "locale": "zh-CN",
        "requires": {"plugins": ["charter-zh"]},
    }
    body = {"rules": [r.as_yaml() for r in rules]}
    for name, data in (("pack.yaml", manifest), ("rules.yaml", body)):
        text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=1000)
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def baseline_rules(rules: list[GenRule]) -> dict[str, RuleFn]:
    return {r.id: r.baseline for r in rules}
