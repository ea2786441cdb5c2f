"""The plugin host: hook specs, then built-ins, then entry points of the group ``charter``.

Built-ins are plugins too (Datasette's rule): they register through the same hooks that a
third-party distribution uses, so nothing a built-in does is out of a plugin's reach.

Nothing happens at import time. ``make_plugin_manager()`` adds the specs, registers the
built-ins, loads the allowed entry points and validates each plugin (``check_pending``) as it
comes; ``PluginHost`` then calls every registration hook once, plugin by plugin, so that a
plugin that raises, returns the wrong type or takes a name another plugin has is reported by
name (CH200-CH205) and, under the ``disable`` policy, switched off, never silently dropped.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import inspect
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

import pluggy

from charter import hookspecs, plugin_sites
from charter._registration import KIND_BY_HOOK, KINDS, name_of, pack_ref, plugin_dir
from charter._version import __version__
from charter.diagnostics import (
    Diagnostic,
    DiagnosticError,
    Severity,
    did_you_mean,
    error,
    warning,
)
from charter.extensions import PackRef
from charter.registry import Registry
from charter.settings import PluginSettings, load_settings

ENTRY_POINT_GROUP = plugin_sites.ENTRY_POINT_GROUP
BUILTIN_PLUGINS = ("charter.builtin", "charter.memory.embedders", "charter.llm.backends")
_PREFIX = "charter_"


class CharterPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers which distribution each plugin came from.

    Like pytest, any function named ``charter_*`` in a plugin is taken as a hook implementation
    even without ``@hookimpl``, so a misspelled hook name is an error (CH201) instead of a
    function nobody ever calls.
    """

    def __init__(self) -> None:
        super().__init__(hookspecs.PROJECT)
        self.distributions: dict[str, tuple[str, str]] = {}  # plugin name -> (dist, version)
        # each plugin problem -> the plugin's name (its location is the plugin's code)
        self.blame: dict[Diagnostic, str] = {}

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(_PREFIX) and inspect.isroutine(getattr(plugin, name)):
            return pluggy.HookimplOpts(
                wrapper=False,
                hookwrapper=False,
                optionalhook=False,
                tryfirst=False,
                trylast=False,
                specname=None,
            )
        return opts

    def describe(self, name: str) -> str:
        """``'zh' (charter-zh 0.1.0)``: how messages name a plugin."""
        dist, version = self.distributions.get(name, ("?", "?"))
        return f"'{name}' ({dist} {version})"


def entry_points() -> list[md.EntryPoint]:
    """The installed entry points of the group (a function so tests can substitute it)."""
    return list(md.entry_points(group=ENTRY_POINT_GROUP))


def _blame(pm: CharterPluginManager, name: str, diagnostic: Diagnostic) -> Diagnostic:
    pm.blame[diagnostic] = name
    return diagnostic


def _owner(pm: CharterPluginManager, d: Diagnostic) -> str:
    """The plugin a problem is about; '' for none (a CH206 of the settings)."""
    path = d.location.path
    return pm.blame.get(d) or (path[len("<plugin ") : -1] if path.startswith("<plugin ") else "")


def _validate(pm: CharterPluginManager, name: str) -> Diagnostic | None:
    """CH201 when the plugin implements a hook that does not exist or as a wrapper."""
    known = set(hookspecs.REGISTRATION_HOOKS + hookspecs.LIFECYCLE_HOOKS)
    plugin = pm.get_plugin(name)
    for hook in pm.get_hookcallers(plugin) or ():
        for impl in hook.get_hookimpls():
            if impl.plugin_name != name:
                continue
            if hook.name not in known:
                return error(
                    "CH201",
                    f"plugin {pm.describe(name)} implements unknown hook '{hook.name}'",
                    plugin_sites.at(pm, name, impl.function),
                    did_you_mean(hook.name, known) or "see docs/plugins.md for the hooks",
                )
            if impl.hookwrapper or impl.wrapper:
                return error(
                    "CH201",
                    f"plugin {pm.describe(name)} implements '{hook.name}' as a wrapper",
                    plugin_sites.at(pm, name, impl.function),
                    "Charter calls each implementation on its own; drop wrapper=True",
                )
    return None


