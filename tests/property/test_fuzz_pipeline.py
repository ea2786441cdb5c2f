"""Fuzzing the pack pipeline: whatever goes in, only Diagnostics come out.

Acceptance point: "Property-based tests (hypothesis, >= 2,000 examples in CI) feed random text
and mutated valid packs to the loader, parser and compiler: only Diagnostics come out, never
another exception."

Properties (examples per run in the ``ci`` profile, scaled by ``CHARTER_FUZZ_SCALE``):

1. the DSL parser on random and near-valid text: an AST or a ``DSLSyntaxError`` with sane
   offsets (600), and grammar-generated valid expressions and actions always parse (300);
2. ``load_pack`` on random bytes / text / YAML as pack.yaml and rules.yaml: Diagnostics only,
   each located in one of the pack's files, within its bounds (400);
3. ``compile_path`` on mutated copies of the real packs in ``domains/`` and ``rulesets/``;
   a pack that compiles checks random texts (600);
4. grammar-generated rules compiled and run on random texts and contexts (300);
5. ``Engine.check`` on the first-party packs: total, deterministic, consistent (400).

Open crashes are listed in ``KNOWN_CRASHES``. Each has a minimal reproduction below, marked
``xfail(strict=True)``: when the framework is fixed the reproduction passes, the strict xfail
turns red, and the entry must be removed here (the reproduction stays as a regression test, as
for the crashes already fixed). Until then a property that hits a known crash counts it (see the
terminal summary) instead of failing; any other exception fails.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, TypeVar, cast

import lark
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.stages import compile_pack
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location
from charter.dsl import ast as A
from charter.dsl.parser import DSLSyntaxError, parse_action, parse_expr
from charter.pack.loader import display_path, load_pack
from charter.plugins.host import default_registry
from charter.reflect.engine import VERDICTS, CheckResult, Engine
from tests.support.hypo import examples

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]

REPO = Path(__file__).resolve().parents[2]
PACK_DIRS: tuple[str, ...] = tuple(
    sorted(
        str(p.parent.relative_to(REPO))
        for pattern in ("domains/*/pack.yaml", "rulesets/*/pack.yaml")
        for p in REPO.glob(pattern)
    )
)
ORIGINAL: dict[str, str] = {
    str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
    for d in PACK_DIRS
    for p in sorted((REPO / d).rglob("*.yaml"))
}

# ---- settings ---------------------------------------------------------------------------------

_SCALE = float(os.environ.get("CHARTER_FUZZ_SCALE", "1"))
# a mutated pack may be large and slow to generate: neither is a failure of the pipeline
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]


def fuzz_settings(count: int) -> Callable[[T], T]:
    """The loaded profile (``ci`` or ``dev``, tests/conftest.py) with ``count`` examples,
    scaled by ``CHARTER_FUZZ_SCALE``; and the ``slow`` marker: fuzz at full size runs in
    ``make test`` (2,600 examples, about 90 s), not in the inner loop."""
    chosen = settings(
        max_examples=max(1, examples(int(count * _SCALE))), suppress_health_check=_QUIET
    )

    def apply(test: T) -> T:
        return cast(T, pytest.mark.slow(chosen(test)))  # fuzz at full size

    return apply


# ---- shared state, built once per module ------------------------------------------------------


@cache
def registry() -> Registry:
    reg, problems = default_registry()
    assert not problems, [d.headline() for d in problems]
    return reg


@cache
def real_engines() -> dict[str, Engine]:
    out: dict[str, Engine] = {}
    for d in PACK_DIRS:
        pack, diags = compile_path(REPO / d, registry(), cache_dir=None)
        assert pack is not None, [x.headline() for x in diags]
        out[d] = Engine(pack, registry())
    return out


# ---- known crashes ----------------------------------------------------------------------------


def _chain(exc: BaseException) -> Iterable[BaseException]:
    """The exception, what lark wrapped in it, and its causes."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        if isinstance(e, lark.exceptions.VisitError):
            todo.append(e.orig_exc)
        todo += [e.__cause__, e.__context__]


def _raised_in(exc: BaseException, fragment: str) -> bool:
    return any(
        fragment in frame.filename
        for e in _chain(exc)
        for frame in traceback.extract_tb(e.__traceback__)
    )


def _is(exc: BaseException, kind: type[BaseException], text: str = "") -> bool:
    return any(isinstance(e, kind) and text in str(e) for e in _chain(exc))


_YAMLSRC = os.path.join("charter", "pack", "yamlsrc.py")
# Open crashes. Fixed ones (regex flag clashes, deep nesting, huge DSL integers, over-long
# extends names, NaN / huge / overflowing numbers in the engine) are regression tests below.
KNOWN_CRASHES: dict[str, Callable[[BaseException], bool]] = {}


class KnownCrash(Exception):
    pass


def known_crash(exc: BaseException) -> str | None:
    return next((name for name, match in KNOWN_CRASHES.items() if match(exc)), None)


def guarded(counter: Counter[str], fn: Callable[[], T]) -> T:
    """Run ``fn``; a known crash is counted and re-raised as KnownCrash, anything else fails."""
    try:
        return fn()
    except Exception as exc:
        name = known_crash(exc)
        if name is None:
            raise
        counter[f"known crash tolerated: {name}"] += 1
        raise KnownCrash(name) from exc


# ---- invariants -------------------------------------------------------------------------------

_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")  # what PyYAML counts as a line break


def _lines(text: str) -> list[str]:
    return _BREAK.split(text)


def assert_diagnostics(
    diags: object, files: Mapping[str, str], dirs: Iterable[str] = ()
) -> list[Diagnostic]:
    """A list of Diagnostics, each in one of ``files`` (or a pack directory), within bounds."""
    assert isinstance(diags, list), type(diags)
    allowed_dirs = set(dirs)
    for d in diags:
        assert isinstance(d, Diagnostic), repr(d)
        assert d.message.strip(), d
        loc = d.location
        assert isinstance(loc, Location)
        if loc.path in allowed_dirs:
            continue
        assert loc.path in files, (loc.path, sorted(files), d.headline())
        lines = _lines(files[loc.path])
        for line, col in ((loc.line, loc.col), (loc.end_line, loc.end_col)):
            if line == 0:
                assert col == 0, d
                continue
            assert 1 <= line <= len(lines), (d.headline(), len(lines))
            assert 1 <= col <= len(lines[line - 1]) + 1, (d.headline(), lines[line - 1])
        if loc.line and loc.end_line:
            assert (loc.line, loc.col) <= (loc.end_line, loc.end_col), d
    return diags


def assert_compiled(result: object, files: Mapping[str, str], dirs: Iterable[str]) -> Any:
    assert isinstance(result, tuple) and len(result) == 2, result
    pack, diags = result
    assert_diagnostics(diags, files, dirs)
    assert pack is None or isinstance(pack, CompiledPack), type(pack)
    if pack is not None:
        assert not [d.headline() for d in diags if d.is_error]
    else:
        assert any(d.is_error for d in diags), "no pack and no error to say why"
    return pack


def effective_action(engine: Engine, rule_id: str) -> str:
    rule = engine.pack.rule(rule_id)
    return rule.on_unfixed if rule.action.kind == "fix" else rule.action.kind


