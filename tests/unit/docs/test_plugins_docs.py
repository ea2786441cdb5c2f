"""Meta-tests of ``docs/plugins.md`` (Datasette's rule: a hook missing from the docs or without a
test fails the build).

* every hook of ``charter.plugins.hookspecs`` has a ``### name`` section, and there is no other;
* its ``python signature`` block is exactly the spec's signature;
* its ``python example`` block, executed as a plugin module, registers cleanly and the hook,
  called through a real ``PluginHost``, does what the section says;
* every hook has a ``def test_hook_<name>`` under ``tests/unit/plugins/``.
"""

from __future__ import annotations

import inspect
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
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
from charter.contracts.models import Completion, Message
from charter.contracts.pii import PiiMatch
from charter.contracts.rules import Item, RepairInput
from charter.plugins import hookspecs
from charter.plugins.host import PluginHost, make_plugin_manager

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "plugins.md"
HOOKS = hookspecs.REGISTRATION_HOOKS + hookspecs.LIFECYCLE_HOOKS
_FENCE = re.compile(r"^```(?P<info>.*)$")


@dataclass(frozen=True)
class Section:
    name: str
    blocks: dict[str, str]  # "signature" / "example" -> code


def sections() -> dict[str, Section]:
    found: dict[str, Section] = {}
    current: Section | None = None
    lines = DOC.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("### "):
            current = Section(line[4:].strip(), {})
            found[current.name] = current
        elif line.startswith("## "):
            current = None
        m = _FENCE.match(line)
        if m is not None and m["info"]:
            body = []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            words = m["info"].split()
            if current is not None and words[0] == "python" and len(words) > 1:
                current.blocks[words[1]] = "\n".join(body) + "\n"
        i += 1
    return found


SECTIONS = sections()


def test_every_hook_has_a_section_and_nothing_else_does() -> None:
    assert sorted(SECTIONS) == sorted(HOOKS)


def spec_signature(hook: str) -> str:
    fn = getattr(hookspecs, hook)
    sig = inspect.signature(fn)
    params = ", ".join(f"{p.name}: {p.annotation}" for p in sig.parameters.values())
    return f"def {hook}({params}) -> {sig.return_annotation}:\n"


@pytest.mark.parametrize("hook", HOOKS)
def test_signature_is_the_spec(hook: str) -> None:
    assert SECTIONS[hook].blocks.get("signature") == spec_signature(hook)


# ---- the examples, executed -------------------------------------------------------------

NOW = datetime(2026, 11, 30, 10, 0)
EVENTS: dict[str, Any] = {
    "charter_on_goal_transition": GoalTransition(
        "g7", "track_order", None, "pending", "planner", "我的快递到哪了", "u1", "s1", NOW
    ),
    "charter_on_memory_write": MemoryWrite(
        "write", "facts", "u1", "address", "浙江省杭州市西湖区", "profile", 1.0, "m9", NOW
    ),
    "charter_after_reflection": Reflection(
        "ecommerce", "retry", "最低价", "最低价", ("no-lowest-price-claims",), True, False, False
    ),
    "charter_on_fallback": Fallback(
        "ecommerce", "order_lookup", "skill_unavailable", "handoff_human", detail={"order": "AC-1"}
    ),
    "charter_on_reflection_alert": ReflectionAlert("ecommerce", "self-reflection said Y", 3),
}


def _check_extractors(objs: list[Any]) -> None:
    (ex,) = objs
    assert ex.extract("订单AC-20240001已发货") == (
        Item(2, 13, "AC-20240001", "AC-20240001", None, None, {}),
    )


def _check_predicates(objs: list[Any]) -> None:
    assert objs[0]("一二三", 2) is True and objs[0]("一二", 2) is False


def _check_repairs(objs: list[Any]) -> None:
    rin = RepairInput("卡号6222021234567890", ((2, 18),), (), {})
    assert objs[0].apply((), rin) == "卡号" + "*" * 16


def _check_formatters(objs: list[Any]) -> None:
    (masked,) = objs
    assert masked.format("13812345678") == "138****5678"
    # what a phone slot holds (the phone extractor's form), issue 32: it returned nothing
    assert masked.format("+8613812345678") == "138****5678"
    assert masked.format("0571-88886666") is None
    assert masked.format(13812345678) is None


def _check_skills(objs: list[Any]) -> None:
    from charter.contracts.skills import SkillContext, takes_context

    assert objs[0]({"order_id": "AC-20240001"}) == {"order_id": "AC-20240001", "status": "已发货"}
    assert [takes_context(o) for o in objs] == [False, True]
    now = datetime.fromisoformat("2026-01-20T10:00:00+08:00")
    told = objs[1]({"plan": "畅享59"}, context=SkillContext(now, clock_set=True))
    assert told == {"summary": "您的套餐将于2026-02-01变更为畅享59"}


def _check_packs(objs: list[Any]) -> None:
    assert [p.name for p in objs] == ["acme-insurance"]