def _register(pm: CharterPluginManager, plugin: object, name: str) -> Diagnostic | None:
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        # a parameter the spec does not pass: pluggy's message names hook and arguments
        hook = re.search(r"for hook '(\w+)'", str(exc))
        args = re.search(r"Argument\(s\) \{(.*?)\}", str(exc))
        function = getattr(plugin, hook[1], None) if hook else None
        return _blame(
            pm,
            name,
            error(
                "CH201",
                f"plugin {pm.describe(name)} implements '{hook[1] if hook else '?'}' with "
                f"parameters the hook does not pass: {args[1] if args else str(exc)}",
                plugin_sites.at(pm, name, function, plugin),
                "see docs/plugins.md for each hook's exact signature",
            ),
        )
    problem = _validate(pm, name)
    if problem is not None:
        pm.unregister(name=name)
        _blame(pm, name, problem)
    return problem


def make_plugin_manager(
    *,
    load_entry_points: bool | None = None,
    allow: Iterable[str] | None = None,
    settings: PluginSettings | None = None,
) -> tuple[CharterPluginManager, list[Diagnostic]]:
    """A fresh manager; never built at import time, so tests can make isolated ones.

    ``settings`` default to ``charter.settings.load_settings()``; ``load_entry_points`` and
    ``allow`` override its ``autoload`` and ``allow``.
    """
    diagnostics: list[Diagnostic] = []
    if settings is None:
        settings, diagnostics = load_settings()
    if load_entry_points is not None:
        settings = replace(settings, autoload=load_entry_points)
    if allow is not None:
        settings = replace(settings, allow=frozenset(allow))
    pm = CharterPluginManager()
    pm.add_hookspecs(hookspecs)
    for modname in BUILTIN_PLUGINS:
        pm.distributions[modname] = ("charter", __version__)
        pm.register(importlib.import_module(modname), name=modname)
    if not settings.autoload:
        return pm, diagnostics
    for ep in entry_points():
        if settings.allow is not None and ep.name not in settings.allow:
            continue
        if pm.has_plugin(ep.name):
            continue
        dist = ep.dist.name if ep.dist else "?"
        version = ep.dist.version if ep.dist else "?"
        pm.distributions[ep.name] = (dist, version)
        try:
            plugin = ep.load()
        except Exception as exc:  # a broken plugin must not take the host down
            # its distribution stays known: `charter plugins` lists it as failed, with the CH200
            diagnostics.append(
                _blame(
                    pm,
                    ep.name,
                    error(
                        "CH200",
                        f"plugin '{ep.name}' ({dist} {version}) failed to import: "
                        f"{type(exc).__name__}: {exc}",
                        plugin_sites.import_site(ep, exc),
                        f"reinstall or uninstall '{dist}', or leave '{ep.name}' out of "
                        "the allow-list (CHARTER_PLUGINS)",
                    ),
                )
            )
            continue
        problem = _register(pm, plugin, ep.name)
        if problem is not None:
            diagnostics.append(problem)
    return pm, diagnostics


