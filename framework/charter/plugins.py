"""The plugin host: hook specs, then built-ins, then entry points of the group ``charter``.

Built-ins are plugins too (Datasette's rule): they register through the same hooks that a
third-party distribution uses, so nothing a built-in does is out of a plugin's reach.
"""

from __future__ import annotations

import importlib.metadata as md
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy

from charter import hookspecs
from charter.diagnostics import Diagnostic, Location, error
from charter.registry import Registry

ENTRY_POINT_GROUP = "charter"
BUILTIN_PLUGINS = ("charter.builtin",)


class CharterPluginManager(pluggy.PluginManager):
    """A pluggy manager that remembers which distribution each plugin came from."""

    def __init__(self) -> None:
        super().__init__("charter")
        self.distributions: dict[str, tuple[str, str]] = {}  # plugin name -> (dist, version)


def make_plugin_manager(
    *, load_entry_points: bool | None = None, allow: Iterable[str] | None = None
) -> tuple[CharterPluginManager, list[Diagnostic]]:
    """A fresh manager; never built at import time so tests can make isolated ones.

    ``allow`` restricts third-party plugins to the named entry points (``CHARTER_PLUGINS`` is
    a comma-separated default); ``CHARTER_DISABLE_PLUGIN_AUTOLOAD`` turns entry points off.
    """
    pm = CharterPluginManager()
    pm.add_hookspecs(hookspecs)
    diagnostics: list[Diagnostic] = []
    import importlib

    for modname in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(modname), name=modname)
    if load_entry_points is None:
        load_entry_points = not os.environ.get("CHARTER_DISABLE_PLUGIN_AUTOLOAD")
    if allow is None and os.environ.get("CHARTER_PLUGINS"):
        allow = [p.strip() for p in os.environ["CHARTER_PLUGINS"].split(",") if p.strip()]
    allowed = set(allow) if allow is not None else None
    if load_entry_points:
        for ep in md.entry_points(group=ENTRY_POINT_GROUP):
            if allowed is not None and ep.name not in allowed:
                continue
            if pm.get_plugin(ep.name) is not None:
                continue
            dist = ep.dist.name if ep.dist else "?"
            version = ep.dist.version if ep.dist else "?"
            try:
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
                pm.check_pending()
                pm.distributions[ep.name] = (dist, version)
            except Exception as exc:  # a broken plugin must not take the host down
                if (p := pm.get_plugin(ep.name)) is not None:
                    pm.unregister(p)
                diagnostics.append(
                    error(
                        "CH200",
                        f"plugin '{ep.name}' ({dist} {version}) failed to load: "
                        f"{type(exc).__name__}: {exc}",
                        Location(f"<plugin {ep.name}>"),
                        hint=f"reinstall or uninstall '{dist}', or leave it out of CHARTER_PLUGINS",
                    )
                )
    return pm, diagnostics


def plugin_versions(pm: CharterPluginManager) -> dict[str, str]:
    """Plugin name -> version, for packs that declare ``requires.plugins``.

    A plugin is known under its entry-point name and its distribution name.
    """
    from charter._version import __version__

    versions: dict[str, str] = {}
    for name, (dist, version) in pm.distributions.items():
        versions[name] = version
        versions[dist] = version

    for name in BUILTIN_PLUGINS:
        versions[name] = __version__
    return versions


def _collect(
    pm: pluggy.PluginManager,
    hook_name: str,
    what: str,
    diagnostics: list[Diagnostic],
    valid: Callable[[Any], bool],
) -> dict[str, Any]:
    found: dict[str, Any] = {}
    owner: dict[str, str] = {}
    hook = getattr(pm.hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):  # registration order
        pname = pm.get_name(impl.plugin) or "?"
        try:
            result = impl.function()
        except Exception as exc:
            diagnostics.append(
                error(
                    "CH200",
                    f"plugin '{pname}' raised in {hook_name}: {type(exc).__name__}: {exc}",
                    Location(f"<plugin {pname}>"),
                )
            )
            continue
        for obj in result or ():
            name = getattr(obj, "name", None)
            if not isinstance(name, str) or not valid(obj):
                diagnostics.append(
                    error(
                        "CH200",
                        f"plugin '{pname}' returned a {type(obj).__name__} from "
                        f"{hook_name}, which is not a {what}",
                        Location(f"<plugin {pname}>"),
                    )
                )
                continue
            if name in found:
                diagnostics.append(
                    error(
                        "CH200",
                        f"{what} '{name}' is registered by both '{owner[name]}' and '{pname}'",
                        Location(f"<plugin {pname}>"),
                        hint="uninstall one of the two plugins or restrict CHARTER_PLUGINS",
                    )
                )
                continue
            found[name] = obj
            owner[name] = pname
    return found


def build_registry(pm: CharterPluginManager) -> tuple[Registry, list[Diagnostic]]:
    from charter.protocols import Extractor, Predicate, Repair

    diagnostics: list[Diagnostic] = []
    extractors = _collect(
        pm,
        "charter_register_extractors",
        "extractor",
        diagnostics,
        lambda o: isinstance(o, Extractor),
    )
    predicates = _collect(
        pm,
        "charter_register_predicates",
        "predicate",
        diagnostics,
        lambda o: isinstance(o, Predicate),
    )
    repairs = _collect(
        pm, "charter_register_repairs", "repair", diagnostics, lambda o: isinstance(o, Repair)
    )
    return (
        Registry(
            extractors=extractors,
            predicates=predicates,
            repairs=repairs,
            plugins=plugin_versions(pm),
        ),
        diagnostics,
    )


_DEFAULT: tuple[Registry, tuple[Diagnostic, ...]] | None = None


def default_registry() -> tuple[Registry, tuple[Diagnostic, ...]]:
    """The registry of the installed plugins, built once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        pm, diags = make_plugin_manager()
        registry, more = build_registry(pm)
        _DEFAULT = (registry, tuple(diags + more))
    return _DEFAULT


def registry_from(plugins: Mapping[str, object]) -> Registry:
    """A registry from explicit plugin objects (tests, embedding) without entry points."""
    pm, _ = make_plugin_manager(load_entry_points=False)
    for name, plugin in plugins.items():
        pm.register(plugin, name=name)
    registry, diags = build_registry(pm)
    if diags:
        from charter.diagnostics import DiagnosticError

        raise DiagnosticError(diags)
    return registry
