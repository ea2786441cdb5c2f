"""The plugin host: a plugin manager with its registry built, its problems found, and safe
calls of the lifecycle hooks, under the error policy (``fail`` or ``disable``).

Nothing happens at import time. ``make_plugin_manager()`` (``charter.plugins.manager``) loads and
validates the plugins; ``PluginHost`` then calls every registration hook once, plugin by plugin
(``charter.plugins.registration``), so that a plugin that raises, returns the wrong type or takes
a name another plugin has is reported by name (CH200-CH205) and, under the ``disable`` policy,
switched off, never silently dropped. Lifecycle hooks go through ``PluginHost.notify``
(``charter.plugins.lifecycle``).

``make_host`` is the one factory of a host, and so of a registry: ``default_host``,
``default_registry``, ``build_registry`` and ``registry_from`` are ways of calling it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TextIO

from charter.config.settings import PluginSettings, load_settings
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, DiagnosticError, Severity, warning
from charter.plugins import registration
from charter.plugins import sites as plugin_sites
from charter.plugins.kinds import KINDS
from charter.plugins.lifecycle import dispatch
from charter.plugins.manager import (
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    CharterPluginManager,
    make_plugin_manager,
    register,
)
from charter.plugins.registration import PluginInfo

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "CharterPluginManager",
    "PluginHost",
    "PluginInfo",
    "build_registry",
    "default_host",
    "default_registry",
    "make_host",
    "make_plugin_manager",
    "registry_from",
]


class PluginHost:
    """A plugin manager with its registry built, its problems found, and safe hook calls."""

    def __init__(
        self,
        pm: CharterPluginManager,
        settings: PluginSettings,
        diagnostics: Iterable[Diagnostic] = (),
        trace: TextIO | None = None,
    ) -> None:
        self.pm = pm
        self.settings = settings
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        self._trace_to = trace  # None: whatever sys.stderr is when a hook is called
        self.infos: dict[str, PluginInfo] = {}
        self._failed: dict[str, None] = {}  # plugins with problems, in order
        for d in self.diagnostics:
            if d.code in ("CH200", "CH201"):
                self._failed[pm.owner(d)] = None
        self.registry = self._build()

    def _trace(self, hook: str, plugin: str, result: str) -> None:
        if self.settings.trace:
            out = self._trace_to if self._trace_to is not None else sys.stderr
            out.write(f"charter-trace: {hook} {self.pm.describe(plugin)} -> {result}\n")

    def _problem(self, plugin: str, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(self.pm.problem(plugin, diagnostic))
        self._failed[plugin] = None

    def _build(self) -> Registry:
        implemented = registration.implemented(self.pm)
        calls = {
            k.hook: registration.collect(self.pm, k.hook, self._trace, self._problem) for k in KINDS
        }
        disable = self.settings.errors == "disable"
        while True:
            excluded = set(self._failed) if disable else set()
            seen = {d.message for d in self.diagnostics if d.code == "CH202"}
            fields, owners, clash = registration.assemble(self.pm, calls, excluded, seen)
            if clash is None:
                break
            self._problem(*clash)
            if not disable:
                break
        for plugin in self._failed:
            self._report_failed(plugin, disable)
        self.infos = registration.describe(
            self.pm,
            calls,
            owners,
            implemented=implemented,
            failed=self._failed,
            disabled=set(self._failed) if disable else set(),
            diagnostics=self.diagnostics,
        )
        return registration.registry(self.pm, fields)

    def _report_failed(self, plugin: str, disable: bool) -> None:
        if not disable:
            return
        problems = [d for d in self.diagnostics if self.pm.owner(d) == plugin]
        self.diagnostics = [d for d in self.diagnostics if d not in problems]
        self.diagnostics += [
            self.pm.problem(plugin, replace(d, severity=Severity.WARNING)) for d in problems
        ]
        self.diagnostics.append(
            self.pm.problem(
                plugin,
                warning(
                    "CH205",
                    f"plugin {self.pm.describe(plugin)} is disabled: "
                    f"{len(problems)} problem(s) reported",
                    problems[0].location if problems else plugin_sites.at(self.pm, plugin),
                    "plugin_errors is 'disable'; set it to 'fail' to stop on plugin errors",
                ),
            )
        )
        if self.pm.has_plugin(plugin):
            self.pm.unregister(name=plugin)

    def notify(self, hook: str, event: object) -> list[Diagnostic]:
        """Call a lifecycle hook on every plugin with ``event``; problems come back as
        Diagnostics (``disable`` policy: the plugin is switched off) or are raised as a
        ``DiagnosticError`` (``fail`` policy), after every plugin has been called."""
        problems = dispatch(self.pm, hook, {"event": event}, self._trace)
        if problems and self.settings.errors == "fail":
            self.diagnostics += problems
            raise DiagnosticError(problems)
        out: list[Diagnostic] = []
        for d in problems:
            name = self.pm.owner(d)
            self._failed[name] = None
            self.diagnostics.append(d)
            self._report_failed(name, disable=True)
            if name in self.infos:
                self.infos[name].status = "disabled"
                self.infos[name].problems.append(f"{d.code} {d.message}")
            out += [x for x in self.diagnostics if self.pm.owner(x) == name]
        return out

    def call_count(self, hook: str) -> int:
        return len(getattr(self.pm.hook, hook).get_hookimpls())


def make_host(
    settings: PluginSettings | None = None,
    *,
    trace: TextIO | None = None,
    pm: CharterPluginManager | None = None,
    diagnostics: Iterable[Diagnostic] = (),
) -> PluginHost:
    """The plugin host, and so the registry, of ``pm`` (by default: the plugins these settings
    allow, loaded now) under ``settings`` (by default: ``load_settings()``); ``diagnostics`` are
    problems found before, which the host reports first."""
    found = list(diagnostics)
    if settings is None:
        settings, more = load_settings()
        found += more
    if pm is None:
        pm, more = make_plugin_manager(settings=settings)
        found += more
    return PluginHost(pm, settings, found, trace=trace)


_HOSTS: dict[PluginSettings, PluginHost] = {}


def default_host(*, no_plugins: bool = False) -> PluginHost:
    """The host of the installed plugins under the settings in force, built once per
    process and settings."""
    settings, diags = load_settings(no_plugins=no_plugins)
    host = _HOSTS.get(settings)
    if host is None:
        host = _HOSTS[settings] = make_host(settings, diagnostics=diags)
    return host


def default_registry() -> tuple[Registry, tuple[Diagnostic, ...]]:
    """The registry of the installed plugins and every problem found loading them."""
    host = default_host()
    return host.registry, tuple(host.diagnostics)


def build_registry(pm: CharterPluginManager) -> tuple[Registry, list[Diagnostic]]:
    """The registry of an already populated manager (tests, embedding)."""
    host = make_host(PluginSettings(), pm=pm)
    return host.registry, host.diagnostics


def registry_from(plugins: Mapping[str, object]) -> Registry:
    """A registry from explicit plugin objects (tests, embedding) without entry points."""
    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    for name, plugin in plugins.items():
        pm.distributions.setdefault(name, (name, "?"))
        problem = register(pm, plugin, name)
        if problem is not None:
            raise DiagnosticError([problem])
    registry, diags = build_registry(pm)
    if diags:
        raise DiagnosticError(diags)
    return registry