@dataclass
class PluginInfo:
    """One plugin as ``charter plugins`` shows it."""

    name: str
    distribution: str
    version: str
    status: str = "ok"  # ok, failed (policy fail), disabled (policy disable)
    hooks: dict[str, list[str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "hooks": {h: list(v) for h, v in self.hooks.items()},
            "problems": list(self.problems),
        }


_Clash = tuple[str, Diagnostic]  # the plugin to blame, and the CH202


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
                self._failed[_owner(pm, d)] = None
        self.registry = self._build()

    # ---- registration --------------------------------------------------------------------

    def _trace(self, hook: str, plugin: str, result: str) -> None:
        if self.settings.trace:
            out = self._trace_to if self._trace_to is not None else sys.stderr
            out.write(f"charter-trace: {hook} {self.pm.describe(plugin)} -> {result}\n")

    def _problem(self, plugin: str, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(_blame(self.pm, plugin, diagnostic))
        self._failed[plugin] = None

    def _call_registration(self, hook: str) -> list[tuple[str, list[Any]]]:
        """Each plugin's valid objects from one registration hook, in registration order."""
        kind = KIND_BY_HOOK[hook]
        out: list[tuple[str, list[Any]]] = []
        for impl in getattr(self.pm.hook, hook).get_hookimpls():  # registration order
            name = impl.plugin_name
            try:
                result = impl.function()
            except Exception as exc:
                self._trace(hook, name, f"raised {type(exc).__name__}: {exc}")
                self._problem(name, plugin_sites.raised(self.pm, name, hook, exc, impl))
                continue
            if result is None:
                result = []
            if isinstance(result, str | bytes | Mapping) or not isinstance(result, Iterable):
                self._trace(hook, name, f"returned a {type(result).__name__}")
                self._problem(
                    name,
                    error(
                        "CH203",
                        f"plugin {self.pm.describe(name)} returned a "
                        f"{type(result).__name__} from {hook}, not a list of {kind.what}s",
                        plugin_sites.at(self.pm, name, impl.function),
                        f"return a list; each {kind.what} has {kind.shape}",
                    ),
                )
                continue
            valid: list[Any] = []
            for obj in result:
                if not kind.valid(obj):
                    self._problem(
                        name,
                        error(
                            "CH203",
                            f"plugin {self.pm.describe(name)} returned a "
                            f"{type(obj).__name__} from {hook}, which is not a {kind.what}",
                            plugin_sites.at(self.pm, name, impl.function),
                            f"a {kind.what} has {kind.shape}",
                        ),
                    )
                    continue
                if kind.field == "packs":
                    ref = pack_ref(obj, plugin_dir(impl.plugin))
                    if not isinstance(ref, PackRef):
                        self._problem(
                            name,
                            error(
                                "CH203",
                                f"plugin {self.pm.describe(name)} returned a bad pack from "
                                f"{hook}: {ref}",
                                plugin_sites.at(self.pm, name, impl.function),
                                "ship the pack directory as package data and return its path",
                            ),
                        )
                        continue
                    obj = ref
                valid.append(obj)
            self._trace(hook, name, ", ".join(name_of(kind, o) for o in valid) or "nothing")
            out.append((name, valid))
        return out

    def _build(self) -> Registry:
        self._implemented: dict[str, list[str]] = {}
        for hook in hookspecs.REGISTRATION_HOOKS + hookspecs.LIFECYCLE_HOOKS:
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                self._implemented.setdefault(impl.plugin_name, []).append(hook)
        calls = {k.hook: self._call_registration(k.hook) for k in KINDS}
        disable = self.settings.errors == "disable"
        while True:
            excluded = set(self._failed) if disable else set()
            fields, owners, clash = self._assemble(calls, excluded)
            if clash is None:
                break
            self._problem(clash[0], clash[1])
            if not disable:
                break
        for plugin in self._failed:
            self._report_failed(plugin, disable)
        self._describe(calls, owners, set(self._failed) if disable else set())
        versions = {}
        for name, (dist, version) in self.pm.distributions.items():
            if self.pm.has_plugin(name):
                versions[name] = versions[dist] = version
        return Registry(**fields, plugins=versions)

    def _assemble(
        self, calls: Mapping[str, list[tuple[str, list[Any]]]], excluded: set[str]
    ) -> tuple[
        dict[str, dict[str, Any]], dict[tuple[str, str], str], tuple[str, Diagnostic] | None
    ]:
        """The registry's fields without the excluded plugins; stops at the first new clash."""
        fields: dict[str, dict[str, Any]] = {}
        owners: dict[tuple[str, str], str] = {}
        seen_clashes = {d.message for d in self.diagnostics if d.code == "CH202"}
        clash = None
        for kind in KINDS:
            found: dict[str, Any] = {}
            for plugin, objects in calls[kind.hook]:
                if plugin in excluded:
                    continue
                for obj in objects:
                    key = name_of(kind, obj)
                    if key in found:
                        first = owners[(kind.field, key)]
                        message = (
                            f"{kind.what} '{key}' is registered by both "
                            f"{self.pm.describe(first)} and {self.pm.describe(plugin)}"
                        )
                        if message not in seen_clashes and clash is None:
                            clash = (
                                plugin,
                                error(
                                    "CH202",
                                    message,
                                    plugin_sites.at(
                                        self.pm, plugin, self._hook_function(kind.hook, plugin)
                                    ),
                                    "uninstall one of the two plugins, or leave one out of "
                                    "the allow-list (CHARTER_PLUGINS)",
                                ),
                            )
                        continue
                    found[key] = obj.path if kind.field == "packs" else obj
                    owners[(kind.field, key)] = plugin
            fields[kind.field] = found
        return fields, owners, clash

    def _hook_function(self, hook: str, plugin: str) -> Any:
        impls = getattr(self.pm.hook, hook).get_hookimpls()
        return next((i.function for i in impls if i.plugin_name == plugin), None)

    def _report_failed(self, plugin: str, disable: bool) -> None:
        if not disable:
            return
        problems = [d for d in self.diagnostics if _owner(self.pm, d) == plugin]
        self.diagnostics = [d for d in self.diagnostics if d not in problems]
        self.diagnostics += [
            _blame(self.pm, plugin, replace(d, severity=Severity.WARNING)) for d in problems
        ]
        self.diagnostics.append(
            _blame(
                self.pm,
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

    def _describe(
        self,
        calls: Mapping[str, list[tuple[str, list[Any]]]],
        owners: Mapping[tuple[str, str], str],
        disabled: set[str],
    ) -> None:
        for name, (dist, version) in self.pm.distributions.items():
            info = self.infos[name] = PluginInfo(name, dist, version)
            if name in self._failed:
                info.status = "disabled" if name in disabled else "failed"
        for d in self.diagnostics:
            name = _owner(self.pm, d) if d.code != "CH206" else ""
            if name in self.infos and d.code != "CH205":
                self.infos[name].problems.append(f"{d.code} {d.message}")
        for plugin, hooks in self._implemented.items():
            if plugin in self.infos:
                self.infos[plugin].hooks = {hook: [] for hook in hooks}
        for kind in KINDS:
            for plugin, objects in calls[kind.hook]:
                if plugin not in self.infos:
                    continue
                names = self.infos[plugin].hooks.setdefault(kind.hook, [])
                for obj in objects:
                    key = name_of(kind, obj)
                    if owners.get((kind.field, key)) == plugin or plugin in disabled:
                        names.append(key)

    # ---- lifecycle -----------------------------------------------------------------------

    def notify(self, hook: str, event: object) -> list[Diagnostic]:
        """Call a lifecycle hook on every plugin with ``event``; problems come back as
        Diagnostics (``disable`` policy: the plugin is switched off) or are raised as a
        ``DiagnosticError`` (``fail`` policy), after every plugin has been called."""
        if hook not in hookspecs.LIFECYCLE_HOOKS:
            raise ValueError(f"{hook!r} is not a lifecycle hook")
        problems: list[Diagnostic] = []
        for impl in getattr(self.pm.hook, hook).get_hookimpls():
            name = impl.plugin_name
            try:
                result = impl.function(*[event for _ in impl.argnames])
            except Exception as exc:
                self._trace(hook, name, f"raised {type(exc).__name__}: {exc}")
                problems.append(
                    _blame(self.pm, name, plugin_sites.raised(self.pm, name, hook, exc, impl))
                )
                continue
            self._trace(hook, name, repr(result))
        if problems and self.settings.errors == "fail":
            self.diagnostics += problems
            raise DiagnosticError(problems)
        out: list[Diagnostic] = []
        for d in problems:
            name = _owner(self.pm, d)
            self._failed[name] = None
            self.diagnostics.append(d)
            self._report_failed(name, disable=True)
            if name in self.infos:
                self.infos[name].status = "disabled"
                self.infos[name].problems.append(f"{d.code} {d.message}")
            out += [x for x in self.diagnostics if _owner(self.pm, x) == name]
        return out

    def call_count(self, hook: str) -> int:
        return len(getattr(self.pm.hook, hook).get_hookimpls())


def make_host(settings: PluginSettings | None = None, *, trace: TextIO | None = None) -> PluginHost:
    """Load the plugins these settings allow and build their registry."""
    config_diags: list[Diagnostic] = []
    if settings is None:
        settings, config_diags = load_settings()
    pm, diags = make_plugin_manager(settings=settings)
    return PluginHost(pm, settings, config_diags + diags, trace=trace)


_HOSTS: dict[PluginSettings, PluginHost] = {}


def default_host(*, no_plugins: bool = False) -> PluginHost:
    """The host of the installed plugins under the settings in force, built once per
    process and settings."""
    settings, diags = load_settings(no_plugins=no_plugins)
    host = _HOSTS.get(settings)
    if host is None:
        pm, more = make_plugin_manager(settings=settings)
        host = _HOSTS[settings] = PluginHost(pm, settings, diags + more)
    return host


def default_registry() -> tuple[Registry, tuple[Diagnostic, ...]]:
    """The registry of the installed plugins and every problem found loading them."""
    host = default_host()
    return host.registry, tuple(host.diagnostics)


def build_registry(pm: CharterPluginManager) -> tuple[Registry, list[Diagnostic]]:
    """The registry of an already populated manager (tests, embedding)."""
    host = PluginHost(pm, PluginSettings())
    return host.registry, host.diagnostics


def registry_from(plugins: Mapping[str, object]) -> Registry:
    """A registry from explicit plugin objects (tests, embedding) without entry points."""
    pm, _ = make_plugin_manager(settings=PluginSettings(autoload=False))
    for name, plugin in plugins.items():
        pm.distributions.setdefault(name, (name, "?"))
        problem = _register(pm, plugin, name)
        if problem is not None:
            raise DiagnosticError([problem])
    registry, diags = build_registry(pm)
    if diags:
        raise DiagnosticError(diags)
    return registry
