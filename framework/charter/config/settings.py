"""How the plugin host is configured: an allow-list, autoloading, the error policy, tracing.

Sources, strongest first: explicit arguments (``--no-plugins``), environment variables, then the
``[plugins]`` table of ``charter.toml`` or the ``[tool.charter.plugins]`` table of
``pyproject.toml`` in the working directory:

.. code-block:: toml

    [plugins]
    allow = ["zh", "acme"]     # only these entry points are loaded (built-ins always are)
    autoload = true            # false: no entry points at all (like --no-plugins)
    errors = "fail"            # or "disable": a misbehaving plugin is switched off and reported

Environment: ``CHARTER_PLUGINS`` (comma-separated allow-list),
``CHARTER_DISABLE_PLUGIN_AUTOLOAD`` (any value but 0/false/no/off), ``CHARTER_PLUGIN_ERRORS``
(``fail``/``disable``), ``CHARTER_TRACE_PLUGINS=1``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from charter.config.toml import ConfigFile, read_config_file
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning

ErrorPolicy = Literal["fail", "disable"]
POLICIES: tuple[ErrorPolicy, ...] = ("fail", "disable")
_KEYS = ("allow", "autoload", "errors")


@dataclass(frozen=True)
class PluginSettings:
    allow: frozenset[str] | None = None  # None: every installed plugin
    autoload: bool = True
    errors: ErrorPolicy = "fail"
    trace: bool = False
    source: str = "defaults"  # where the allow-list / policy came from, for messages


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("0", "false", "no", "off", "")


def _plugins_table(cwd: Path) -> tuple[ConfigFile | None, Any, list[Diagnostic]]:
    """The ``[plugins]`` table and the file it is in, read by the one configuration reader
    (``charter.config.toml``); the table is None when no file configures plugins. A file that
    cannot be read is CH206 here (the plugin host reads it alone, e.g. for ``charter plugins``);
    a ``[tool] charter`` that is no table is for the configuration check to report."""
    file, problems = read_config_file(cwd)
    diags = [dataclasses.replace(d, code="CH206") for d in problems if d.code == "CH400"]
    if file is None:
        return None, None, diags
    if file.prefix and "plugins" not in file.data:
        return None, None, diags  # pyproject.toml's [tool.charter] without plugins
    return file, file.data.get("plugins", {}), diags


def _from_table(file: ConfigFile, table: Any, diags: list[Diagnostic]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(table, Mapping):
        diags.append(error("CH206", "[plugins] must be a table", Location(file.path)))
        return out
    for key, value in table.items():
        loc = file.locate(("plugins", key))
        if key not in _KEYS:
            diags.append(
                warning(
                    "CH206",
                    f"unknown plugins setting '{key}' (ignored)",
                    loc,
                    did_you_mean(key, _KEYS) or f"known settings: {', '.join(_KEYS)}",
                )
            )
        elif key == "allow":
            if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                diags.append(error("CH206", "plugins.allow must be a list of plugin names", loc))
            else:
                out["allow"] = frozenset(value)
        elif key == "autoload":
            if not isinstance(value, bool):
                diags.append(error("CH206", "plugins.autoload must be true or false", loc))
            else:
                out["autoload"] = value
        elif value not in POLICIES:
            diags.append(
                error(
                    "CH206",
                    f'plugins.errors must be "fail" or "disable", not {value!r}',
                    loc,
                )
            )
        else:
            out["errors"] = value
    return out


def load_settings(
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    no_plugins: bool = False,
) -> tuple[PluginSettings, list[Diagnostic]]:
    """The plugin settings in force here, and any problem with the configuration."""
    env = os.environ if environ is None else environ
    settings = PluginSettings()
    file, table, diags = _plugins_table(cwd or Path.cwd())
    if file is not None:
        values = _from_table(file, table, diags)
        settings = replace(settings, **values, source=Path(file.path).name)
    if env.get("CHARTER_PLUGINS", "").strip():
        names = frozenset(p.strip() for p in env["CHARTER_PLUGINS"].split(",") if p.strip())
        settings = replace(settings, allow=names, source="CHARTER_PLUGINS")
    if _truthy(env.get("CHARTER_DISABLE_PLUGIN_AUTOLOAD")):
        settings = replace(settings, autoload=False)
    policy = env.get("CHARTER_PLUGIN_ERRORS", "").strip()
    if policy:
        if policy in POLICIES:
            settings = replace(settings, errors=policy)
        else:
            diags.append(
                error(
                    "CH206",
                    f"CHARTER_PLUGIN_ERRORS must be 'fail' or 'disable', not {policy!r}",
                    Location("<environment>"),
                )
            )
    if _truthy(env.get("CHARTER_TRACE_PLUGINS")):
        settings = replace(settings, trace=True)
    if no_plugins:
        settings = replace(settings, autoload=False)
    return settings, diags
