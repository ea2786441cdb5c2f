"""The registry, from the registration hooks: each plugin's objects checked (CH203), then put
together kind by kind in registration order, where a name two plugins register is a clash (CH202);
and the ``PluginInfo`` of each plugin that ``charter plugins`` shows.

These are the steps; ``charter.plugins.host.PluginHost`` runs them under the error policy, and
every problem found here goes to the ``report`` it passes, with the name of the plugin to blame.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from charter.contracts.packs import PackRef
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, error
from charter.plugins import hookspecs
from charter.plugins import sites as plugin_sites
from charter.plugins.kinds import KIND_BY_HOOK, KINDS, name_of, pack_ref, plugin_dir
from charter.plugins.manager import CharterPluginManager, call_impl

Trace = Callable[[str, str, str], None]  # hook, plugin, what came back
Report = Callable[[str, Diagnostic], None]  # the plugin to blame, its problem
Collected = list[tuple[str, list[Any]]]  # (plugin, its valid objects), in registration order
Owners = dict[tuple[str, str], str]  # (Registry field, object name) -> the plugin that has it
Clash = tuple[str, Diagnostic]  # the plugin to blame, and the CH202


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


def implemented(pm: CharterPluginManager) -> dict[str, list[str]]:
    """plugin name -> the hooks it implements, in the order of ``hookspecs``."""
    out: dict[str, list[str]] = {}
    for hook in hookspecs.REGISTRATION_HOOKS + hookspecs.LIFECYCLE_HOOKS:
        for impl in getattr(pm.hook, hook).get_hookimpls():
            out.setdefault(impl.plugin_name, []).append(hook)
    return out


def collect(pm: CharterPluginManager, hook: str, trace: Trace, report: Report) -> Collected:
    """Each plugin's valid objects from one registration hook, in registration order."""
    kind = KIND_BY_HOOK[hook]
    out: Collected = []
    for impl in getattr(pm.hook, hook).get_hookimpls():  # registration order
        name = impl.plugin_name
        try:
            result = call_impl(impl, {})
        except Exception as exc:
            trace(hook, name, f"raised {type(exc).__name__}: {exc}")
            report(name, plugin_sites.raised(pm, name, hook, exc, impl))
            continue
        if result is None:
            result = []
        if isinstance(result, str | bytes | Mapping) or not isinstance(result, Iterable):
            trace(hook, name, f"returned a {type(result).__name__}")
            report(
                name,
                error(
                    "CH203",
                    f"plugin {pm.describe(name)} returned a "
                    f"{type(result).__name__} from {hook}, not a list of {kind.what}s",
                    plugin_sites.at(pm, name, impl.function),
                    f"return a list; each {kind.what} has {kind.shape}",
                ),
            )
            continue
        valid: list[Any] = []
        for obj in result:
            if not kind.valid(obj):
                report(
                    name,
                    error(
                        "CH203",
                        f"plugin {pm.describe(name)} returned a "
                        f"{type(obj).__name__} from {hook}, which is not a {kind.what}",
                        plugin_sites.at(pm, name, impl.function),
                        f"a {kind.what} has {kind.shape}",
                    ),
                )
                continue
            if kind.field == "packs":
                ref = pack_ref(obj, plugin_dir(impl.plugin))
                if not isinstance(ref, PackRef):
                    report(
                        name,
                        error(
                            "CH203",
                            f"plugin {pm.describe(name)} returned a bad pack from {hook}: {ref}",
                            plugin_sites.at(pm, name, impl.function),
                            "ship the pack directory as package data and return its path",
                        ),
                    )
                    continue
                obj = ref
            valid.append(obj)
        trace(hook, name, ", ".join(name_of(kind, o) for o in valid) or "nothing")
        out.append((name, valid))
    return out


def assemble(
    pm: CharterPluginManager,
    calls: Mapping[str, Collected],
    excluded: set[str],
    seen_clashes: set[str],
) -> tuple[dict[str, dict[str, Any]], Owners, Clash | None]:
    """The registry's fields without the excluded plugins; stops at the first clash whose
    message is not among ``seen_clashes``."""
    fields: dict[str, dict[str, Any]] = {}
    owners: Owners = {}
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
                        f"{pm.describe(first)} and {pm.describe(plugin)}"
                    )
                    if message not in seen_clashes and clash is None:
                        clash = (
                            plugin,
                            error(
                                "CH202",
                                message,
                                plugin_sites.at(pm, plugin, _hook_function(pm, kind.hook, plugin)),
                                "uninstall one of the two plugins, or leave one out of "
                                "the allow-list (CHARTER_PLUGINS)",
                            ),
                        )
                    continue
                found[key] = obj.path if kind.field == "packs" else obj
                owners[(kind.field, key)] = plugin
        fields[kind.field] = found
    return fields, owners, clash


def _hook_function(pm: CharterPluginManager, hook: str, plugin: str) -> Any:
    impls = getattr(pm.hook, hook).get_hookimpls()
    return next((i.function for i in impls if i.plugin_name == plugin), None)


def registry(pm: CharterPluginManager, fields: Mapping[str, dict[str, Any]]) -> Registry:
    """The Registry of these fields, with the version of each plugin still registered (under
    its name and its distribution's), and of each that is not."""
    versions: dict[str, str] = {}
    unloaded: dict[str, str] = {}
    for name, (dist, version) in pm.distributions.items():
        into = versions if pm.has_plugin(name) else unloaded
        into[name] = into[dist] = version
    return Registry(**fields, plugins=versions, unloaded=unloaded)


def describe(
    pm: CharterPluginManager,
    calls: Mapping[str, Collected],
    owners: Mapping[tuple[str, str], str],
    *,
    implemented: Mapping[str, list[str]],
    failed: Iterable[str],
    disabled: set[str],
    diagnostics: Iterable[Diagnostic],
) -> dict[str, PluginInfo]:
    """Each known plugin's status, problems, hooks and the names it registered."""
    infos: dict[str, PluginInfo] = {}
    failed = set(failed)
    for name, (dist, version) in pm.distributions.items():
        info = infos[name] = PluginInfo(name, dist, version)
        if name in failed:
            info.status = "disabled" if name in disabled else "failed"
    for d in diagnostics:
        name = pm.owner(d) if d.code != "CH206" else ""
        if name in infos and d.code != "CH205":
            infos[name].problems.append(f"{d.code} {d.message}")
    for plugin, hooks in implemented.items():
        if plugin in infos:
            infos[plugin].hooks = {hook: [] for hook in hooks}
    for kind in KINDS:
        for plugin, objects in calls[kind.hook]:
            if plugin not in infos:
                continue
            names = infos[plugin].hooks.setdefault(kind.hook, [])
            for obj in objects:
                key = name_of(kind, obj)
                if owners.get((kind.field, key)) == plugin or plugin in disabled:
                    names.append(key)
    return infos
