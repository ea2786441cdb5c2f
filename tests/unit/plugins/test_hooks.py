"""One test per hook (``docs/plugins.md``'s meta-test requires a ``test_hook_<name>`` for each):
what a plugin registers reaches the place that uses it, and every lifecycle hook reaches the
plugins that implement it, including those that take fewer parameters than the hook passes."""

from __future__ import annotations

import re
import types
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from charter.compile.api import compile_path
from charter.config.settings import PluginSettings
from charter.contracts.events import (
    Fallback,
    GoalTransition,
    MemoryWrite,
    Reflection,
    ReflectionAlert,
)
from charter.contracts.models import Completion, Message
from charter.contracts.packs import PackRef
from charter.contracts.pii import PiiMatch, redact
from charter.contracts.registry import Registry
from charter.contracts.rules import Formatter, Item, RepairArg, RepairInput
from charter.plugins.hookspecs import hookimpl
from charter.plugins.host import PluginHost, make_plugin_manager
from charter.reflect.engine import Engine


def host_of(plugin: object) -> PluginHost:
    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    pm.distributions["p"] = ("charter-p", "1.0")
    pm.register(plugin, name="p")
    host = PluginHost(pm, PluginSettings())
    assert host.diagnostics == []
    return host


def engine(registry: Registry, tmp_path: Path, rules: str) -> Engine:
    pack = tmp_path / "pack"
    pack.mkdir(exist_ok=True)
    (pack / "pack.yaml").write_text("name: t\nversion: 0.1.0\n", encoding="utf-8")
    (pack / "rules.yaml").write_text(rules, encoding="utf-8")
    compiled, diags = compile_path(pack, registry, cache_dir=None)
    assert compiled is not None, diags
    return Engine(compiled, registry)


class Card:
    name = "card_no"
    value_kind = "text"
    has_units = False

    def extract(self, text: str) -> tuple[Item, ...]:
        return tuple(Item(m.start(), m.end(), m[0], m[0]) for m in re.finditer(r"\d{16}", text))

    def canonical(self, item: Item) -> str | None:
        return None


def test_hook_charter_register_extractors(tmp_path: Path) -> None:
    class P:
        @hookimpl
        def charter_register_extractors(self) -> Sequence[Any]:
            return [Card()]

    rules = """rules:
  - id: no-card
    describe: d
    message: 不要写出卡号
    check: not output mentions card_no
    on_fail: block
"""
    e = engine(host_of(P()).registry, tmp_path, rules)
    assert e.evaluate("卡号6222021234567890") == {"no-card": "fail"}
    assert e.evaluate("卡号尾号7890") == {"no-card": "pass"}


def test_hook_charter_register_predicates(tmp_path: Path) -> None:
    class Shouting:
        name = "shouting"
        params = ()

        def __call__(self, text: str) -> bool:
            return text.count("！") >= 3

    class P:
        @hookimpl
        def charter_register_predicates(self) -> Sequence[Any]:
            return [Shouting()]

    rules = """rules:
  - id: calm
    describe: d
    message: 语气平和
    check: not shouting(output)
    on_fail: retry
"""
    e = engine(host_of(P()).registry, tmp_path, rules)
    assert e.evaluate("好的！！！") == {"calm": "fail"}
    assert e.evaluate("好的。") == {"calm": "pass"}


def test_hook_charter_register_repairs(tmp_path: Path) -> None:
    class Mask:
        name = "mask"

        def check_args(self, args: Sequence[RepairArg], extractors: Any) -> str:
            return "" if not args else "takes no arguments"

        def apply(self, args: Sequence[RepairArg], rin: RepairInput) -> str:
            text = rin.text
            for s, e in sorted(rin.spans, reverse=True):
                text = text[:s] + "*" * (e - s) + text[e:]
            return text

    class P:
        @hookimpl
        def charter_register_extractors(self) -> Sequence[Any]:
            return [Card()]

        @hookimpl
        def charter_register_repairs(self) -> Sequence[Any]:
            return [Mask()]

    rules = """rules:
  - id: no-card
    describe: d
    message: 不要写出卡号
    check: not output mentions card_no
    on_fail: fix mask
"""
    result = engine(host_of(P()).registry, tmp_path, rules).check("卡号6222021234567890。")
    assert (result.verdict, result.fixed_text) == ("fixed", "卡号****************。")


class Masked:
    name = "masked_card"

    def format(self, value: Any) -> str | None:
        if not isinstance(value, str) or re.fullmatch(r"\d{16}", value) is None:
            return None
        return "尾号" + value[-4:]


