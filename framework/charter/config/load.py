"""Building a ``Config`` from defaults, the file's table and the environment, with diagnostics.

Messages are written here rather than taken from a validator (pydantic's name the model's
fields, not the file's keys, and quote the input, which may be a secret): each names the dotted
key or the variable and what is expected. Every secret text met on the way is kept in
``Config.redact_values`` so that a renderer can mask it in the lines it quotes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from charter.config.model import (
    SECTIONS,
    AgentConfig,
    Config,
    DatabaseConfig,
    MemoryConfig,
    ModelConfig,
    Secret,
    ServeConfig,
    TenantConfig,
)
from charter.config.settings import PluginSettings, _truthy
from charter.config.specs import ENV_LOCATION, SPECS, Kind, env_name, nonempty
from charter.config.toml import ConfigFile
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.text.masking import (
    harmless_header,
    headers_name,
    mask_text,
    secret_name,
    url_password,
    url_secrets,
)

# keys that are known but not plain settings: secrets and the tenants array
EXTRA_KEYS = {"memory": ("key",), "model": ("api_key", "options"), "serve": ("tenants",)}
TENANT_KEYS = ("name", "token_env", "token")
PLUGIN_ENV = {
    "allow": "CHARTER_PLUGINS",
    "autoload": "CHARTER_DISABLE_PLUGIN_AUTOLOAD",
    "errors": "CHARTER_PLUGIN_ERRORS",
    "trace": "CHARTER_TRACE_PLUGINS",
}
_EXPECTED = {"str": "a string", "int": "an integer", "number": "a number", "bool": "true or false"}


def _type_of(value: Any) -> str:
    for kind, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number")):
        if isinstance(value, kind):
            return name
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "a table" if isinstance(value, dict) else "a date or time"


def _fits(kind: Kind, value: Any) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return isinstance(value, {"str": str, "int": int, "number": int | float}[kind])


def _unquote_hint(kind: Kind, value: Any) -> str:
    # the usual mistake is a quoted number or boolean
    if isinstance(value, str) and (
        (kind == "bool" and value in ("true", "false"))
        or (kind in ("int", "number") and re.fullmatch(r"-?\d+(\.\d+)?", value))
    ):
        return f"write {value} without quotes"
    return ""


class _Builder:
    def __init__(self, file: ConfigFile | None, env: Mapping[str, str]) -> None:
        self.file, self.env = file, env
        self.values: dict[str, dict[str, Any]] = {s: {} for s in SECTIONS}
        self.origins: dict[str, Location | str] = {}
        self.diags: list[Diagnostic] = []
        self.redact: list[str] = []

    def loc(self, *key: str | int) -> Location:
        return self.file.locate(key) if self.file else ENV_LOCATION

    def wrong_type(
        self, dotted: str, expected: str, value: Any, loc: Location, hint: str = ""
    ) -> None:
        message = f"{dotted} must be {expected}, not {_type_of(value)}"
        self.diags.append(error("CH402", message, loc, hint))

    def secret_in_file(self, dotted: str, value: Any, loc: Location, hint: str) -> str | None:
        """The secret's text, with a CH406 warning, or None (CH402) when it is not a string."""
        if not isinstance(value, str):
            self.redact.append(str(value))
            self.wrong_type(dotted, "a string", value, loc)
            return None
        self.redact.append(value)
        self.diags.append(warning("CH406", f"{dotted} is a secret written in the file", loc, hint))
        return value

    def read_file(self) -> None:
        assert self.file is not None
        for section, table in self.file.data.items():
            if section == "plugins":
                continue  # settings.py reads and validates it
            loc = self.loc(section)
            if section not in SECTIONS:
                owners = [s for s, keys in SPECS.items() if section in keys]
                hint = (
                    f"'{section}' is a setting of [{owners[0]}]"
                    if owners
                    else did_you_mean(section, [*SECTIONS, "plugins"])
                )
                self.diags.append(
                    warning("CH401", f"unknown section '{section}' (ignored)", loc, hint)
                )
            elif not isinstance(table, Mapping):
                self.wrong_type(
                    section, "a table", table, loc, f"write [{section}] and its settings"
                )
            else:
                for key, value in table.items():
                    self.read_key(section, key, value)

    def read_key(self, section: str, key: str, value: Any) -> None:
        dotted, loc = f"{section}.{key}", self.loc(section, key)
        spec = SPECS[section].get(key)
        if (section, key) == ("serve", "tenants"):
            self.read_tenants(value, loc)
        elif (section, key) == ("model", "options"):
            self.read_options(value, loc)
        elif (section, key) == ("model", "api_key"):
            text = self.secret_in_file(
                dotted, value, loc, "put the key in the variable model.api_key_env names instead"
            )
            if text is not None:
                self.values["model"]["api_key"] = Secret(text, f"{loc.path}:{loc.line}")
                self.origins[dotted] = loc
        elif (section, key) == ("memory", "key"):
            self.redact.append(str(value))
            self.diags.append(
                error(
                    "CH406",
                    "memory.key must not be written in the file (ignored)",
                    loc,
                    "put the key, base64-encoded, in the variable memory.key_env names",
                )
            )
        elif spec is None:
            message = f"unknown setting '{dotted}' (ignored)"
            hint = did_you_mean(key, [*SPECS[section], *EXTRA_KEYS.get(section, ())])
            self.diags.append(warning("CH401", message, loc, hint))
        elif not _fits(spec.kind, value):
            self.wrong_type(
                dotted, _EXPECTED[spec.kind], value, loc, _unquote_hint(spec.kind, value)
            )
        else:
            self.accept(section, key, value, dotted, loc)

    def accept(
        self, section: str, key: str, value: Any, subject: str, origin: Location | str
    ) -> None:
        spec = SPECS[section][key]
        hidden = url_secrets(value) if isinstance(value, str) else []
        self.redact.extend(hidden)
        problem = spec.check(subject, value) if spec.check else None
        if problem is not None:
            code, message, hint = problem
            if spec.check is env_name:
                self.redact.append(value)
            loc = origin if isinstance(origin, Location) else ENV_LOCATION
            self.diags.append(error(code, message, loc, hint))
            return
        if spec.kind == "number":
            value = float(value)
        self.values[section][key] = value
        self.origins[f"{section}.{key}"] = origin
        if isinstance(origin, Location) and hidden:
            what = "a password" if url_password(value) else "a secret in its parameters"
            self.diags.append(
                warning(
                    "CH406",
                    f"{section}.{key} contains {what}",
                    origin,
                    f"set the whole URL in ${spec.env} instead",
                )
            )

    def read_options(self, value: Any, loc: Location) -> None:
        """``[model.options]``: free-form, for the backend to check when it is created; only a
        secret is a concern here (CH406, like ``model.api_key``): a secret-looking name at any
        depth, a header value, a URL with a password, a token-shaped value."""
        if not isinstance(value, Mapping):
            self.wrong_type(
                "model.options", "a table", value, loc, "write [model.options] and the options"
            )
            return
        for key, option in value.items():
            self.origins[f"model.options.{key}"] = self.loc("model", "options", key)
            self.option_secrets(("model", "options", key), option, header=False)
        self.values["model"]["options"] = dict(value)

    def option_secrets(self, path: tuple[str, ...], value: Any, *, header: bool) -> None:
        """CH406 for each secret of one option, and its text kept to be masked where quoted."""
        name = path[-1]
        if isinstance(value, Mapping):
            for k, v in value.items():
                self.option_secrets((*path, str(k)), v, header=headers_name(name))
            return
        if isinstance(value, list):
            for v in value:
                self.option_secrets(path, v, header=header)
            return
        if isinstance(value, bool):
            return
        if secret_name(name) or (header and not harmless_header(name)):
            self.redact.append(str(value))  # masked wherever the file is quoted
        elif isinstance(value, str):
            self.redact.extend(url_secrets(value))
        if secret_name(name):
            message = f"{'.'.join(path)} is a secret written in the file"
        elif isinstance(value, str) and mask_text(value) != value:
            message = f"{'.'.join(path)} contains a secret"
        else:
            return  # a header that is not a credential by its name or its shape: no warning
        hint = "pass it from the environment instead (model.api_key_env for the key)"
        self.diags.append(warning("CH406", message, self.loc(*path), hint))

    def read_tenants(self, value: Any, loc: Location) -> None:
        if not isinstance(value, list):
            self.wrong_type(
                "serve.tenants", "an array of tables", value, loc, "write [[serve.tenants]]"
            )
            return
        tenants: list[TenantConfig] = []
        first: dict[str, Location] = {}
        for i, raw in enumerate(value):
            where = f"serve.tenants[{i}]"
            tloc = self.loc("serve", "tenants", i)
            if not isinstance(raw, Mapping):
                self.wrong_type(where, "a table", raw, tloc, "write [[serve.tenants]]")
                continue
            tenant = self.read_tenant(i, raw, tloc)
            if tenant is None:
                continue
            if tenant.name in first:
                prior = first[tenant.name]
                self.diags.append(
                    error(
                        "CH408",
                        f"tenant '{tenant.name}' is defined twice",
                        self.loc("serve", "tenants", i, "name"),
                        f"first defined at {prior.path}:{prior.line}",
                    )
                )
                continue
            first[tenant.name] = self.loc("serve", "tenants", i, "name")
            tenants.append(tenant)
        self.values["serve"]["tenants"] = tuple(tenants)

    def read_tenant(self, i: int, raw: Mapping[str, Any], tloc: Location) -> TenantConfig | None:
        where = f"serve.tenants[{i}]"
        fields_: dict[str, Any] = {}
        for key, value in raw.items():
            loc = self.loc("serve", "tenants", i, key)
            if key not in TENANT_KEYS:
                message = f"unknown setting '{where}.{key}' (ignored)"
                self.diags.append(warning("CH401", message, loc, did_you_mean(key, TENANT_KEYS)))
            elif key == "token":
                hint = "put the token in an environment variable and name it in token_env"
                text = self.secret_in_file(f"{where}.token", value, loc, hint)
                if text is not None:
                    fields_["token"] = Secret(text, f"{loc.path}:{loc.line}")
                    self.origins[f"{where}.token"] = loc
            elif not isinstance(value, str):
                self.wrong_type(
                    f"{where}.{key}", "a string", value, loc, _unquote_hint("str", value)
                )
            elif problem := (env_name if key == "token_env" else nonempty)(f"{where}.{key}", value):
                self.redact.append(value)
                self.diags.append(error(*problem[:2], loc, problem[2]))
            else:
                fields_[key] = value
                self.origins[f"{where}.{key}"] = loc
        if "name" not in fields_:
            if "name" not in raw:
                self.diags.append(error("CH409", f"{where} has no name", tloc, 'add name = "..."'))
            return None
        name = fields_["name"]
        var = fields_.get("token_env", "")
        if var and self.env.get(var, "").strip():
            fields_["token"] = Secret(self.env[var].strip(), f"env {var}")
            self.origins[f"{where}.token"] = f"env {var}"
        if "token_env" not in raw and "token" not in raw:
            self.diags.append(
                error(
                    "CH409",
                    f"tenant '{name}' has no token_env",
                    tloc,
                    "name the environment variable that holds its bearer token: "
                    f'token_env = "CHARTER_TOKEN_{re.sub(r"[^A-Za-z0-9]", "_", name).upper()}"',
                )
            )
        return TenantConfig(**fields_)

    def read_env(self) -> None:
        for section, specs in SPECS.items():
            for key, spec in specs.items():
                value = self.env.get(spec.env, "").strip() if spec.env else ""
                if value:
                    self.accept(section, key, value, str(spec.env), f"env {spec.env}")
        model, memory = self.values["model"], self.values["memory"]
        api_env = model.get("api_key_env", ModelConfig.api_key_env)
        if self.env.get(api_env, "").strip():
            model["api_key"] = Secret(self.env[api_env].strip(), f"env {api_env}")
            self.origins["model.api_key"] = f"env {api_env}"
        key_env = memory.get("key_env", MemoryConfig.key_env)
        if self.env.get(key_env, "").strip():
            memory["key"] = Secret(self.env[key_env].strip(), f"env {key_env}")
            self.origins["memory.key"] = f"env {key_env}"

    def cross_checks(self) -> None:
        model = self.values["model"]
        max_tokens = model.get("max_tokens", ModelConfig.max_tokens)
        n_ctx = model.get("n_ctx", ModelConfig.n_ctx)
        if max_tokens >= n_ctx:
            origin = self.origins.get("model.max_tokens", self.origins.get("model.n_ctx"))
            self.diags.append(
                error(
                    "CH403",
                    f"model.max_tokens ({max_tokens}) must be less than model.n_ctx ({n_ctx})",
                    origin if isinstance(origin, Location) else ENV_LOCATION,
                    "the context window holds the prompt as well as the answer",
                )
            )

    def plugin_origins(self, plugins: PluginSettings) -> None:
        env_set = {
            "allow": plugins.source == PLUGIN_ENV["allow"],
            "autoload": _truthy(self.env.get(PLUGIN_ENV["autoload"])),
            "errors": self.env.get(PLUGIN_ENV["errors"], "").strip() == plugins.errors,
            "trace": _truthy(self.env.get(PLUGIN_ENV["trace"])),
        }
        table = self.file.data.get("plugins") if self.file else None
        for key in (f.name for f in fields(PluginSettings) if f.name != "source"):
            if env_set[key]:
                self.origins[f"plugins.{key}"] = f"env {PLUGIN_ENV[key]}"
            elif isinstance(table, Mapping) and key in table:
                self.origins[f"plugins.{key}"] = self.loc("plugins", key)


def build(
    file: ConfigFile | None, env: Mapping[str, str], plugins: PluginSettings
) -> tuple[Config, list[Diagnostic]]:
    b = _Builder(file, env)
    if file is not None:
        b.read_file()
    b.read_env()
    b.cross_checks()
    b.plugin_origins(plugins)
    v = b.values
    config = Config(
        database=DatabaseConfig(**v["database"]),
        memory=MemoryConfig(**v["memory"]),
        model=ModelConfig(**v["model"]),
        agent=AgentConfig(**v["agent"]),
        serve=ServeConfig(**v["serve"]),
        plugins=plugins,
        file=file.path if file else None,
        origins=b.origins,
        redact_values=tuple(b.redact),
    )
    return config, b.diags
