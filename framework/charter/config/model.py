"""The configuration's typed model: one frozen dataclass per ``charter.toml`` table.

``charter.config`` says where each value comes from; ``charter.config.load`` builds these. The
default of every setting is its row's in the table of settings (``charter.config.specs``);
``PluginSettings`` (``charter.config.settings``) is the ``[plugins]`` table's dataclass.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from charter.config.settings import PluginSettings
from charter.config.show import masked, masked_options
from charter.config.specs import SPECS
from charter.config.toml import redact
from charter.diagnostics import Diagnostic, Location, error
from charter.text.masking import mask_url


def _default(section: str, key: str) -> Any:
    return SPECS[section][key].default


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
    url: str = _default("database", "url")  # goals, facts, tickets, traces, breaker state


@dataclass(frozen=True, repr=False)
class MemoryConfig(_MaskedURLs):
    narrative_path: str = _default("memory", "narrative_path")  # the LanceDB directory
    key_env: str = _default("memory", "key_env")
    embedder: str = _default("memory", "embedder")
    # the shared pool of global facts (docs/memory.md §8): a database URL, empty for none;
    # its namespace; the slots (intent.slot or slot, comma-separated) turns may share
    shared_url: str = _default("memory", "shared_url")
    shared_namespace: str = _default("memory", "shared_namespace")
    shared_keys: str = _default("memory", "shared_keys")
    # the narrative store's compaction and batched uses (charter.memory.narrative.upkeep)
    compact_every: int = _default("memory", "compact_every")
    usage_batch: int = _default("memory", "usage_batch")
    usage_flush_after: str = _default("memory", "usage_flush_after")
    key: Secret | None = None  # from $key_env only


@dataclass(frozen=True, repr=False)
class ModelConfig(_MaskedURLs):
    backend: str = _default("model", "backend")
    path: str = _default("model", "path")  # a GGUF file (llamacpp)
    base_url: str = _default("model", "base_url")  # an OpenAI-compatible server
    api_key_env: str = _default("model", "api_key_env")
    max_tokens: int = _default("model", "max_tokens")
    temperature: float = _default("model", "temperature")
    n_ctx: int = _default("model", "n_ctx")
    api_key: Secret | None = None
    # [model.options]: passed to the backend's create as they are (after the settings above,
    # so they can override them); the backend checks them, not the configuration
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class AgentConfig:
    domain: str = _default("agent", "domain")
    max_retries: int = _default("agent", "max_retries")
    self_reflection: bool = _default("agent", "self_reflection")
    trace: bool = _default("agent", "trace")
    # strict, assisted or rephrase for every pack (ARCHITECTURE §5a); empty: each pack's own
    mode: str = _default("agent", "mode")


@dataclass(frozen=True)
class TenantConfig:
    name: str
    token_env: str = ""
    token: Secret | None = None  # resolved when the configuration was loaded


@dataclass(frozen=True)
class ServeConfig:
    host: str = _default("serve", "host")
    port: int = _default("serve", "port")
    max_body_bytes: int = _default("serve", "max_body_bytes")
    tenants: tuple[TenantConfig, ...] = ()
    # the goal sweeper and the memory lifecycle (charter.serve.jobs); "off": not run
    sweep_every: str = _default("serve", "sweep_every")
    maintain_every: str = _default("serve", "maintain_every")


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
