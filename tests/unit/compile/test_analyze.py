"""Whole-rule analysis (CH110 / CH111): the indexed conflict search reports exactly what trying
every pair of rules reported, and its work grows with the rules, not with their pairs."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache

import pytest

from charter.compile import analyze as analyze_mod
from charter.compile.analyze import Contained, RuleView, analyze, facts
from charter.diagnostics import Diagnostic, Location, error, warning
from charter.dsl import ast as A
from charter.dsl.parser import parse_action, parse_expr

# ---- the pairwise algorithm this replaced, kept as the reference oracle ------------------------

Clash = Callable[
    [dict[analyze_mod.Lit, A.Span], dict[analyze_mod.Lit, A.Span]],
    tuple[analyze_mod.Lit, analyze_mod.Lit] | None,
]


def _pairwise_clash(
    requires: dict[analyze_mod.Lit, A.Span], forbids: dict[analyze_mod.Lit, A.Span]
) -> tuple[analyze_mod.Lit, analyze_mod.Lit] | None:
    for (subj, need), _ in sorted(requires.items()):
        for (fsubj, ban), _ in sorted(forbids.items()):
            if subj == fsubj and ban in need:
                return (subj, need), (fsubj, ban)
    return None


def pairwise_analyze(
    rules: Sequence[RuleView],
    clash: Clash = _pairwise_clash,
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    views = [(r, facts(r.when), facts(r.check)) for r in rules]
    for r, wf, cf in views:
        if (c := clash(wf.requires, wf.forbids)) is not None:
            out.append(
                warning(
                    "CH111",
                    f"rule '{r.id}' can never fire: its when-guard requires "
                    f"'{c[0][1]}' and forbids '{c[1][1]}'",
                    r.locate_when(wf.forbids[c[1]]),
                    "remove one of the two conditions",
                )
            )
        if (c := clash(cf.requires, cf.forbids)) is not None:
            out.append(
                error(
                    "CH110",
                    f"rule '{r.id}' requires '{c[0][1]}' and forbids '{c[1][1]}'",
                    r.locate_check(cf.forbids[c[1]]),
                    "the check can never pass; drop one side",
                )
            )
        elif (c := clash(wf.requires, cf.forbids)) is not None:
            out.append(
                error(
                    "CH110",
                    f"rule '{r.id}' can never pass: its when-guard requires "
                    f"'{c[0][1]}' and its check forbids '{c[1][1]}'",
                    r.locate_check(cf.forbids[c[1]]),
                    "the rule fails whenever it applies",
                )
            )
    for a, _, af in views:
        for b, _, bf in views:
            if a is b or a.when != b.when:
                continue
            c = clash(af.requires, bf.forbids)
            if c is not None:
                out.append(
                    error(
                        "CH110",
                        f"rule '{b.id}' forbids '{c[1][1]}', which rule '{a.id}' requires",
                        b.locate_check(bf.forbids[c[1]]),
                        "no output can satisfy both rules; remove or narrow one of them",
                    )
                )
    for a, _, _ in views:
        added = analyze_mod._text_added(a.action)
        if not added:
            continue
        for b, _, bf in views:
            if b.when is not None:
                continue
            for (subj, ban), _span in sorted(bf.forbids.items()):
                if subj == "output" and ban in added:
                    out.append(
                        error(
                            "CH110",
                            f"the repair of rule '{a.id}' inserts '{ban}', which rule "
                            f"'{b.id}' forbids",
                            a.locate_action(a.action.span),
                            "change the repair text so the fixed output passes every rule",
                        )
                    )
    return out


# ---- building rules --------------------------------------------------------------------------


def _locator(rid: str, key: str) -> Callable[[A.Span], Location]:
    return lambda span: Location(f"{rid}.{key}", 1, span[0] + 1, 1, span[1] + 1)


@cache
def _expr(text: str) -> A.Expr:
    return parse_expr(text)


@cache
def _action(text: str) -> A.Action:
    return parse_action(text)


Spec = tuple[str, str | None, str, str]  # id, when, check, on_fail


def views(specs: Sequence[Spec]) -> list[RuleView]:
    return [
        RuleView(
            rid,
            None if when is None else _expr(when),
            _expr(check),
            _action(on_fail),
            _locator(rid, "check"),
            _locator(rid, "when"),
            _locator(rid, "on_fail"),
        )
        for rid, when, check, on_fail in specs
    ]


def headlines(diagnostics: Sequence[Diagnostic]) -> list[str]:
    return [d.headline() for d in diagnostics]


# ---- pinned cases ------------------------------------------------------------------------------

REQ = 'output contains "保证收益"'
BAN = 'not output contains "保证"'
GUARD = 'input contains "理财"'

CASES: list[tuple[str, list[Spec], list[str]]] = [
    (
        "a ban inside a required phrase",
        [("a", None, REQ, "retry"), ("b", None, BAN, "retry")],
        ["b.check:1:1: CH110 rule 'b' forbids '保证', which rule 'a' requires"],
    ),
    (
        "a ban equal to a required phrase",
        [
            ("a", None, 'output contains "退款"', "retry"),
            ("b", None, BAN.replace("保证", "退款"), "retry"),
        ],
        ["b.check:1:1: CH110 rule 'b' forbids '退款', which rule 'a' requires"],
    ),
    (
        "a required phrase inside a ban is no clash",
        [
            ("a", None, 'output contains "保证"', "retry"),
            ("b", None, 'not output contains "保证收益"', "retry"),
        ],
        [],
    ),
    (
        "overlapping literals are no clash",
        [
            ("a", None, 'output contains "保证收"', "retry"),
            ("b", None, 'not output contains "证收益"', "retry"),
        ],
        [],
    ),
    (
        "case and width are compared as written",
        [
            ("a", None, 'output contains all ["VIP会员", "ＳＶＩＰ"]', "retry"),
            ("b", None, 'not output contains any ["vip", "SVIP"]', "retry"),
        ],
        [],
    ),
    (
        "other subjects",
        [
            ("a", None, 'input.text contains "保证收益"', "retry"),
            ("b", None, BAN, "retry"),
            ("c", None, 'not input.text contains "收益"', "retry"),
            ("d", None, 'not input contains "收益"', "retry"),
        ],
        ["c.check:1:1: CH110 rule 'c' forbids '收益', which rule 'a' requires"],
    ),
    (
        "guards compare by structure, not by spelling",
        [
            ("a", GUARD, REQ, "retry"),
            ("b", "input   contains  '理财'", BAN, "retry"),
            ("c", 'input contains "基金"', BAN, "retry"),
            ("d", None, BAN, "retry"),
        ],
        ["b.check:1:1: CH110 rule 'b' forbids '保证', which rule 'a' requires"],
    ),
    (
        "unless, contains any, not contains all, or, matches: neither required nor forbidden",
        [
            ("a", None, 'output contains any ["保证收益", "稳赚"]', "retry"),
            ("b", None, 'not output contains "保证" unless preceded by "不"', "retry"),
            ("c", None, 'output contains "保本" or output contains "保证金"', "retry"),
            ("d", None, "output matches /保证收益/", "retry"),
            ("e", None, "not output matches /保/", "retry"),
            ("f", None, 'output contains "保险"', "retry"),
            ("g", None, 'not output contains all ["保", "x"]', "retry"),
        ],
        [],
    ),
    (
        "contains all requires each; the first required phrase in sorted order is named",
        [
            ("a", None, 'output contains all ["稳赚", "保证收益"]', "retry"),
            ("b", None, 'not output contains any ["稳", "收益", "保证"]', "retry"),
        ],
        ["b.check:1:1: CH110 rule 'b' forbids '保证', which rule 'a' requires"],
    ),
    (
        "nested conjunctions are flattened; a parenthesised not is a ban",
        [
            ("a", None, f'output contains "x" and ({REQ} and output contains "y")', "retry"),
            ("b", None, 'output contains "z" and (not (output contains "收益"))', "retry"),
        ],
        ["b.check:1:26: CH110 rule 'b' forbids '收益', which rule 'a' requires"],
    ),
    (
        "both directions and several rules, in rule order",
        [
            ("a", None, f'{REQ} and not output contains "退款"', "retry"),
            ("b", None, f'output contains "退款时间" and {BAN}', "retry"),
            ("c", None, 'output contains "保证金"', "retry"),
        ],
        [
            "b.check:1:28: CH110 rule 'b' forbids '保证', which rule 'a' requires",
            "a.check:1:28: CH110 rule 'a' forbids '退款', which rule 'b' requires",
            "b.check:1:28: CH110 rule 'b' forbids '保证', which rule 'c' requires",
        ],
    ),
    (
        "inside one rule: its check, its guard, its guard against its check",
        [
            ("self", None, f"{REQ} and {BAN}", "retry"),
            ("guard", f"{REQ} and {BAN}", 'output contains "x"', "retry"),
            ("cross", REQ, BAN, "retry"),
            (
                "both",
                REQ,
                f'output contains "退款时间" and not output contains "退款" and {BAN}',
                "retry",
            ),
        ],
        [
            "self.check:1:28: CH110 rule 'self' requires '保证收益' and forbids '保证'",
            "guard.when:1:28: CH111 rule 'guard' can never fire: its when-guard requires "
            "'保证收益' and forbids '保证'",
            "cross.check:1:1: CH110 rule 'cross' can never pass: its when-guard requires "
            "'保证收益' and its check forbids '保证'",
            "both.check:1:28: CH110 rule 'both' requires '退款时间' and forbids '退款'",
        ],
    ),
    (
        "a repair inserts what unguarded rules ban, each rule's bans in sorted order",
        [
            ("a", None, 'output contains "x"', 'fix append "（保证收益）"'),
            ("b", None, 'not output contains any ["收益", "保证", "亏损"]', "retry"),
            ("c", GUARD, BAN, "retry"),
            ("d", None, 'not input contains "保证"', "retry"),
            ("e", None, 'not output contains "（" unless followed by "注"', "retry"),
        ],
        [
            "a.on_fail:1:1: CH110 the repair of rule 'a' inserts '保证', which rule 'b' forbids",
            "a.on_fail:1:1: CH110 the repair of rule 'a' inserts '收益', which rule 'b' forbids",
        ],
    ),
    (
        "prepend, replace ... with, and the rule's own ban",
        [
            ("a", None, 'not output contains "稳赚"', 'fix prepend "稳赚不赔"'),
            ("b", GUARD, 'output contains "x"', 'fix replace "保本" with "保证收益"'),
            ("c", None, 'output contains "x"', 'fix replace "保证" "稳赚"'),
            ("d", None, BAN, "block"),
        ],
        [
            "a.on_fail:1:1: CH110 the repair of rule 'a' inserts '稳赚', which rule 'a' forbids",
            "b.on_fail:1:1: CH110 the repair of rule 'b' inserts '保证', which rule 'd' forbids",
        ],
    ),
    (
        "the empty literal is inside everything",
        [
            ("a", None, 'output contains "退款"', 'fix append "x"'),
            ("b", None, 'not output contains ""', "retry"),
            ("c", None, 'output contains ""', "retry"),
        ],
        [
            "b.check:1:1: CH110 rule 'b' forbids '', which rule 'a' requires",
            "b.check:1:1: CH110 rule 'b' forbids '', which rule 'c' requires",
            "a.on_fail:1:1: CH110 the repair of rule 'a' inserts '', which rule 'b' forbids",
        ],
    ),
]


@pytest.mark.parametrize(("specs", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pinned_cases(specs: list[Spec], expected: list[str]) -> None:
    rules = views(specs)
    found = analyze(rules)
    assert headlines(found) == expected
    assert found == pairwise_analyze(rules)


# ---- generated rule sets against the oracle ---------------------------------------------------

# Few characters, so that literals often contain, equal or overlap one another.
_CHARS = ("保", "证", "a", "ab")
_SUBJECTS = ("output", "output", "output", "input", "memory.note")
_GUARDS = (None, None, 'input contains "a"', "input  contains 'a'", 'input contains "保"')


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_CHARS) for _ in range(rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4))))


def _words(rng: random.Random) -> str:
    return "[" + ", ".join(f'"{_word(rng)}"' for _ in range(rng.randint(0, 3))) + "]"


def _conjunct(rng: random.Random, depth: int = 0) -> str:
    s = rng.choice(_SUBJECTS)
    pieces = [
        f'{s} contains "{_word(rng)}"',
        f'{s} contains "{_word(rng)}"',
        f"{s} contains all {_words(rng)}",
        f"{s} contains any {_words(rng)}",
        f'not {s} contains "{_word(rng)}"',
        f'not {s} contains "{_word(rng)}"',
        f"not {s} contains any {_words(rng)}",
        f"not {s} contains all {_words(rng)}",
        f'not {s} contains "{_word(rng)}" unless preceded by "不"',
        f"{s} matches /{_word(rng) or 'x'}/",
        f'not ({s} contains "{_word(rng)}")',
    ]
    if depth < 2:
        pieces.append(f"({_conjunct(rng, depth + 1)} or {_conjunct(rng, depth + 1)})")
        pieces.append(f"({_conjunct(rng, depth + 1)} and {_conjunct(rng, depth + 1)})")
    return rng.choice(pieces)


def _condition(rng: random.Random) -> str:
    return " and ".join(_conjunct(rng) for _ in range(rng.randint(1, 3)))


def _on_fail(rng: random.Random) -> str:
    w = _word(rng)
    return rng.choice(
        (
            "retry",
            "block",
            f'fix append "{w}"',
            f'fix prepend "{w}"',
            f'fix replace "x" with "{w}"',
            f'fix replace "x" "{w}"',
            f"fix append {_words(rng)}",
        )
    )


def generated(seed: int, size: int) -> list[Spec]:
    rng = random.Random(seed)
    specs: list[Spec] = []
    for i in range(size):
        when = rng.choice(_GUARDS)
        if rng.random() < 0.3:
            when = _condition(rng)
        specs.append((f"r{i}", when, _condition(rng), _on_fail(rng)))
    return specs


def _kind(d: Diagnostic) -> str:
    for marker, kind in (
        ("can never fire", "guard"),
        ("can never pass", "guard-check"),
        ("the repair of", "repair"),
        ("which rule", "between rules"),
    ):
        if marker in d.message:
            return kind
    return "check"


@pytest.mark.slow  # compiles generated rule sets (about 5 s)
def test_generated_rule_sets_report_what_every_pair_reported() -> None:
    kinds: Counter[str] = Counter()
    for seed in range(250):
        rules = views(generated(seed, 1 + seed % 12))
        found = analyze(rules)
        assert found == pairwise_analyze(rules), f"seed {seed}"
        kinds.update(_kind(d) for d in found)
    big = views(generated(10_000, 400))
    found = analyze(big)
    assert found == pairwise_analyze(big)
    kinds.update(_kind(d) for d in found)
    # every kind of finding is exercised, many times
    assert kinds == {
        "check": 68,
        "guard": 13,
        "guard-check": 36,
        "between rules": 1188,
        "repair": 3298,
    }


# ---- the index -------------------------------------------------------------------------------


def test_contained_finds_each_literal_inside_a_text_once_per_subject() -> None:
    index = Contained(
        [
            (("output", "保证"), "g", 0),
            (("output", "证收"), "g", 1),
            (("output", "保证收益"), "g", 2),
            (("output", "保证"), "h", 3),
            (("output", "保证"), "g", 4),
            (("output", ""), "g", 5),
            (("input", "收益"), "g", 6),
        ]
    )
    found = {lit: dict(owners) for lit, owners in index.inside("output", "保证收益保证")}
    assert found == {
        "": {"g": [5]},
        "保证": {"g": [0, 4], "h": [3]},
        "证收": {"g": [1]},
        "保证收益": {"g": [2]},
    }
    assert [lit for lit, _ in index.inside("input", "保证收益")] == ["收益"]
    assert index.inside("memory.note", "保证收益") == []


# ---- the work: rules, not pairs of rules --------------------------------------------------------


def _contains(word: str) -> A.Contains:
    return A.Contains(A.Path(A.Name("output")), "one", A.Terms((word,)))


def one_word_rules(n: int, clashes: int) -> list[RuleView]:
    """``n`` unguarded rules of one literal each, half requiring a word and half banning one,
    all words distinct and of one length; the last ``clashes`` bans repeat a required word."""
    words = [f"词{i:05d}" for i in range(n)]
    out = []
    for i, word in enumerate(words):
        if i % 2 == 0:
            check: A.Expr = _contains(word)
        else:
            ban = words[i - 1] if i >= n - 2 * clashes else word
            check = A.Not(_contains(ban))
        out.append(
            RuleView(
                f"r{i}",
                None,
                check,
                A.Action("retry"),
                _locator(f"r{i}", "check"),
                _locator(f"r{i}", "when"),
                _locator(f"r{i}", "on_fail"),
            )
        )
    return out


def _counting_clash(calls: list[int], real: Clash) -> Clash:
    def counted(
        requires: dict[analyze_mod.Lit, A.Span], forbids: dict[analyze_mod.Lit, A.Span]
    ) -> tuple[analyze_mod.Lit, analyze_mod.Lit] | None:
        calls[0] += 1
        return real(requires, forbids)

    return counted


@pytest.mark.parametrize(
    ("n", "clashes", "calls"),
    [(300, 0, 900), (3_000, 0, 9_000), (3_000, 7, 9_007)],
)
def test_conflict_search_examines_only_the_pairs_that_clash(
    monkeypatch: pytest.MonkeyPatch, n: int, clashes: int, calls: int
) -> None:
    """Three ``clash`` calls per rule (its guard, its check, guard against check), plus one per
    pair of rules that does clash: for 3,000 rules 9,000 calls, where every pair made 9,006,000."""
    rules = one_word_rules(n, clashes)
    count = [0]
    monkeypatch.setattr(analyze_mod, "clash", _counting_clash(count, analyze_mod.clash))
    found = analyze(rules)
    assert count[0] == calls
    assert [d.message for d in found] == [
        f"rule 'r{i}' forbids '词{i - 1:05d}', which rule 'r{i - 1}' requires"
        for i in range(n - 2 * clashes + 1, n, 2)
    ]


def test_every_pair_costs_the_square() -> None:
    count = [0]
    rules = one_word_rules(300, 0)
    assert (
        pairwise_analyze(rules, _counting_clash(count, analyze_mod.clash)) == analyze(rules) == []
    )
    assert count[0] == 3 * 300 + 300 * 299
