"""Where ``charter memory`` finds its stores: the database URL and the narrative directory the
agent wrote, the fact store and the memory policy of a pack; shared by the read commands
(``charter.cli.memory``) and the ones that change memory (``charter.cli.memory_ops``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from charter.cli.common import open_database

if TYPE_CHECKING:
    from charter.compile.specs.memory import MemoryPolicy
    from charter.memory.facts import FactStore

ENV_URL = "CHARTER_MEMORY_URL"
# the agent's database (charter chat, charter serve) unless told otherwise: a forget run
# without --db must reach the store the agent wrote
AGENT_ENV_URL = "CHARTER_DATABASE_URL"
DEFAULT_URL = "sqlite:///charter.db"
ENV_NARRATIVE = "CHARTER_NARRATIVE_PATH"
DEFAULT_NARRATIVE = "charter-narrative"
ACTOR = "cli"
ADMIN = "admin"


def database_url(db: str | None) -> str:
    return db or os.environ.get(ENV_URL) or os.environ.get(AGENT_ENV_URL) or DEFAULT_URL


def _fail(prog: str, message: str) -> None:
    typer.echo(f"{prog}: {message}", err=True)


def open_store(prog: str, db: str | None, policy: MemoryPolicy | None = None) -> FactStore | None:
    """The store, or None after saying why it cannot be opened."""
    from charter.memory.facts import FactStore

    return open_database(prog, database_url(db), ENV_URL, lambda url: FactStore(url, policy))


def load_policy(prog: str, domain: str | None) -> tuple[MemoryPolicy | None, bool]:
    """The memory policy of pack ``domain`` (the default policy without one); ``ok`` False
    after printing why the pack cannot be used."""
    from charter.compile.specs.memory import MemoryPolicy

    if domain is None:
        return MemoryPolicy(), True
    from charter.cli.common import (
        DiagFormat,
        compile_all,
        emit_diagnostics,
        one_pack,
        runtime_registry,
    )

    reg, diags = runtime_registry()
    root, problem = (None, None) if reg is None else one_pack(domain, reg.packs)
    if reg is None or root is None:
        if problem is not None and problem.code == "CH004":
            _fail(prog, f"unknown domain {domain!r} (a pack directory or a name under domains/)")
        elif problem is not None:  # CH009: the name is ambiguous
            diags.append(problem)
        emit_diagnostics(diags, DiagFormat.text)
        return None, False
    packs, more = compile_all([root], reg)
    if not packs:
        emit_diagnostics(diags + more, DiagFormat.text)
        return None, False
    if packs[0].memory is None:
        _fail(prog, f"pack {packs[0].name} has no memory.yaml: using the default memory policy")
        return MemoryPolicy(), True
    return packs[0].memory, True


def narrative_dir(prog: str, given: Path | None) -> tuple[Path | None, bool]:
    """The narrative directory to include (None: there is none); ``ok`` False after saying
    why a directory named explicitly cannot be used."""
    from charter.memory.narrative.rows import TABLE

    named = given or (Path(os.environ[ENV_NARRATIVE]) if os.environ.get(ENV_NARRATIVE) else None)
    path = named or Path(DEFAULT_NARRATIVE)
    if (path / f"{TABLE}.lance").is_dir():
        return path, True
    if named is not None:
        _fail(prog, f"{path} holds no narrative memory (no {TABLE}.lance in it)")
        return None, False
    return None, True
