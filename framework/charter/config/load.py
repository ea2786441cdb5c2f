"""Building a ``Config`` from defaults, the file's tables and the environment, with diagnostics.

Every setting of the table (``charter.config.specs``), ``[plugins]`` included, is read by
``charter.config.values``; this module adds what no row describes: the secrets (CH406), the
``[[serve.tenants]]`` array, the free-form ``[model.options]``, and the checks across settings.
Every secret text met on the way is kept in ``Config.redact_values`` so that a renderer can mask
it in the lines it quotes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from charter.config.model import (
    AgentConfig,
    Config,
    DatabaseConfig,
    MemoryConfig,
    ModelConfig,
    Secret,
    ServeConfig,
    TenantConfig,
)
from charter.config.settings import plugin_settings
from charter.config.specs import ENV_LOCATION, SPECS, env_name, nonempty
from charter.config.toml import ConfigFile
from charter.config.values import Reader, file_keys, unquote_hint
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.text.masking import (
    harmless_header,
    headers_name,
    mask_text,
    secret_name,
    url_secrets,
)

# keys that are known but not plain settings: secrets and the tenants array
EXTRA_KEYS = {"memory": ("key",), "model": ("api_key", "options"), "serve": ("tenants",)}
TENANT_KEYS = ("name", "token_env", "token")


class _Builder(Reader):
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
            if section in SPECS:
                self.read_table(section, table)
                continue
            owners = [s for s in SPECS if section in file_keys(s)]
            hint = (
                f"'{section}' is a setting of [{owners[0]}]"
                if owners
                else did_you_mean(section, SPECS)
            )
            loc = self.loc(section)
            self.diags.append(warning("CH401", f"unknown section '{section}' (ignored)", loc, hint))

    def read_key(self, section: str, key: str, value: Any) -> None:
        dotted, loc = f"{section}.{key}", self.loc(section, key)
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
        elif key in SPECS[section]:
            self.read_setting(section, key, value, loc)
        else:
            self.unknown(section, key, loc, EXTRA_KEYS.get(section, ()))

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
                    f"{where}.{key}", "a string", value, loc, unquote_hint("str", value)
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

    def read_env(self, sections: Iterable[str] = SPECS) -> None:
        super().read_env(sections)
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


def build(file: ConfigFile | None, env: Mapping[str, str]) -> tuple[Config, list[Diagnostic]]:
    """The configuration of ``file`` (None: none here) under ``env``, and its problems."""
    b = _Builder(file, env)
    if file is not None:
        b.read_file()
    b.read_env()
    b.cross_checks()
    v = b.values
    config = Config(
        database=DatabaseConfig(**v["database"]),
        memory=MemoryConfig(**v["memory"]),
        model=ModelConfig(**v["model"]),
        agent=AgentConfig(**v["agent"]),
        serve=ServeConfig(**v["serve"]),
        plugins=plugin_settings(file, v["plugins"], b.origins),
        file=file.path if file else None,
        origins=b.origins,
        redact_values=tuple(b.redact),
    )
    return config, b.diags