def assert_result(
    engine: Engine, result: object, output: str, ctx: Mapping[str, Any] | None = None
) -> CheckResult:
    """What ``Engine.check`` guarantees about one result."""
    assert isinstance(result, CheckResult)
    assert result.verdict in VERDICTS, result.verdict
    assert result.text == output
    ids = [r.id for r in engine.pack.rules]
    assert list(result.outcomes) == ids
    assert set(result.outcomes.values()) <= {"pass", "fail", "skip"}
    assert dict(result.outcomes) == engine.evaluate(output, "", ctx)
    for f in result.findings:
        assert f.rule_id in ids
        assert all(0 <= s <= e for s, e in f.spans), f
    if any(engine.pack.rule(r).action.kind == "block" for r in result.failed):
        # a failing block rule: no repair is tried (a fix rule's on_unfixed: block is not this)
        assert result.verdict == "block" and result.fixed_text is None
    if result.fixed_text is not None:
        assert result.fixed_text != output
    if result.verdict == "block":
        assert result.final_text == engine.pack.messages.get("safe", "")
    else:
        assert result.final_text == (output if result.fixed_text is None else result.fixed_text)
    if result.verdict == "pass":
        assert result.fixed_text is None
    if result.verdict == "fixed":
        # the repaired text fails no rule whose failure ranks above a fix
        assert result.fixed_text is not None
        after = engine.evaluate(result.fixed_text, "", ctx)
        stuck = [r for r, o in after.items() if o == "fail"]
        assert all(effective_action(engine, r) == "flag" for r in stuck), stuck
    return result


# ---- strategies: text -------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


KEYWORDS = _words(
    "or and not contains any all matches mentions in unless by near within has twin unit "
    "decimals value len count true false fix every some no preceded followed block escalate "
    "retry flag found"
)
EXTRACTORS = ("money", "money_upper", "date", "percent", "url", "email", "phone", "drug", "tax_doc")
SUBJECTS = ("output", "input", "context", "memory", "goal", "skill", "pack")
REPAIRS = ("append", "prepend", "replace", "reformat", "annotate")
DSL_TOKENS: tuple[str, ...] = (
    *KEYWORDS,
    *EXTRACTORS,
    *SUBJECTS,
    *REPAIRS,
    *_words("mony Date urls outptu contain with x _ 0 2 3.5 1. .5 007 -1 20 [0] [1.5] 元 绝对"),
    *_words("pack.thresholds.uncertainty context.low_confidence memory.min_confidence"),
    *_words(
        "( ) [ ] , . == != <= >= < > = + - ! && || { } # : 😀 “ ” ‘ ’ 「 」 请遵医嘱 （请自行核实）"
    ),
    *_words(r""" " ' "" "请遵医嘱" '元' "a\"b" "\u4e2d" "\u12" "\ud800" "\n" "\ / // \ """),
    *_words(r"/\d+/ /[a-z]+/i /^\d{4}-\d{2}-\d{2}$/ /a\/b/ /(/ /[/ /a{2,1}/ /x/q /x/au"),
    *_words(r"/(?V1)x/ /(?u)x/a"),  # clashing flags: once a ValueError, now CH105
    *("\t", "\n", ": ", "\x00", "\u2028", "\x85"),
)
WEIRD_CHARS = (
    "\"'/\\()[]{},.:;#!?<>=+-*&|^%$@`~ \t\n\r\x00\x85\u2028中文元￥¥“”‘’（）【】「」、。😀"
)

_sep = st.sampled_from(["", " ", " ", " ", "  ", "\n", "\t"])
_piece = st.one_of(
    st.sampled_from(DSL_TOKENS),
    st.text(alphabet=st.sampled_from(WEIRD_CHARS), max_size=4),
    st.text(max_size=6),
)
dsl_soup = st.lists(st.tuples(_piece, _sep), max_size=24).map(
    lambda parts: "".join(p + s for p, s in parts)
)


def _mutate_text(text: str, draw: Draw) -> str:
    """One small edit of a string: the near-misses that reach deep into the grammar."""
    if not text:
        return str(draw(_piece))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 8)))
    how = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "duplicate"]))
    if how == "delete":
        return text[:i] + text[j:]
    if how == "insert":
        return text[:i] + str(draw(_piece)) + text[i:]
    if how == "replace":
        return text[:i] + str(draw(_piece)) + text[j:]
    if how == "truncate":
        return text[:i]
    return text[:j] + text[i:j] + text[j:]


@st.composite
def mutated(draw: Draw, base: st.SearchStrategy[str]) -> str:
    text: str = draw(base)
    for _ in range(draw(st.integers(1, 3))):
        text = _mutate_text(text, draw)
    return text


# ---- strategies: valid DSL (grammar-guided) ---------------------------------------------------

RESERVED = frozenset(KEYWORDS)
name_ = st.one_of(
    st.sampled_from(("x", "name", "level", "order", "notes", "in_stock", "value1", "items")),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,7}", fullmatch=True).filter(
        lambda s: s not in RESERVED
    ),
)
extractor_ = st.sampled_from(EXTRACTORS)
small_int = st.integers(0, 30).map(str)
number_ = st.one_of(
    st.integers(0, 10**6).map(str),
    st.tuples(st.integers(0, 999), st.integers(0, 99)).map(lambda t: f"{t[0]}.{t[1]}"),
)