def test_hook_charter_register_formatters() -> None:
    class P:
        @hookimpl
        def charter_register_formatters(self) -> Sequence[Any]:
            return [Masked()]

    host = host_of(P())
    assert host.infos["p"].hooks == {"charter_register_formatters": ["masked_card"]}
    formatters = host.registry.formatters
    assert list(formatters) == ["join", "count", "masked_card"]  # the built-ins come first
    assert isinstance(formatters["masked_card"], Formatter)
    assert formatters["masked_card"].format("6222021234567890") == "尾号7890"
    assert formatters["masked_card"].format(6222021234567890) is None
    # templates are checked against the formatters at compile time: cached packs go stale
    without = replace(
        host.registry, formatters={k: v for k, v in formatters.items() if k != "masked_card"}
    )
    assert without.fingerprint() != host.registry.fingerprint()


@pytest.mark.parametrize(
    ("obj", "what"),
    [(object(), "object"), (types.SimpleNamespace(name="x"), "SimpleNamespace")],
)
def test_a_formatter_without_format_is_ch203(obj: Any, what: str) -> None:
    class P:
        @hookimpl
        def charter_register_formatters(self) -> Sequence[Any]:
            return [obj, Masked()]

    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    pm.distributions["p"] = ("charter-p", "1.0")
    pm.register(P(), name="p")
    host = PluginHost(pm, PluginSettings())
    assert [(d.code, d.message, d.hint) for d in host.diagnostics] == [
        (
            "CH203",
            f"plugin 'p' (charter-p 1.0) returned a {what} from charter_register_formatters, "
            "which is not a formatter",
            "a formatter has name and format(value) (charter.contracts.rules.Formatter)",
        )
    ]
    assert "masked_card" in host.registry.formatters and "x" not in host.registry.formatters


def test_builtin_formatters() -> None:
    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    formatters = PluginHost(pm, PluginSettings()).registry.formatters
    join, count = formatters["join"], formatters["count"]
    assert [
        join.format(v) for v in (["苹果", "香蕉", "橙子"], ("A",), "单件", [], [1, 2], None)
    ] == [
        "苹果、香蕉、橙子",
        "A",
        "单件",
        None,
        None,
        None,
    ]
    assert [count.format(v) for v in ([1, 2, 3], (), "abc", {"a": 1}, 3)] == [
        "3",
        "0",
        None,
        None,
        None,
    ]


def test_hook_charter_register_skills() -> None:
    class Weather:
        name = "weather"
        description = "天气查询"

        def __call__(self, args: Any) -> Any:
            return {"city": args["city"], "weather": "晴"}

    class P:
        @hookimpl
        def charter_register_skills(self) -> Sequence[Any]:
            return [Weather()]

    skills = host_of(P()).registry.skills
    assert list(skills) == ["weather"]
    assert skills["weather"]({"city": "杭州"}) == {"city": "杭州", "weather": "晴"}


def test_hook_charter_register_packs(tmp_path: Path) -> None:
    base = tmp_path / "shipped"
    base.mkdir()
    (base / "pack.yaml").write_text("name: shipped\nversion: 1.0.0\n", encoding="utf-8")
    (base / "rules.yaml").write_text(
        "rules:\n  - id: polite\n    describe: d\n    message: 请说您好\n"
        '    check: output contains "您好"\n    on_fail: fix prepend "您好，"\n',
        encoding="utf-8",
    )

    class P:
        @hookimpl
        def charter_register_packs(self) -> Sequence[Any]:
            return [PackRef("acme-base", base)]

    registry = host_of(P()).registry
    assert registry.packs == {"acme-base": base}
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "pack.yaml").write_text(
        "name: mine\nversion: 0.1.0\nextends: [acme-base]\n", encoding="utf-8"
    )
    compiled, diags = compile_path(mine, registry, cache_dir=None)
    assert diags == [] and compiled is not None
    assert Engine(compiled, registry).check("请稍等").fixed_text == "您好，请稍等"


def test_hook_charter_register_llm_backends() -> None:
    class Fixed:
        def generate(self, messages: Any, **kw: Any) -> Completion:
            return Completion("好的", 1, (-0.1,))

    class Backend:
        name = "fixed"

        def create(self, options: Any) -> Fixed:
            return Fixed()

    class P:
        @hookimpl
        def charter_register_llm_backends(self) -> Sequence[Any]:
            return [Backend()]

    llm = host_of(P()).registry.llm_backends["fixed"].create({})
    got = llm.generate([Message("user", "您好")], max_tokens=8, temperature=0.0)
    assert got == Completion("好的", 1, (-0.1,))