def _check_llm(objs: list[Any]) -> None:
    llm = objs[0].create({})
    got = llm.generate([Message("user", "您好，请问")], max_tokens=2, temperature=0.0)
    assert got == Completion("您好", 2)


def _check_embedders(objs: list[Any]) -> None:
    (vec,) = objs[0].create({}).embed(["合同第三条"])
    assert len(vec) == 8 and abs(sum(x * x for x in vec) - 1.0) < 1e-9


def _check_stores(objs: list[Any]) -> None:
    store = objs[0].create({})
    store.append({"action": "read"})
    assert store.rows == [{"action": "read"}]


def _check_pii(objs: list[Any]) -> None:
    assert objs[0].recognize("工号EMP-004211") == (
        PiiMatch(2, 12, "EMP-004211", "employee_id", None),
    )


CHECKS: dict[str, Callable[[list[Any]], None]] = {
    "charter_register_extractors": _check_extractors,
    "charter_register_predicates": _check_predicates,
    "charter_register_repairs": _check_repairs,
    "charter_register_formatters": _check_formatters,
    "charter_register_skills": _check_skills,
    "charter_register_packs": _check_packs,
    "charter_register_llm_backends": _check_llm,
    "charter_register_embedders": _check_embedders,
    "charter_register_stores": _check_stores,
    "charter_register_pii_recognizers": _check_pii,
}
FIELDS = {
    "charter_register_extractors": "extractors",
    "charter_register_predicates": "predicates",
    "charter_register_repairs": "repairs",
    "charter_register_formatters": "formatters",
    "charter_register_skills": "skills",
    "charter_register_packs": "packs",
    "charter_register_llm_backends": "llm_backends",
    "charter_register_embedders": "embedders",
    "charter_register_stores": "stores",
    "charter_register_pii_recognizers": "pii_recognizers",
}


def example_host(hook: str, tmp_path: Path) -> tuple[PluginHost, types.ModuleType]:
    pack = tmp_path / "packs" / "acme-insurance"
    pack.mkdir(parents=True)
    (pack / "pack.yaml").write_text("name: acme-insurance\nversion: 0.1.0\n", encoding="utf-8")
    module = types.ModuleType("doc_example")
    module.__file__ = str(tmp_path / "plugin.py")
    exec(compile(SECTIONS[hook].blocks["example"], f"plugins.md:{hook}", "exec"), module.__dict__)
    pm, diags = make_plugin_manager(settings=PluginSettings(autoload=False))
    pm.distributions["example"] = ("charter-example", "0.1.0")
    pm.register(module, name="example")
    host = PluginHost(pm, PluginSettings(), diags)
    assert host.diagnostics == []
    return host, module


@pytest.mark.parametrize("hook", hookspecs.REGISTRATION_HOOKS)
def test_registration_example_runs(hook: str, tmp_path: Path) -> None:
    host, _ = example_host(hook, tmp_path)
    assert list(host.infos["example"].hooks) == [hook]
    registered = getattr(host.registry, FIELDS[hook])
    names = host.infos["example"].hooks[hook]
    assert names and set(names) <= set(registered)
    objs = [registered[n] for n in names]
    if hook == "charter_register_packs":
        objs = [types.SimpleNamespace(name=n, path=registered[n]) for n in names]
    CHECKS[hook](objs)


@pytest.mark.parametrize("hook", hookspecs.LIFECYCLE_HOOKS)
def test_lifecycle_example_runs(
    hook: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host, module = example_host(hook, tmp_path)
    assert host.notify(hook, EVENTS[hook]) == []
    state = {
        "charter_on_memory_write": lambda: module.WRITES == [("u1", "write", "address")],
        "charter_after_reflection": lambda: module.VERDICTS == {"retry": 1},
        "charter_on_fallback": lambda: (
            module.TICKETS == [{"pack": "ecommerce", "why": "skill_unavailable", "order": "AC-1"}]
        ),
        "charter_on_reflection_alert": lambda: (
            capsys.readouterr().err == "[alert] ecommerce: self-reflection said Y (3 in a row)\n"
        ),
        "charter_on_goal_transition": lambda: True,  # logs; checked by caplog below
    }[hook]
    assert state()


def test_goal_transition_example_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    host, _ = example_host("charter_on_goal_transition", tmp_path)
    with caplog.at_level("INFO", logger="acme.goals"):
        host.notify("charter_on_goal_transition", EVENTS["charter_on_goal_transition"])
    assert caplog.messages == ["goal g7 track_order: None -> pending"]


def test_every_hook_has_its_own_test() -> None:
    tests = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "unit" / "plugins").glob("*.py")
    )
    missing = [h for h in HOOKS if f"def test_hook_{h}(" not in tests]
    assert missing == []


def test_the_walkthrough_shows_what_charter_new_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from charter.cli.main import main

    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ (charter new plugin acme)\n(.*?)```", text, flags=re.S)
    assert block is not None
    monkeypatch.chdir(tmp_path)
    assert main(block[1].split()[1:]) == 0
    assert capsys.readouterr().out == block[2]
