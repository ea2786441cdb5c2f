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

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

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


def _config_file(cwd: Path) -> tuple[Path, Mapping[str, Any]] | None:
    """The ``[plugins]`` table and its file, or None when neither file configures plugins."""
    if cwd.resolve() == Path.cwd().resolve():
        cwd = Path()  # messages say charter.toml:2:1, not an absolute path
    charter_toml = cwd / "charter.toml"
    if charter_toml.is_file():
        return charter_toml, _load_toml(charter_toml).get("plugins", {})
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        table: Any = _load_toml(pyproject)
        for key in ("tool", "charter", "plugins"):
            # [tool] charter = 1 is not ours to read: the configuration check reports it
            table = table.get(key) if isinstance(table, dict) else None
        if table is not None:
            return pyproject, table
    return None


class _ConfigError(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise _ConfigError(
            error("CH206", f"cannot read {path.name}: {exc}", Location(str(path)))
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        # tomllib says "... (at line 3, column 9)": move that into the location
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        loc = Location(str(path), int(m[1]), int(m[2])) if m else Location(str(path))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise _ConfigError(error("CH206", f"invalid TOML: {message}", loc)) from exc


def _key_line(path: Path, key: str) -> Location:
    """TOML parsing keeps no positions: find the key's line by text, good enough to point at."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return Location(str(path))
    for n, line in enumerate(lines, start=1):
        m = re.match(rf"\s*({re.escape(key)})\s*=", line)
        if m:
            return Location(str(path), n, m.start(1) + 1, n, m.end(1) + 1)
    return Location(str(path))


def _from_table(path: Path, table: Any, diags: list[Diagnostic]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if not isinstance(table, Mapping):
        diags.append(error("CH206", "[plugins] must be a table", Location(str(path))))
        return out
    for key, value in table.items():
        loc = _key_line(path, key)
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
    diags: list[Diagnostic] = []
    settings = PluginSettings()
    try:
        found = _config_file(cwd or Path.cwd())
    except _ConfigError as exc:
        found = None
        diags.append(exc.diagnostic)
    if found is not None:
        path, table = found
        values = _from_table(path, table, diags)
        settings = replace(settings, **values, source=path.name)
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
