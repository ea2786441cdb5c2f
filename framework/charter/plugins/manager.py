"""The plugin manager: hook specs, then built-ins, then entry points of the group ``charter``.

Built-ins are plugins too (Datasette's rule): they register through the same hooks that a
third-party distribution uses, so nothing a built-in does is out of a plugin's reach.

``make_plugin_manager()`` adds the specs, registers the built-ins, loads the allowed entry points
and validates each plugin as it comes: one that does not import (CH200) or implements a hook that
does not exist, as a wrapper or with parameters the spec does not pass (CH201) is reported by
name and left out. Every plugin problem is recorded with the plugin's name
(``CharterPluginManager.blame``), so nothing downstream has to read it back out of a message or
a location.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import inspect
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import pluggy

from charter._version import __version__
from charter.config.settings import PluginSettings, load_settings
from charter.diagnostics import Diagnostic, did_you_mean, error
from charter.plugins import hookspecs
from charter.plugins import sites as plugin_sites

ENTRY_POINT_GROUP = plugin_sites.ENTRY_POINT_GROUP
# plugin name -> module: the names are what ``charter plugins`` shows and an allow-list names,
# so they stay put when a module moves
BUILTIN_PLUGINS = {
    "charter.builtin": "charter.plugins.builtin",
    "charter.memory.embedders": "charter.memory.embedders",
    "charter.llm.backends": "charter.llm.backends",
}
_PREFIX = "charter_"


class HookRejected(pluggy.PluginValidationError):
    """pluggy's refusal of an implementation, with what its message only prints as data: the
    hook, and the parameters the implementation takes that the hook does not pass (empty when
    pluggy refused it for another reason)."""

    def __init__(self, cause: pluggy.PluginValidationError, hook: str, arguments: set[str]) -> None:
        super().__init__(cause.plugin, str(cause))
        self.hook = hook
        self.arguments = arguments


class CharterPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers which distribution each plugin came from, and which
    plugin each problem is about.

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

    def _verify_hook(self, hook: pluggy.HookCaller, hookimpl: pluggy.HookImpl) -> None:
        # pluggy's own check, unchanged. Its PluginValidationError carries only the plugin: the
        # hook and the unknown parameters are otherwise only in the message text, so they are
        # taken here, where pluggy has them as data (pluggy's hook for this is _verify_hook)
        try:
            super()._verify_hook(hook, hookimpl)
        except pluggy.PluginValidationError as exc:
            spec = hook.spec
            # built as pluggy builds the set it prints, so the names come in the same order
            arguments = (
                set(hookimpl.argnames) - (set(spec.argnames) | set(spec.kwargnames))
                if spec is not None
                else set()
            )
            raise HookRejected(exc, hook.name, arguments) from exc

    def describe(self, name: str) -> str:
        """``'zh' (charter-zh 0.1.0)``: how messages name a plugin."""
        dist, version = self.distributions.get(name, ("?", "?"))
        return f"'{name}' ({dist} {version})"

    def problem(self, name: str, diagnostic: Diagnostic) -> Diagnostic:
        """``diagnostic``, recorded as a problem of plugin ``name``."""
        self.blame[diagnostic] = name
        return diagnostic

    def owner(self, diagnostic: Diagnostic) -> str:
        """The plugin a problem is about; '' for none (a CH206 of the settings)."""
        return self.blame.get(diagnostic, "")


def call_impl(impl: pluggy.HookImpl, kwargs: Mapping[str, object]) -> Any:
    """Call one hook implementation as pluggy does: with the arguments it names, by keyword,
    so an implementation may take fewer parameters than its spec (and a spec may gain some)."""
    return impl.function(**{name: kwargs[name] for name in impl.argnames})


def entry_points() -> list[md.EntryPoint]:
    """The installed entry points of the group (a function so tests can substitute it)."""
    return list(md.entry_points(group=ENTRY_POINT_GROUP))


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


def register(pm: CharterPluginManager, plugin: object, name: str) -> Diagnostic | None:
    """Register ``plugin`` as ``name``; a CH201 (and nothing registered) when it is invalid."""
    try:
        pm.register(plugin, name=name)
    except pluggy.PluginValidationError as exc:
        # mostly a parameter the spec does not pass; when pluggy refused for another reason,
        # its own message stands in for the parameters (as it always has)
        hook, arguments = (
            (exc.hook, exc.arguments) if isinstance(exc, HookRejected) else ("?", None)
        )
        unknown = str(arguments)[1:-1] if arguments else str(exc)
        return pm.problem(
            name,
            error(
                "CH201",
                f"plugin {pm.describe(name)} implements '{hook}' with "
                f"parameters the hook does not pass: {unknown}",
                plugin_sites.at(pm, name, getattr(plugin, hook, None), plugin),
                "see docs/plugins.md for each hook's exact signature",
            ),
        )
    problem = _validate(pm, name)
    if problem is not None:
        pm.unregister(name=name)
        pm.problem(name, problem)
    return problem


def make_plugin_manager(
    *,
    load_entry_points: bool | None = None,
    allow: Iterable[str] | None = None,
    settings: PluginSettings | None = None,
) -> tuple[CharterPluginManager, list[Diagnostic]]:
    """A fresh manager; never built at import time, so tests can make isolated ones.

    ``settings`` default to ``charter.config.settings.load_settings()``; ``load_entry_points`` and
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
    for name, module in BUILTIN_PLUGINS.items():
        pm.distributions[name] = ("charter", __version__)
        pm.register(importlib.import_module(module), name=name)
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
                pm.problem(
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
        problem = register(pm, plugin, ep.name)
        if problem is not None:
            diagnostics.append(problem)
    return pm, diagnostics