def test_hook_charter_register_embedders() -> None:
    class Unit:
        name = "unit"
        dim = 2

        def embed(self, texts: Sequence[str], *, query: bool = False) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

    class Factory:
        name = "unit"

        def create(self, options: Any) -> Unit:
            return Unit()

    class P:
        @hookimpl
        def charter_register_embedders(self) -> Sequence[Any]:
            return [Factory()]

    embedder = host_of(P()).registry.embedders["unit"].create({})
    assert (embedder.dim, embedder.embed(["a", "b"])) == (2, [[1.0, 0.0], [1.0, 0.0]])


def test_hook_charter_register_stores() -> None:
    class Facts:
        name = "dict-facts"
        kind = "facts"

        def create(self, options: Any) -> dict[str, str]:
            return dict(options)

    class BadKind(Facts):
        name = "dict-blobs"
        kind = "blobs"

    class P:
        @hookimpl
        def charter_register_stores(self) -> Sequence[Any]:
            return [Facts()]

    assert host_of(P()).registry.stores["dict-facts"].create({"a": "b"}) == {"a": "b"}

    class Q:
        @hookimpl
        def charter_register_stores(self) -> Sequence[Any]:
            return [BadKind()]

    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    pm.register(Q(), name="q")
    host = PluginHost(pm, PluginSettings())
    assert [d.code for d in host.diagnostics] == ["CH203"]
    assert host.registry.stores == {}


def test_hook_charter_register_pii_recognizers() -> None:
    class Plate:
        name = "plate"
        kind = "plate"
        placeholder = "[PLATE]"

        def recognize(self, text: str) -> tuple[PiiMatch, ...]:
            return tuple(
                PiiMatch(m.start(), m.end(), m[0], "plate")
                for m in re.finditer(r"浙A[0-9A-Z]{5}", text)
            )

    class P:
        @hookimpl
        def charter_register_pii_recognizers(self) -> Sequence[Any]:
            return [Plate()]

    rec = host_of(P()).registry.pii_recognizers["plate"]
    text = "车牌浙A12345和浙AB1234"
    assert redact(text, rec.recognize(text), {"plate": rec.placeholder}) == "车牌[PLATE]和[PLATE]"


NOW = datetime(2026, 11, 30, 8, 0)


class Observer:
    """Implements every lifecycle hook; the goal one without parameters (allowed)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    @hookimpl
    def charter_on_goal_transition(self) -> None:
        self.calls.append(("goal", None))

    @hookimpl
    def charter_on_memory_write(self, event: MemoryWrite) -> None:
        self.calls.append(("memory", event.memory_id))

    @hookimpl
    def charter_after_reflection(self, event: Reflection) -> None:
        self.calls.append(("reflection", event.verdict))

    @hookimpl
    def charter_on_fallback(self, event: Fallback) -> None:
        self.calls.append(("fallback", event.action))

    @hookimpl
    def charter_on_reflection_alert(self, event: ReflectionAlert) -> None:
        self.calls.append(("alert", event.consecutive))


def _notify(hook: str, event: object) -> list[tuple[str, Any]]:
    observer = Observer()
    host = host_of(observer)
    assert host.notify(hook, event) == []
    return observer.calls


def test_hook_charter_on_goal_transition() -> None:
    event = GoalTransition(
        "g", "refund", "active", "completed", "skill:refund", "ok", "u", "s", NOW
    )
    assert _notify("charter_on_goal_transition", event) == [("goal", None)]


def test_hook_charter_on_memory_write() -> None:
    event = MemoryWrite("forget", "facts", "u", "phone", "[PHONE]", "contact", 1.0, "m3", NOW)
    assert _notify("charter_on_memory_write", event) == [("memory", "m3")]


def test_hook_charter_after_reflection() -> None:
    event = Reflection(
        "medical", "block", "你得了流感", "抱歉", ("no-diagnosis",), True, False, False
    )
    assert _notify("charter_after_reflection", event) == [("reflection", "block")]


def test_hook_charter_on_fallback() -> None:
    event = Fallback(
        "finance", "policy_search", "negations>=2", "clarify", detail={"q": "哪一年？"}
    )
    assert _notify("charter_on_fallback", event) == [("fallback", "clarify")]


def test_hook_charter_on_reflection_alert() -> None:
    event = ReflectionAlert("finance", "said Y, rules said N", 3, ("t1", "t2", "t3"))
    assert _notify("charter_on_reflection_alert", event) == [("alert", 3)]
