"""Lifecycle hooks are called by keyword, with the parameters each implementation names."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from charter.config.settings import PluginSettings
from charter.contracts.events import Fallback
from charter.plugins.hookspecs import hookimpl
from charter.plugins.host import PluginHost, make_host

EVENT = Fallback("finance", "policy_search", "skill_unavailable", "faq")


def host(install: Any, settings: PluginSettings, *plugins: tuple[str, object]) -> PluginHost:
    install(*[(name, plugin, f"charter-{name}", "1") for name, plugin in plugins])
    return make_host(settings)


class NamesEvent:
    def __init__(self) -> None:
        self.seen: list[Fallback] = []

    @hookimpl
    def charter_on_fallback(self, event: Fallback) -> None:
        self.seen.append(event)


class NoParameter:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def charter_on_fallback(self) -> None:
        self.calls += 1


def keywords_only(function: Callable[..., None]) -> Callable[..., None]:
    """A wrapper that keeps ``function``'s signature but refuses positional arguments."""

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> None:
        function(**kwargs)

    return wrapper


SEEN: list[Fallback] = []


@hookimpl
@keywords_only
def seen_by_keyword(event: Fallback) -> None:
    SEEN.append(event)


def test_an_implementation_naming_event_gets_the_event(install: Any) -> None:
    plugin = NamesEvent()
    h = host(install, PluginSettings(), ("named", plugin))
    assert h.notify("charter_on_fallback", EVENT) == []
    assert plugin.seen == [EVENT]


def test_an_implementation_without_parameters_is_called_without_arguments(install: Any) -> None:
    plugin = NoParameter()
    h = host(install, PluginSettings(), ("bare", plugin))
    assert h.notify("charter_on_fallback", EVENT) == []
    assert plugin.calls == 1
    assert h.diagnostics == []


def test_the_event_is_passed_by_keyword(install: Any) -> None:
    SEEN.clear()
    plugin = types.SimpleNamespace(charter_on_fallback=seen_by_keyword)
    h = host(install, PluginSettings(), ("kw", plugin))
    assert h.diagnostics == []
    assert h.notify("charter_on_fallback", EVENT) == []
    assert SEEN == [EVENT]


def test_both_kinds_are_called_and_a_raising_one_is_still_isolated(install: Any) -> None:
    class Raises:
        @hookimpl
        def charter_on_fallback(self) -> None:
            raise RuntimeError("observer broke")

    named, bare = NamesEvent(), NoParameter()
    settings = PluginSettings(errors="disable")
    h = host(install, settings, ("raises", Raises()), ("named", named), ("bare", bare))
    problems = h.notify("charter_on_fallback", EVENT)
    assert [(d.code, d.message) for d in problems] == [
        (
            "CH204",
            "plugin 'raises' (charter-raises 1) raised in charter_on_fallback: "
            "RuntimeError: observer broke",
        ),
        ("CH205", "plugin 'raises' (charter-raises 1) is disabled: 1 problem(s) reported"),
    ]
    assert (named.seen, bare.calls) == ([EVENT], 1)
    assert h.infos["raises"].status == "disabled"
