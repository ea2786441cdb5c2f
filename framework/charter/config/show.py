"""The effective configuration for people: masked data, and TOML with each value's source.

Nothing here ever holds a secret's value: a secret is ``***`` when set and None (in TOML: a
comment) when not; URLs and backend options are masked by shape (``charter.text.masking``): a URL's
password and secret query parameters, the value of a secret-looking option name at any depth,
header values, anything token-shaped.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from charter.config.specs import SPECS
from charter.text.masking import MASK, mask_data, mask_url

if TYPE_CHECKING:
    from charter.config.model import Config, Secret


def _secret(value: Secret | None) -> str | None:
    return None if value is None else MASK


def masked_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``[model.options]`` with every secret masked by its shape (``mask_data``): the value
    of a secret-looking name (``api_key``, ``access_token``, ``api-key``, ``auth``...), every
    value of a ``headers`` table but a harmless one, URL passwords, tokens. Names are kept."""
    return {str(k): mask_data(v, str(k)) for k, v in options.items()}


def masked(config: Config) -> dict[str, Any]:
    """``Config.masked()``: plain data in file order, secrets masked."""
    out: dict[str, Any] = {}
    for section in ("database", "memory", "model", "agent", "serve"):
        table: dict[str, Any] = {}
        obj = getattr(config, section)
        for f in fields(obj):
            value = getattr(obj, f.name)
            if f.name in ("key", "api_key"):
                table[f.name] = _secret(value)
            elif f.name == "tenants":
                table["tenants"] = [
                    {"name": t.name, "token_env": t.token_env, "token": _secret(t.token)}
                    for t in value
                ]
            elif f.name in ("url", "base_url", "shared_url"):
                table[f.name] = mask_url(value)
            elif f.name == "options":
                table["options"] = masked_options(value)
            else:
                table[f.name] = value
        out[section] = table
    plugins = ((key, getattr(config.plugins, key)) for key in SPECS["plugins"])
    out["plugins"] = {k: sorted(v) if isinstance(v, frozenset) else v for k, v in plugins}
    return out


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):  # a backend option's value may be a table
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return repr(value)


def _unset(key: str, section: dict[str, Any]) -> str:
    if key == "allow":
        return "# allow: not set, every installed plugin may load"
    env = section.get("api_key_env" if key == "api_key" else f"{key}_env", "")
    return f"# {key}: not set (${env})" if env else f"# {key}: not set"


def _table(
    header: str, prefix: str, data: dict[str, Any], config: Config, *, free_form: bool = False
) -> list[str]:
    rows: list[tuple[str, str | None]] = []
    for key, value in data.items():
        if not free_form and (
            isinstance(value, dict)
            or (isinstance(value, list) and value and isinstance(value[0], dict))
        ):
            continue  # a sub-table, or an array of tables, follows its parent table
        if value is None and not free_form:
            rows.append((_unset(key, data), None))
        else:
            rows.append((f"{_toml_key(key)} = {_toml(value)}", config.source(f"{prefix}{key}")))
    width = max((len(line) for line, source in rows if source is not None), default=0)
    lines = [line if src is None else f"{line.ljust(width)}  # {src}" for line, src in rows]
    return [header, *lines]


def render_toml(config: Config) -> str:
    """The effective configuration as TOML, a comment per line saying where the value came
    from: ``default``, ``charter.toml:12`` or ``env CHARTER_MODEL_BACKEND``."""
    data = masked(config)
    where = f"{config.file} < environment" if config.file else "environment"
    blocks = [[f"# effective configuration: defaults < {where}; secrets masked"]]
    for section, table in data.items():
        blocks.append(_table(f"[{section}]", f"{section}.", table, config))
        for key, sub in table.items():
            if isinstance(sub, dict) and sub:
                header, prefix = f"[{section}.{key}]", f"{section}.{key}."
                blocks.append(_table(header, prefix, sub, config, free_form=True))
        for i, tenant in enumerate(table.get("tenants", [])):
            blocks.append(_table("[[serve.tenants]]", f"serve.tenants[{i}].", tenant, config))
    return "\n\n".join("\n".join(block) for block in blocks) + "\n"


def render_json(config: Config) -> str:
    """``{"config": masked data, "sources": {dotted key: source}}``."""
    data = masked(config)
    sources: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            for i, v in enumerate(value):
                walk(f"{prefix}[{i}]", v)
        else:
            sources[prefix] = config.source(prefix) if value is not None else "not set"

    walk("", data)
    doc = {"config": data, "sources": sources}
    # a TOML date or time can only come from a free-form backend option
    text = json.dumps(doc, ensure_ascii=False, indent=2, default=lambda v: v.isoformat())
    return text + "\n"