def _yaml_escape(s: str) -> str:
    """A YAML double-quoted scalar that loads back as exactly ``s``."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


_str_body = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x85\u2028\u2029"),
    max_size=6,
)
string_ = st.one_of(
    st.sampled_from(['"请遵医嘱"', '"元"', '"（请自行核实）"', '"[需人工确认]"', "'x'", '"100%"']),
    _str_body.map(lambda s: json.dumps(s, ensure_ascii=False)),
    _str_body.filter(lambda s: not set(s) & set("'\\\n\r")).map(lambda s: f"'{s}'"),
)
strlist_ = st.tuples(st.lists(string_, max_size=4), st.booleans()).map(
    lambda t: "[" + ", ".join(t[0]) + ("," if t[1] and t[0] else "") + "]"
)
terms_ = st.one_of(string_, strlist_)
# "(?V1)x" clashes with the VERSION0 flag the compiler sets: once a ValueError, now CH105
regex_ = st.tuples(
    st.sampled_from(
        (*_words(r"\d+ ^\d{4}-\d{2}-\d{2}$ [a-z]+ 元 a\/b (?:x|y) 请.*遵医嘱 \s"), "(?V1)x")
    ),
    st.sampled_from(["", "i", "im", "sx", "a", "u"]),
).map(lambda t: f"/{t[0]}/{t[1]}")
segment_ = st.one_of(name_.map(lambda n: "." + n), small_int.map(lambda n: f"[{n}]"))
path_ = st.one_of(
    st.sampled_from(
        ("output", "input", "context.x", "memory.min_confidence", "pack.thresholds.uncertainty")
    ),
    st.tuples(st.sampled_from(SUBJECTS), st.lists(segment_, max_size=3)).map(
        lambda t: t[0] + "".join(t[1])
    ),
)
text_subject_ = st.sampled_from(("output", "input", "context.reply", "memory.summary"))
cmp_ = st.sampled_from(("==", "!=", "<", "<=", ">", ">="))
addop_ = st.sampled_from(("+", "-"))
within_ = st.one_of(st.just(""), small_int.map(lambda n: f" within {n}"))
target_ = st.one_of(terms_, extractor_, name_)

_simple_operand = st.one_of(
    number_,
    string_,
    st.sampled_from(("true", "false")),
    path_,
    path_.map(lambda p: f"len({p})"),
    st.tuples(extractor_, path_).map(lambda t: f"count({t[0]} in {t[1]})"),
)
operand_ = st.one_of(
    _simple_operand,
    st.tuples(st.sampled_from(("-", "+", "- ", "--")), _simple_operand).map("".join),
)
sum_ = st.tuples(operand_, st.lists(st.tuples(addop_, operand_), max_size=2)).map(
    lambda t: t[0] + "".join(f" {op} {v}" for op, v in t[1])
)

item_atom_ = st.one_of(
    regex_.map(lambda r: f"matches {r}"),
    extractor_.map(lambda n: f"has twin {n}"),
    st.one_of(st.just(""), terms_.map(lambda t: " " + t)).map(lambda t: "has unit" + t),
    st.tuples(cmp_, small_int).map(lambda t: f"decimals {t[0]} {t[1]}"),
    st.tuples(cmp_, sum_).map(lambda t: f"value {t[0]} {t[1]}"),
    st.tuples(st.sampled_from(("preceded", "followed")), target_, within_).map(
        lambda t: f"{t[0]} by {t[1]}{t[2]}"
    ),
    st.tuples(target_, within_).map(lambda t: f"near {t[0]}{t[1]}"),
    path_.map(lambda p: f"found in {p}"),
)


def _item_extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    conj = st.lists(inner, min_size=1, max_size=3).map(" and ".join)
    disj = st.lists(conj, min_size=1, max_size=2).map(" or ".join)
    return st.one_of(inner.map(lambda p: "not " + p), disj.map(lambda p: f"({p})"))


item_pred_ = st.recursive(item_atom_, _item_extend, max_leaves=5)
unless_ = st.tuples(st.sampled_from(("preceded", "followed")), terms_, within_).map(
    lambda t: f" unless {t[0]} by {t[1]}{t[2]}"
)
unlesses_ = st.lists(unless_, max_size=2).map("".join)
call_arg_ = st.one_of(path_, string_, strlist_, regex_, number_)

predicate_ = st.one_of(
    st.tuples(text_subject_, string_, unlesses_).map(lambda t: f"{t[0]} contains {t[1]}{t[2]}"),
    st.tuples(text_subject_, st.sampled_from(("any", "all")), strlist_, unlesses_).map(
        lambda t: f"{t[0]} contains {t[1]} {t[2]}{t[3]}"
    ),
    st.tuples(text_subject_, regex_).map(lambda t: f"{t[0]} matches {t[1]}"),
    st.tuples(text_subject_, extractor_, st.one_of(st.just(""), st.tuples(target_, within_))).map(
        lambda t: f"{t[0]} mentions {t[1]}" + (f" near {t[2][0]}{t[2][1]}" if t[2] else "")
    ),
    st.tuples(st.sampled_from(("every", "some", "no")), extractor_, text_subject_, item_pred_).map(
        lambda t: f"{t[0]} {t[1]} in {t[2]} {t[3]}"
    ),
    st.tuples(sum_, cmp_, sum_).map(" ".join),
    st.tuples(sum_, strlist_).map(lambda t: f"{t[0]} in {t[1]}"),
    st.tuples(name_, st.lists(call_arg_, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
)


def _expr_extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, inner).map(lambda t: f"{t[0]} and {t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]} or {t[1]}"),
        inner.map(lambda e: "not " + e),
        inner.map(lambda e: f"({e})"),
    )


valid_expr = st.recursive(predicate_, _expr_extend, max_leaves=6)
repair_arg_ = st.one_of(string_, strlist_, name_)
valid_action = st.one_of(
    st.sampled_from(("block", "escalate", "retry", "flag")),
    st.tuples(
        st.sampled_from((*REPAIRS, "mask_phone", "x")), st.lists(repair_arg_, max_size=3)
    ).map(lambda t: "fix " + " ".join([t[0], *t[1]])),
    st.sampled_from(
        (
            'fix append "（请遵医嘱）"',
            'fix prepend "[需人工确认]"',
            'fix replace ["最低价", "最便宜"] with "超值"',
            "fix reformat money",
            "fix reformat date",
            'fix annotate "（请自行核实）"',
        )
    ),
)


def _real_dsl() -> list[str]:
    out: list[str] = []
    for rel, text in ORIGINAL.items():
        if rel.endswith("rules.yaml"):
            for rule in yaml.safe_load(text).get("rules", []):
                out += [rule[k] for k in ("check", "when", "on_fail") if k in rule]
    return out


REAL_DSL = tuple(_real_dsl())
random_dsl_text = st.one_of(
    st.text(max_size=80),
    dsl_soup,
    mutated(valid_expr),
    mutated(valid_action),
    mutated(st.sampled_from(REAL_DSL)),
)

# ---- strategies: model outputs and contexts ---------------------------------------------------

SPRINKLES = _words(
    "¥12,345.60 ¥10.5 299元 299.00元 5000.00元 1,2,3元 ￥0.001 ¥1e10 壹万贰仟叁佰肆拾伍元陆角 伍仟元整 "
    "零元 5.2% 100% 1100% 百分之五 0.000001% 2024-05-01 2024年3月8日 5月1日 2024年13月45日 "
    "9999-99-99 0000-00-00 ２０２４年 2024/02/30 https://www.example.com/help www.example.org "
    "http://[::1]:80/ https:// a@b.cn 138-1234-5678 13812345678 财税〔2023〕1号 布洛芬 对乙酰氨基酚 "
    "最低价 全网最低 肯定 不能保证 绝对值 保证金 请遵医嘱 （请自行核实） [需人工确认] "
    "历史业绩不预示未来表现 你得了 确诊为 优惠券 有效期 税率 收益 年化"
)
_cjk_ascii = st.characters(
    categories=["Lu", "Ll", "Nd", "Lo", "Po", "Ps", "Pe", "Zs", "Sm", "Sc"],
    max_codepoint=0x9FFF,
)


def _real_outputs() -> list[str]:
    out: list[str] = []
    for rel, text in ORIGINAL.items():
        if rel.endswith("rules.yaml"):
            out += [t["output"] for t in yaml.safe_load(text).get("tests", []) if "output" in t]
    return out


REAL_OUTPUTS = tuple(_real_outputs())
engine_text = st.one_of(
    st.lists(
        st.one_of(
            st.sampled_from(SPRINKLES),
            st.text(alphabet=_cjk_ascii, max_size=8),
            st.text(max_size=4),
        ),
        max_size=10,
    ).map("".join),
    mutated(st.sampled_from(REAL_OUTPUTS)),
)
_ctx_number = st.one_of(
    st.floats(0, 1),
    st.integers(-10, 10),
    st.sampled_from(("0.5", "0.95", "abc", "", "1,000")),
    st.none(),
)
context_ = st.fixed_dictionaries(
    {},
    optional={
        "low_confidence": st.one_of(st.booleans(), st.none(), st.just("true"), st.integers(0, 1)),
        "memory": st.fixed_dictionaries({}, optional={"min_confidence": _ctx_number}),
        "x": _ctx_number,
        "reply": st.text(max_size=10),
    },
)
# Numbers that once crashed the engine (InvalidOperation on NaN, ValueError on a 4400-digit
# int, decimal.Overflow in arithmetic); every verdict must survive them.
_hostile_number = st.sampled_from(
    (float("nan"), float("inf"), "NaN", "-Infinity", "1e999999999", 10**4400)
)
hostile_context = st.one_of(
    context_,
    st.fixed_dictionaries(
        {"memory": st.fixed_dictionaries({"min_confidence": _hostile_number}), "x": _hostile_number}
    ),
)

# ---- 1. the parser ----------------------------------------------------------------------------

EXPR_TYPES: tuple[type, ...] = (A.Contains, A.Matches, A.Mentions, A.Quantified, A.Compare)
EXPR_TYPES += (A.Member, A.Call, A.And, A.Or, A.Not)


def assert_parse_total(text: str, counter: Counter[str]) -> None:
    """Each entry point returns its AST or raises DSLSyntaxError within the text."""
    for fn, types in ((parse_expr, EXPR_TYPES), (parse_action, (A.Action,))):
        try:
            node = guarded(counter, partial(fn, text))
        except KnownCrash:
            continue
        except DSLSyntaxError as exc:
            assert isinstance(exc.message, str) and exc.message, repr(exc)
            assert isinstance(exc.hint, str)
            assert isinstance(exc.start, int) and isinstance(exc.end, int)
            assert 0 <= exc.start <= exc.end <= len(text) + 1, (exc.start, exc.end, len(text))
            continue
        assert isinstance(node, types), node
        for n in A.walk(node):
            start, end = n.span  # type: ignore[attr-defined]
            assert 0 <= start <= end <= len(text), (n, len(text))


@fuzz_settings(600)
@given(text=random_dsl_text)
def test_parser_on_random_text(text: str, example_counter: Counter[str]) -> None:
    example_counter["1a parser: random text"] += 1
    assert_parse_total(text, example_counter)


@fuzz_settings(300)
@given(expr=valid_expr, action=valid_action, pad=st.tuples(_sep, _sep))
def test_parser_accepts_generated_expressions(
    expr: str, action: str, pad: tuple[str, str], example_counter: Counter[str]
) -> None:
    example_counter["1b parser: grammar-generated"] += 1
    text = pad[0] + expr + pad[1]
    node = parse_expr(text)
    assert isinstance(node, EXPR_TYPES)
    assert node == parse_expr(expr)  # spans aside, whitespace changes nothing
    assert isinstance(parse_action(action), A.Action)
    for n in A.walk(node):
        start, end = n.span  # type: ignore[attr-defined]
        assert 0 <= start <= end <= len(text)


# ---- 2. the loader and the schema -------------------------------------------------------------

YAML_TOKENS: tuple[str, ...] = (
    *_words("rules: tests: extends: requires: - id: a-rule check: when: on_fail: retry"),
    *_words("[ ] { } , &a *a *b <<: !!str !!int !!map !!python/object:os.system !custom # '"),
    *_words('" | >- |+2 ~ null yes no 0x1F 0o17 1e3 .nan -.inf 2024-01-01 @ ` 中文 😀'),
    *_words(r'"\x4" "\u12" "\U0001F600"'),
    "\\",
    *("name: x", "version: 0.1.0", "- ", "id: ", "check: ", "when: ", "on_fail: ", "describe: d"),
    *('fix append "x"', 'output contains "x"', "override: true", "  ", "    ", ": ", "? "),
    *("\n", "\n", "\t", "---\n", "...\n", "%YAML 1.2\n", "%TAG ! tag:x,2000:\n", "<<: *a"),
    *("\ufeff", "\x85", "\u2028", "\r\n", "\r", '"\\\n"', "\x00", "\x07", "\ufffe"),
    "9" * 4400,  # known crash yaml-huge-integer
)
_yaml_key = st.sampled_from(
    _words(
        "name version kind description locale extends requires charter plugins thresholds "
        "messages safe rules tests id describe message when check on_fail on_unfixed override "
        "tags output input context pass fail verdict fixed unknown"
    )
)
_yaml_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    st.sampled_from(
        ("0.1.0", ">=0.1", "<0", "~=x", "retry", "block", "flag", 'fix append "x"', "a-rule")
    ),
    st.sampled_from(REAL_DSL),
    st.sampled_from(PACK_DIRS),
)


def _yaml_extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(_yaml_key, st.text(max_size=4)), inner, max_size=5),
    )


yaml_data = st.recursive(_yaml_scalar, _yaml_extend, max_leaves=16)
_rule_fields = {
    "id": st.sampled_from(("a", "b", "no-absolute-terms", "a", "b", "A", "1x", "")),
    "describe": st.sampled_from(("d", "规则", "")),
    "check": st.one_of(st.sampled_from(REAL_DSL), valid_expr, mutated(valid_expr)),
    "on_fail": st.one_of(valid_action, mutated(valid_action)),
}
_rule_extras = {
    "when": st.one_of(valid_expr, mutated(valid_expr)),
    "message": st.text(max_size=5),
    "on_unfixed": st.sampled_from(("retry", "block", "flag", "fix", 1)),
    "override": st.one_of(st.booleans(), st.just("yes")),
    "tags": st.one_of(st.lists(st.sampled_from(("a", "b", ""))), st.text(max_size=3)),
    "zzz": st.just(1),
}
_rule_dict = st.one_of(
    # all required keys, mostly well typed: these reach the compile stages
    st.fixed_dictionaries(_rule_fields, optional=_rule_extras),
    # any key may be missing or of the wrong type
    st.fixed_dictionaries(
        {},
        optional={
            **{k: st.one_of(v, _yaml_scalar) for k, v in _rule_fields.items()},
            **_rule_extras,
        },
    ),
)
_case_dict = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.just("c"), _yaml_scalar),
        "output": st.one_of(engine_text, _yaml_scalar),
        "pass": st.lists(st.sampled_from(("a", "b", "zz"))),
        "fail": st.lists(st.sampled_from(("a", "b", "zz"))),
        "verdict": st.one_of(st.sampled_from(VERDICTS), _yaml_scalar),
        "fixed": st.one_of(st.text(max_size=5), _yaml_scalar),
        "context": st.one_of(context_, _yaml_scalar),
    },
)
rules_like = st.fixed_dictionaries(
    {"rules": st.lists(_rule_dict, max_size=3)},
    optional={"tests": st.lists(_case_dict, max_size=2)},
)
pack_like = st.fixed_dictionaries(
    {},
    optional={
        "name": _yaml_scalar,
        "version": st.one_of(st.just("0.1.0"), _yaml_scalar),
        "kind": st.sampled_from(("domain", "ruleset", "x")),
        "extends": st.one_of(st.lists(_yaml_scalar, max_size=2), _yaml_scalar),
        "requires": st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "charter": st.sampled_from((">=0.1", "<0.1", "nonsense", "")),
                    "plugins": st.lists(st.sampled_from(("charter-zh", "nope")), max_size=2),
                },
            ),
            _yaml_scalar,
        ),
        "thresholds": st.one_of(
            st.dictionaries(st.sampled_from(("uncertainty", "max_retries", "x")), _yaml_scalar),
            _yaml_scalar,
        ),
        "messages": st.one_of(
            st.dictionaries(st.sampled_from(("safe", "escalate", "x")), _yaml_scalar), _yaml_scalar
        ),
        "zzz": st.just(1),
    },
)


def _dump(data: object, flow: bool | None) -> str:
    return yaml.safe_dump(data, allow_unicode=True, default_flow_style=flow, sort_keys=False)


@st.composite
def yaml_file(draw: Draw, like: st.SearchStrategy[Any]) -> bytes:
    kind = draw(st.sampled_from(["bytes", "text", "soup", "data", "broken-utf8", *["like"] * 4]))
    if kind == "bytes":
        return bytes(draw(st.binary(max_size=200)))
    if kind == "text":
        return str(draw(st.text(max_size=200))).encode("utf-8", "surrogatepass")
    if kind == "soup":
        parts = draw(st.lists(st.one_of(st.sampled_from(YAML_TOKENS), _piece), max_size=40))
        return "".join(parts).encode("utf-8", "surrogatepass")
    flow = draw(st.sampled_from([None, True, False]))
    data = draw(yaml_data if kind == "data" else like)
    text = _dump(data, flow)
    if kind == "broken-utf8":
        at = draw(st.integers(0, len(text)))
        raw = text.encode()
        cut = len(text[:at].encode())
        bad: bytes = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80"]))
        return raw[:cut] + bad
    return text.encode("utf-8")


VALID_PACK_YAML = b"name: fuzz\nversion: 0.1.0\n"


@fuzz_settings(400)
@given(
    pack_yaml=st.sampled_from(
        [st.just(VALID_PACK_YAML)] * 3 + [yaml_file(pack_like)] * 2 + [st.none(), st.just(b"/")]
    ).flatmap(lambda s: s),
    rules_yaml=st.sampled_from([yaml_file(rules_like)] * 5 + [st.none()]).flatmap(lambda s: s),
)
def test_loader_on_random_files(
    pack_yaml: bytes | None, rules_yaml: bytes | None, example_counter: Counter[str]
) -> None:
    example_counter["2 loader: random files"] += 1
    reg = registry()
    with tempfile.TemporaryDirectory(prefix="charter-fuzz-") as tmp:
        root = Path(tmp).resolve() / "pack"
        root.mkdir()
        files: dict[str, str] = {}
        for name, content in (("pack.yaml", pack_yaml), ("rules.yaml", rules_yaml)):
            if content == b"/":
                (root / name).mkdir()  # a directory where the file should be
            elif content is not None:
                (root / name).write_bytes(content)
                files[display_path(root / name)] = content.decode("utf-8", "replace")
        dirs = [display_path(root), display_path(root / "pack.yaml")]
        try:
            source, diags = guarded(
                example_counter, lambda: load_pack(root, installed_plugins=reg.plugins)
            )
        except KnownCrash:
            return
        assert_diagnostics(diags, files, dirs)
        if source is None:
            assert any(d.is_error for d in diags)
            return
        assert {path for path, _ in source.files} <= set(files)
        try:
            pack, more = guarded(example_counter, lambda: compile_pack(source, reg))
        except KnownCrash:
            return
        assert_diagnostics(more, files, dirs)
        assert pack is None or not any(d.is_error for d in more)
        try:
            result = guarded(example_counter, lambda: compile_path(root, reg, cache_dir=None))
        except KnownCrash:
            return
        compiled = assert_compiled(result, files, dirs)
        if compiled is not None:
            run_engine(Engine(compiled, reg), ["", "x 2024年3月8日 ¥10.5"], example_counter)


# ---- 3. mutated real packs --------------------------------------------------------------------

KEY_LINE = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[A-Za-z_<][\w<-]*):(?P<rest>.*)$")
DSL_KEYS = ("check", "when", "on_fail")
REQUIRED_KEYS = ("id", "describe", "check", "on_fail", "rules", "name", "output", "version")
DSL_TOKEN_RE = re.compile(r'"[^"\n]*"|/[^/\n]*/|\w+|[^\w\s]')
RULES_FILES = sorted(f for f in ORIGINAL if f.endswith("rules.yaml"))
ALL_IDS = tuple(
    sorted(
        {
            m.group(1)
            for rel, text in ORIGINAL.items()
            for m in re.finditer(r"^\s*- id: (\S+)$", text, re.M)
        }
    )
)
EXTENDS_TARGETS = (
    "rulesets/nope",
    "nope",
    ".",
    "..",
    "",
    " ",
    "./",
    "rulesets",
    "domains/finance",
    "domains/medical",
    "rulesets/uncertainty",
    "rulesets/zh-customer-service",
    "uncertainty",
    "zh-customer-service",
    "rulesets/uncertainty/pack.yaml",
    "rulesets/uncertainty/rules.yaml",
    "../../rulesets/uncertainty",
    "/nonexistent/charter/pack",
    "../../../../../../nope",
    "中文包",
    "a" * 300,  # ENAMETOOLONG: once an OSError, now CH020
)


@dataclass(frozen=True)
class Mutant:
    target: str  # the pack directory compiled, relative to the tree root
    files: dict[str, str]  # relative path -> text
    log: tuple[str, ...]

    def __repr__(self) -> str:
        changed = {k: v for k, v in self.files.items() if ORIGINAL.get(k) != v}
        return f"Mutant(target={self.target!r}, log={self.log!r}, changed={changed!r})"


def _split(text: str) -> list[str]:
    return text.split("\n")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _key_col(m: re.Match[str]) -> int:
    return len(m.group("indent")) + len(m.group("dash") or "")


def _block_end(lines: list[str], i: int, col: int) -> int:
    """Index after line ``i`` and its continuation lines (indented deeper than ``col``)."""
    j = i + 1
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > col):
        if not lines[j].strip() and (j + 1 >= len(lines) or _indent(lines[j + 1]) <= col):
            break
        j += 1
    return j


def _key_lines(lines: list[str], keys: Sequence[str] | None = None) -> list[int]:
    out = []
    for i, line in enumerate(lines):
        m = KEY_LINE.match(line)
        if m and not line.lstrip().startswith("#") and (keys is None or m.group("key") in keys):
            out.append(i)
    return out


def _pick(draw: Draw, options: Sequence[T]) -> T | None:
    return draw(st.sampled_from(options)) if options else None


def mut_delete_line(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = draw(st.integers(0, len(lines) - 1))
    del lines[i]
    return "\n".join(lines), f"delete line {i + 1}"


def mut_duplicate_line(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = draw(st.integers(0, len(lines) - 1))
    lines.insert(i, lines[i])
    return "\n".join(lines), f"duplicate line {i + 1}"


def mut_swap_lines(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines), f"swap lines {i + 1} and {j + 1}"


def mut_insert_tab(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = draw(st.integers(0, len(lines) - 1))
    col = draw(st.one_of(st.just(0), st.just(_indent(lines[i])), st.integers(0, len(lines[i]))))
    lines[i] = lines[i][:col] + "\t" + lines[i][col:]
    return "\n".join(lines), f"tab at line {i + 1} col {col + 1}"


def mut_reindent(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = draw(st.integers(0, len(lines) - 1))
    n = draw(st.integers(0, 8))
    lines[i] = " " * n + lines[i].lstrip(" ")
    return "\n".join(lines), f"indent line {i + 1} by {n}"


def mut_dsl_edit(text: str, draw: Draw) -> tuple[str, str]:
    """Replace, insert or delete a token inside a check / when / on_fail value."""
    lines = _split(text)
    spans: list[tuple[int, int]] = []  # (line index, first column of the value)
    for i in _key_lines(lines, DSL_KEYS):
        m = KEY_LINE.match(lines[i])
        assert m is not None
        first = len(lines[i]) - len(m.group("rest")) + 1
        spans.append((i, min(first, len(lines[i]))))
        spans += [(j, _indent(lines[j])) for j in range(i + 1, _block_end(lines, i, _key_col(m)))]
    choice = _pick(draw, spans)
    if choice is None:
        return text, "dsl edit: no DSL value"
    i, start = choice
    line = lines[i]
    tokens = [t for t in DSL_TOKEN_RE.finditer(line) if t.start() >= start]
    tok = _pick(draw, tokens)
    new = draw(st.one_of(st.sampled_from(DSL_TOKENS), st.sampled_from(WEIRD_CHARS)))
    how = draw(st.sampled_from(["replace", "replace", "insert", "delete", "char"]))
    if tok is None or how == "insert":
        at = draw(st.integers(start, len(line)))
        lines[i] = line[:at] + new + line[at:]
    elif how == "replace":
        lines[i] = line[: tok.start()] + new + line[tok.end() :]
    elif how == "delete":
        lines[i] = line[: tok.start()] + line[tok.end() :]
    else:
        at = draw(st.integers(tok.start(), tok.end() - 1))
        lines[i] = line[:at] + new[:1] + line[at + 1 :]
    return "\n".join(lines), f"dsl {how} at line {i + 1}: {new!r}"


def mut_dsl_value(text: str, draw: Draw) -> tuple[str, str]:
    """Replace a whole check / when / on_fail value by a generated one that parses."""
    lines = _split(text)
    i = _pick(draw, _key_lines(lines, DSL_KEYS))
    if i is None:
        return text, "dsl value: no DSL value"
    m = KEY_LINE.match(lines[i])
    assert m is not None
    new = draw(valid_action if m.group("key") == "on_fail" else valid_expr)
    prefix = lines[i][: len(lines[i]) - len(m.group("rest"))]
    lines[i : _block_end(lines, i, _key_col(m))] = [f"{prefix} {_yaml_escape(new)}"]
    return "\n".join(lines), f"dsl value at line {i + 1} -> {new!r}"


def mut_drop_key(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = _pick(draw, _key_lines(lines, REQUIRED_KEYS) or _key_lines(lines))
    if i is None:
        return text, "drop key: none"
    m = KEY_LINE.match(lines[i])
    assert m is not None
    end = _block_end(lines, i, _key_col(m))
    keep = [m.group("indent") + "-"] if m.group("dash") else []
    lines[i:end] = keep
    return "\n".join(lines), f"drop key {m.group('key')!r} at line {i + 1}"


def mut_change_type(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    options = [i for i in _key_lines(lines) if KEY_LINE.match(lines[i]).group("rest").strip()]  # type: ignore[union-attr]
    i = _pick(draw, options)
    if i is None:
        return text, "change type: none"
    m = KEY_LINE.match(lines[i])
    assert m is not None
    value = m.group("rest").strip()
    col = _key_col(m)
    new = draw(
        st.sampled_from(
            [
                f"[{value}]",
                f"{{k: {value}}}",
                "42",
                "-3.5",
                "true",
                "null",
                "~",
                '""',
                "[]",
                "{}",
                "\n" + " " * (col + 2) + "- " + value,
                "\n" + " " * (col + 2) + "k: " + value,
                "!!binary aGk=",
                "!!int " + value,
                "&anchor " + value,
                "*anchor",
                "2024-01-01",
                "0x1F",
                ".nan",
                "9" * 4400,  # known crash yaml-huge-integer
            ]
        )
    )
    prefix = lines[i][: len(lines[i]) - len(m.group("rest"))]
    lines[i : _block_end(lines, i, col)] = [prefix + " " + new]
    return "\n".join(lines), f"type of {m.group('key')!r} at line {i + 1} -> {new!r}"


def mut_unknown_key(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    i = _pick(draw, _key_lines(lines))
    if i is None:
        return text, "unknown key: none"
    m = KEY_LINE.match(lines[i])
    assert m is not None
    col = _key_col(m)
    key = draw(st.sampled_from(["unknown", "chek", "on-fail", "describ", "tag", "Rules", "id "]))
    end = _block_end(lines, i, col)
    lines.insert(end, " " * col + f"{key}: 1")
    return "\n".join(lines), f"unknown key {key!r} after line {i + 1}"


def mut_rule_id(text: str, draw: Draw) -> tuple[str, str]:
    """Give a rule the id of another rule (in this file or inherited), maybe with override."""
    lines = _split(text)
    ids = [i for i, line in enumerate(lines) if re.match(r"^\s*- id: ", line)]
    i = _pick(draw, ids)
    if i is None:
        return text, "rule id: no rules"
    new = draw(st.sampled_from([*ALL_IDS, "Bad_Id", "", "'1'", "x" * 80]))
    lines[i] = re.sub(r"(- id: ).*", lambda m: m.group(1) + new, lines[i])
    if draw(st.booleans()):
        col = lines[i].index("id:")
        lines.insert(i + 1, " " * col + draw(st.sampled_from(["override: true", "override: yes"])))
    return "\n".join(lines), f"rule id at line {i + 1} -> {new!r}"


def mut_duplicate_rule(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    ids = [i for i, line in enumerate(lines) if re.match(r"^\s*- id: ", line)]
    i = _pick(draw, ids)
    if i is None:
        return text, "duplicate rule: no rules"
    col = lines[i].index("-")
    end = _block_end(lines, i, col)
    lines[end:end] = lines[i:end]
    return "\n".join(lines), f"duplicate the rule at line {i + 1}"


def mut_add_override(text: str, draw: Draw) -> tuple[str, str]:
    lines = _split(text)
    ids = [i for i, line in enumerate(lines) if re.match(r"^\s*- id: ", line)]
    i = _pick(draw, ids)
    if i is None:
        return text, "override: no rules"
    lines.insert(i + 1, " " * lines[i].index("id:") + "override: true")
    return "\n".join(lines), f"override: true after line {i + 1}"


def _set_extends(text: str, targets: Sequence[str], form: str) -> str:
    lines = _split(text)
    start = next((i for i, line in enumerate(lines) if line.startswith("extends:")), None)
    if start is not None:
        del lines[start : _block_end(lines, start, 0)]
    else:
        start = len(lines)
    if form == "scalar":
        block = [f"extends: {json.dumps(targets[0] if targets else '')}"]
    elif form == "flow":
        block = [f"extends: {json.dumps(list(targets), ensure_ascii=False)}"]
    elif form == "number":
        block = ["extends: 3"]
    else:
        block = ["extends:", *(f"  - {json.dumps(t, ensure_ascii=False)}" for t in targets)]
    lines[start:start] = block
    return "\n".join(lines)


def mut_extends(text: str, draw: Draw) -> tuple[str, str]:
    targets = draw(st.lists(st.sampled_from(EXTENDS_TARGETS), max_size=3))
    form = draw(st.sampled_from(["list", "list", "flow", "scalar", "number"]))
    return _set_extends(text, targets, form), f"extends -> {targets!r} ({form})"


def mut_insert_text(text: str, draw: Draw) -> tuple[str, str]:
    at = draw(st.integers(0, len(text)))
    new = draw(st.one_of(st.sampled_from(YAML_TOKENS), _piece))
    return text[:at] + new + text[at:], f"insert {new!r} at offset {at}"


def mut_truncate(text: str, draw: Draw) -> tuple[str, str]:
    at = draw(st.integers(0, len(text)))
    return text[:at], f"truncate at offset {at}"


Mutation = Callable[[str, Draw], tuple[str, str]]
LINE_MUTATIONS: tuple[Mutation, ...] = (
    mut_delete_line,
    mut_duplicate_line,
    mut_swap_lines,
    mut_insert_tab,
    mut_reindent,
    mut_insert_text,
    mut_truncate,
    mut_drop_key,
    mut_change_type,
    mut_unknown_key,
)
DSL_MUTATIONS: tuple[Mutation, ...] = (mut_dsl_edit, mut_dsl_value)
RULE_MUTATIONS: tuple[Mutation, ...] = (mut_rule_id, mut_duplicate_rule, mut_add_override)
# (family, weight): DSL edits reach the compile stages, so they get the largest share
FAMILIES = ("dsl",) * 5 + ("line",) * 3 + ("rules",) * 2 + ("extends", "cycle")


@st.composite
def mutants(draw: Draw) -> Mutant:
    target: str = draw(st.sampled_from(PACK_DIRS))
    files = dict(ORIGINAL)
    log: list[str] = []
    own = [f for f in files if f.startswith(target + "/")]
    for _ in range(draw(st.integers(1, 3))):
        family = draw(st.sampled_from(FAMILIES))
        if family == "cycle":  # target -> other -> target
            other = draw(st.sampled_from([d for d in PACK_DIRS if d != target]))
            back = os.path.relpath(target, other)
            files[f"{target}/pack.yaml"] = _set_extends(
                files[f"{target}/pack.yaml"], [other], "list"
            )
            files[f"{other}/pack.yaml"] = _set_extends(files[f"{other}/pack.yaml"], [back], "list")
            log.append(f"cycle {target} -> {other} -> {back}")
            continue
        # mostly the compiled pack's own files, sometimes a pack it extends
        anywhere = draw(st.sampled_from((False, False, False, True)))
        pool = sorted(files) if anywhere else own
        if family in ("dsl", "rules"):
            pool = [f for f in pool if f.endswith("rules.yaml")] or RULES_FILES
        elif family == "extends":
            pool = [f for f in pool if f.endswith("pack.yaml")]
        rel = draw(st.sampled_from(pool))
        mutations = {
            "dsl": DSL_MUTATIONS,
            "line": LINE_MUTATIONS,
            "rules": RULE_MUTATIONS,
            "extends": (mut_extends,),
        }[family]
        files[rel], what = draw(st.sampled_from(mutations))(files[rel], draw)
        log.append(f"{rel}: {what}")
    return Mutant(target, files, tuple(log))


def run_engine(
    engine: Engine,
    texts: Iterable[str],
    counter: Counter[str],
    ctx: Mapping[str, Any] | None = None,
) -> None:
    """A compiled pack checks any text: a verdict, and its final text checks again."""
    for text in texts:
        try:
            result = guarded(counter, partial(engine.check, text, "", ctx))
            assert_result(engine, result, text, ctx)
            again = guarded(counter, partial(engine.check, result.final_text, "", ctx))
        except KnownCrash:
            continue
        assert again.verdict in VERDICTS


@fuzz_settings(600)
@given(mutant=mutants(), texts=st.lists(engine_text, min_size=1, max_size=3), ctx=context_)
def test_compile_mutated_packs(
    mutant: Mutant, texts: list[str], ctx: dict[str, Any], example_counter: Counter[str]
) -> None:
    example_counter["3 compiler: mutated real packs"] += 1
    reg = registry()
    with tempfile.TemporaryDirectory(prefix="charter-fuzz-") as tmp:
        base = Path(tmp).resolve()
        for rel, text in mutant.files.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text, encoding="utf-8")
        files = {display_path(base / rel): text for rel, text in mutant.files.items()}
        dirs = [display_path(base / d) for d in PACK_DIRS]
        try:
            result = guarded(
                example_counter, lambda: compile_path(base / mutant.target, reg, cache_dir=None)
            )
        except KnownCrash:
            return
        pack = assert_compiled(result, files, dirs)
        if pack is not None:
            run_engine(Engine(pack, reg), texts, example_counter, ctx)


# ---- 4. grammar-generated rules, compiled and run ---------------------------------------------


@st.composite
def generated_rules(draw: Draw) -> str:
    rules = []
    for i in range(draw(st.integers(1, 3))):
        lines = [f"  - id: r{i}", "    describe: generated"]
        if draw(st.booleans()):
            lines.append(f"    when: {_yaml_escape(draw(valid_expr))}")
        lines.append(f"    check: {_yaml_escape(draw(valid_expr))}")
        lines.append(f"    on_fail: {_yaml_escape(draw(valid_action))}")
        if draw(st.integers(0, 3)) == 0:
            lines.append(f"    on_unfixed: {draw(st.sampled_from(('flag', 'block', 'retry')))}")
        rules += lines
    return "rules:\n" + "\n".join(rules) + "\n"


@fuzz_settings(300)
@given(
    rules_yaml=generated_rules(),
    texts=st.lists(engine_text, min_size=1, max_size=3),
    ctx=hostile_context,
)
def test_compile_generated_rules(
    rules_yaml: str, texts: list[str], ctx: dict[str, Any], example_counter: Counter[str]
) -> None:
    example_counter["4 compiler + engine: grammar-generated rules"] += 1
    reg = registry()
    with tempfile.TemporaryDirectory(prefix="charter-fuzz-") as tmp:
        root = Path(tmp).resolve() / "gen"
        root.mkdir()
        (root / "pack.yaml").write_bytes(VALID_PACK_YAML)
        (root / "rules.yaml").write_text(rules_yaml, encoding="utf-8")
        files = {
            display_path(root / "pack.yaml"): VALID_PACK_YAML.decode(),
            display_path(root / "rules.yaml"): rules_yaml,
        }
        try:
            result = guarded(example_counter, lambda: compile_path(root, reg, cache_dir=None))
        except KnownCrash:
            return
        pack = assert_compiled(result, files, [display_path(root)])
        # every parse error is a generator bug: these expressions follow the grammar
        assert not [d.headline() for d in result[1] if d.code == "CH100"]
        if pack is None:
            return
        engine = Engine(pack, reg)
        for text in texts:
            try:
                first = guarded(example_counter, partial(engine.check, text, "", ctx))
            except KnownCrash:
                continue
            assert_result(engine, first, text, ctx)
            assert engine.check(text, "", ctx) == first


# ---- 5. the engine on the first-party packs ---------------------------------------------------


@fuzz_settings(400)
@given(pack=st.sampled_from(PACK_DIRS), text=engine_text, ctx=hostile_context)
def test_engine_on_real_packs(
    pack: str, text: str, ctx: dict[str, Any], example_counter: Counter[str]
) -> None:
    example_counter["5 engine: first-party packs"] += 1
    engine = real_engines()[pack]
    try:
        first = guarded(example_counter, lambda: engine.check(text, "", ctx))
    except KnownCrash:
        return
    assert_result(engine, first, text, ctx)
    assert engine.check(text, "", ctx) == first  # deterministic
    assert Engine(engine.pack, registry()).check(text, "", ctx) == first  # and stateless
    again = guarded(example_counter, partial(engine.check, first.final_text, "", ctx))
    assert again.verdict in VERDICTS


# ---- crashes the fuzzer found ----------------------------------------------------------------
# Open ones are strict xfails: the fix turns them into XPASS, which fails the run until the entry
# is removed from KNOWN_CRASHES and the test becomes a plain regression test like those below.


def _compile_rule(tmp: Path, check: str, on_fail: str = "retry") -> list[Diagnostic]:
    """Compile a one-rule pack: a pack, or Diagnostics that say why not; no exception."""
    root = tmp / "p"
    root.mkdir()
    (root / "pack.yaml").write_bytes(VALID_PACK_YAML)
    rules = "rules:\n  - id: r\n    describe: d\n"
    rules += f"    check: {_yaml_escape(check)}\n    on_fail: {_yaml_escape(on_fail)}\n"
    (root / "rules.yaml").write_text(rules, encoding="utf-8")
    files = {display_path(root / "pack.yaml"): VALID_PACK_YAML.decode()}
    files[display_path(root / "rules.yaml")] = rules
    result = compile_path(root, registry(), cache_dir=None)
    assert_compiled(result, files, [display_path(root)])
    return result[1]


def _xfail(
    name: str, raises: type[BaseException] | tuple[type[BaseException], ...]
) -> pytest.MarkDecorator:
    """Strict: the reproduction must raise exactly this; once fixed, XPASS fails the run."""
    assert name in KNOWN_CRASHES
    return pytest.mark.xfail(strict=True, raises=raises, reason=f"known crash {name}")


def test_fixed_yaml_huge_integer(tmp_path: Path) -> None:
    # was: ValueError (more than 4300 digits) from int() in the YAML scalar builder
    root = tmp_path / "p"
    root.mkdir()
    (root / "pack.yaml").write_text("name: p\nversion: " + "9" * 4400 + "\n")
    _, diags = load_pack(root)
    assert [d.code for d in diags][:1] == ["CH001"]
    assert diags[0].message == "the number 999999999999... has too many digits"


def test_known_crashes_have_reproductions() -> None:
    """Every KNOWN_CRASHES entry has a strict xfail reproduction in this module."""
    marked = {
        mark.kwargs["reason"].removeprefix("known crash ")
        for name, fn in globals().items()
        if name.startswith("test_crash_")
        for mark in getattr(fn, "pytestmark", [])
        if mark.name == "xfail"
    }
    assert marked == set(KNOWN_CRASHES)


@pytest.mark.parametrize("check", ["output matches /(?V1)x/", "output matches /(?u)x/a"])
def test_fixed_regex_flag_clash(tmp_path: Path, check: str) -> None:
    # was: ValueError "VERSION0 and VERSION1 flags are mutually incompatible" from the checker
    assert "CH105" in {d.code for d in _compile_rule(tmp_path, check)}


@pytest.mark.parametrize(
    ("check", "code"),
    [
        ("not " * 1000 + 'output contains "x"', "CH114"),  # deeper than 50 levels
        (" or ".join(['output contains "x"'] * 1000), "CH113"),  # longer than 20,000 characters
        ("-" * 1000 + "1 < 2", "CH114"),
    ],
    ids=["not", "or", "neg"],
)
def test_fixed_deep_nesting(tmp_path: Path, check: str, code: str) -> None:
    # was: RecursionError in lark's Transformer (from about 490 levels); now refused before
    # parsing by the DSL's limits (issue 16)
    assert {d.code for d in _compile_rule(tmp_path, check)} == {code}


@pytest.mark.parametrize(
    "text",
    [
        'output contains "x" unless preceded by "a" within ' + "9" * 4301,
        "context.x[" + "9" * 4301 + "] == 1",
    ],
    ids=["within", "index"],
)
def test_fixed_huge_dsl_integer(text: str) -> None:
    # was: lark VisitError wrapping ValueError (int() of more than 4300 digits)
    with pytest.raises(DSLSyntaxError) as info:
        parse_expr(text)
    assert 0 <= info.value.start <= info.value.end <= len(text) + 1


def test_fixed_extends_name_too_long(tmp_path: Path) -> None:
    # was: OSError ENAMETOOLONG from Path.is_file() while resolving extends
    root = tmp_path / "p"
    root.mkdir()
    (root / "pack.yaml").write_text("name: p\nversion: 0.1.0\nextends: [" + "a" * 300 + "]\n")
    _, diags = load_pack(root)
    assert "CH020" in {d.code for d in diags}


@pytest.mark.parametrize(
    "value",
    [float("nan"), "NaN", "sNaN", 10**4400, "1e999999999"],
    ids=["nan", "nan-str", "snan", "huge-int", "huge-exponent"],
)
def test_fixed_hostile_context_numbers(value: object) -> None:
    # was: decimal.InvalidOperation (NaN under <) and ValueError (Decimal(str(10**4400)))
    engine = real_engines()["rulesets/uncertainty"]
    ctx = {"memory": {"min_confidence": value}}
    assert_result(engine, engine.check("x", "", ctx), "x", ctx)


def test_fixed_nan_pack_threshold(tmp_path: Path) -> None:
    # `uncertainty: .nan` fails no schema minimum / maximum; was: InvalidOperation at check time
    root = tmp_path / "u"
    root.mkdir()
    text = ORIGINAL["rulesets/uncertainty/pack.yaml"] + "thresholds:\n  uncertainty: .nan\n"
    (root / "pack.yaml").write_text(text, encoding="utf-8")
    (root / "rules.yaml").write_text(ORIGINAL["rulesets/uncertainty/rules.yaml"], encoding="utf-8")
    pack, diags = compile_path(root, registry(), cache_dir=None)
    assert pack is not None or any(d.is_error for d in diags)
    if pack is not None:
        engine = Engine(pack, registry())
        ctx = {"memory": {"min_confidence": 0.5}}
        assert_result(engine, engine.check("x", "", ctx), "x", ctx)


def test_fixed_decimal_overflow(tmp_path: Path) -> None:
    # was: decimal.Overflow from DSL arithmetic on the context value "1e999999999"
    root = tmp_path / "p"
    root.mkdir()
    (root / "pack.yaml").write_bytes(VALID_PACK_YAML)
    (root / "rules.yaml").write_text(
        "rules:\n  - id: r\n    describe: d\n    check: context.x + 1 > 0\n    on_fail: retry\n"
    )
    pack, diags = compile_path(root, registry(), cache_dir=None)
    assert pack is not None, [d.headline() for d in diags]
    engine = Engine(pack, registry())
    ctx = {"x": "1e999999999"}
    assert_result(engine, engine.check("x", "", ctx), "x", ctx)


def test_tree_copy_compiles_clean(tmp_path: Path) -> None:
    """The unmutated copy compiles exactly like the originals: mutations start from valid."""
    for rel, text in ORIGINAL.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    for d in PACK_DIRS:
        pack, diags = compile_path(tmp_path / d, registry(), cache_dir=None)
        assert pack is not None, [x.headline() for x in diags]
        assert not [x.headline() for x in diags if x.is_error]
