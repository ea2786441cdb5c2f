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

These are the ``plugins`` rows of the table of settings (``charter.config.specs``: types,
variables, defaults, checks), read by the same code as every other setting
(``charter.config.values``); ``load_settings`` reads that table alone, before any plugin loads,
and ``load_config`` reads it with the rest (``Config.plugins``). Problems are CH206.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from charter.config.specs import POLICIES as POLICIES
from charter.config.specs import SPECS
from charter.config.toml import ConfigFile, read_config_file
from charter.config.values import Reader
from charter.diagnostics import Diagnostic, Location

ErrorPolicy = Literal["fail", "disable"]
_ROWS = SPECS["plugins"]


@dataclass(frozen=True)
class PluginSettings:
    allow: frozenset[str] | None = _ROWS["allow"].default  # None: every installed plugin
    autoload: bool = _ROWS["autoload"].default
    errors: ErrorPolicy = _ROWS["errors"].default
    trace: bool = _ROWS["trace"].default
    source: str = "defaults"  # where the allow-list / policy came from, for messages


def plugin_settings(
    file: ConfigFile | None,
    values: Mapping[str, Any],
    origins: Mapping[str, Location | str],
    *,
    no_plugins: bool = False,
) -> PluginSettings:
    """The settings of the ``plugins`` values the table's reader accepted (``values``), from
    ``file`` and the environment (``origins`` say which)."""
    settings = PluginSettings(**values)
    if origins.get("plugins.allow") == f"env {_ROWS['allow'].env}":
        settings = replace(settings, source=str(_ROWS["allow"].env))
    elif file is not None and (not file.prefix or "plugins" in file.data):
        settings = replace(settings, source=Path(file.path).name)
    if no_plugins:
        settings = replace(settings, autoload=False)
    return settings


def load_settings(
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
    no_plugins: bool = False,
) -> tuple[PluginSettings, list[Diagnostic]]:
    """The plugin settings in force here, and any problem with them: the ``[plugins]`` table
    alone, read by the one configuration reader (``charter.config.toml``). A file that cannot be
    read is CH206 here (the plugin host reads it alone, e.g. for ``charter plugins``); a
    ``[tool] charter`` that is no table is for the configuration check to report."""
    file, problems = read_config_file(cwd or Path.cwd())
    diags = [dataclasses.replace(d, code="CH206") for d in problems if d.code == "CH400"]
    reader = Reader(file, os.environ if environ is None else environ)
    if file is not None and "plugins" in file.data:
        reader.read_table("plugins", file.data["plugins"])
    reader.read_env(["plugins"])
    settings = plugin_settings(
        file, reader.values["plugins"], reader.origins, no_plugins=no_plugins
    )
    return settings, diags + reader.diags
