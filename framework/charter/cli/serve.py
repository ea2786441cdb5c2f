"""``charter serve``: the agent over HTTP, in one uvicorn process.

Start-up refuses, with diagnostics and exit status 1, what cannot serve: an invalid
configuration, no tenant or a tenant whose token variable is unset (``check_serve``), a tenant
name with the separator of scoped user ids, a plugin problem under ``plugin_errors = "fail"``,
a pack that does not compile, a model backend that is not installed or refuses its options, a
pack that encrypts memory without a key, a database that cannot be opened (one line, the
URL's password masked). The agent is built before uvicorn starts, so none of that surfaces as
a server that starts and then dies.

For several workers run uvicorn itself on ``charter.serve.factory:from_environment`` (see
docs/serve.md): each worker builds its own agent from the same configuration.

FastAPI and uvicorn are imported when the command runs: they are the ``serve`` extra, and the
other commands start faster without them.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from charter.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    EXIT_USER,
    emit_diagnostics,
    fixed_now,
    runtime_registry,
)
from charter.cli.common import DiagFormat as _Format
from charter.cli.config import render_diagnostics

PROG = "charter serve"


def register(app: typer.Typer) -> None:
    @app.command()
    def serve(
        host: Annotated[
            str | None, typer.Option(help="Interface to listen on (default: serve.host).")
        ] = None,
        port: Annotated[
            int | None,
            typer.Option(min=1, max=65535, help="Port to listen on (default: serve.port)."),
        ] = None,
        domain: Annotated[
            str | None, typer.Option(help="Pack directory or name (default: agent.domain).")
        ] = None,
        config: Annotated[
            Path | None,
            typer.Option(
                "--config",
                metavar="FILE",
                help="A charter.toml or pyproject.toml (or its directory); default: here.",
            ),
        ] = None,
        now: Annotated[
            str | None,
            typer.Option(
                "--now",
                metavar="ISO",
                help="Fix the agent's clock (2025-06-30T10:00+08:00): a demo's or a test's day.",
            ),
        ] = None,
    ) -> None:
        """Serve the agent over HTTP: turns, memory, goals, traces, health."""
        raise typer.Exit(run(host=host, port=port, domain=domain, config_path=config, now=now))


def _fail(message: str) -> None:
    sys.stderr.write(f"{PROG}: {message}\n")


def config_dir(path: Path | None) -> Path | None:
    """The directory to load the configuration from; None when ``path`` cannot be one."""
    if path is None:
        return Path.cwd()
    if path.is_dir():
        return path
    if path.is_file() and path.name in ("charter.toml", "pyproject.toml"):
        return path.parent
    return None


def run(
    *,
    host: str | None = None,
    port: int | None = None,
    domain: str | None = None,
    config_path: Path | None = None,
    now: str | None = None,
) -> int:
    fixed = fixed_now(now) if now is not None else None
    if isinstance(fixed, str):
        _fail(fixed)
        return EXIT_USER
    try:
        import uvicorn

        from charter.serve.app import create_app, default_agent
        from charter.serve.auth import tenant_problems
        from charter.serve.faults import database_failure
        from charter.serve.logs import logging_config
    except ImportError as exc:
        _fail(f"needs the serve extra ({exc.name} is missing): pip install 'charter[serve]'")
        return EXIT_USER
    from sqlalchemy.exc import SQLAlchemyError

    from charter.config import load_config
    from charter.llm.errors import LLMError
    from charter.memory.crypto import MemoryKeyError
    from charter.store.migrations import SchemaError

    base = config_dir(config_path)
    if base is None:
        _fail(f"--config {config_path}: not a charter.toml, a pyproject.toml or a directory")
        return EXIT_USAGE
    cfg, diags = load_config(base)
    diags = [*diags, *cfg.check_serve(), *tenant_problems(cfg)]
    if diags:
        sys.stderr.write(render_diagnostics(cfg, diags))
    if any(d.is_error for d in diags):
        return EXIT_USER
    if domain is not None:
        cfg = dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, domain=domain))
    registry, plugin_diags = runtime_registry()
    if registry is None:
        emit_diagnostics(plugin_diags, _Format.text)
        return EXIT_USER
    try:
        clock = None if fixed is None else (lambda: fixed)
        agent = default_agent(cfg, os.environ, registry, clock)
    except (ValueError, LLMError, MemoryKeyError, OSError) as exc:
        _fail(f"cannot start the agent: {exc}")
        return EXIT_USER
    except (ImportError, SQLAlchemyError, SchemaError) as exc:
        _fail(database_failure(cfg.database.url, exc))
        return EXIT_USER
    try:
        app = create_app(cfg, agent_factory=lambda: agent)
    except ValueError as exc:
        agent.close()
        _fail(str(exc))
        return EXIT_USER
    uvicorn.run(
        app,
        host=host or cfg.serve.host,
        port=port or cfg.serve.port,
        log_config=logging_config(),
        access_log=False,  # charter.serve.access logs every request, as JSON
        server_header=False,
    )
    return EXIT_OK
