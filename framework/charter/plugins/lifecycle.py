"""Calling a lifecycle hook: every plugin's implementation on its own, by keyword, so that one
that raises neither stops the others nor reaches the runtime.

What comes back is each problem (CH204, recorded with the plugin's name); what to do about it
(raise under ``fail``, switch the plugin off under ``disable``) is the policy of
``charter.plugins.host.PluginHost.notify``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from charter.diagnostics import Diagnostic
from charter.plugins import hookspecs
from charter.plugins import sites as plugin_sites
from charter.plugins.manager import CharterPluginManager, call_impl


def dispatch(
    pm: CharterPluginManager,
    hook: str,
    kwargs: Mapping[str, object],
    trace: Callable[[str, str, str], None],
) -> list[Diagnostic]:
    """Call every implementation of the lifecycle ``hook`` with the arguments it names out of
    ``kwargs``, in registration order; the CH204 of each one that raised."""
    if hook not in hookspecs.LIFECYCLE_HOOKS:
        raise ValueError(f"{hook!r} is not a lifecycle hook")
    problems: list[Diagnostic] = []
    for impl in getattr(pm.hook, hook).get_hookimpls():
        name = impl.plugin_name
        try:
            result = call_impl(impl, kwargs)
        except Exception as exc:
            trace(hook, name, f"raised {type(exc).__name__}: {exc}")
            problems.append(pm.problem(name, plugin_sites.raised(pm, name, hook, exc, impl)))
            continue
        trace(hook, name, repr(result))
    return problems
