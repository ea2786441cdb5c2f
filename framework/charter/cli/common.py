"""What every subcommand shares: the registry, finding packs, printing diagnostics."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Protocol, TypeVar

from charter._version import __version__
from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.contracts.registry import Registry
from charter.diagnostics import (
    Diagnostic,
    Location,
    SourceCache,
    error,
    render_github,
    render_json,
    render_sarif,
    render_text,
    sort_diagnostics,
)
from charter.pack.loader import display_path
from charter.pack.resolve import AmbiguousPack, resolve_domain, resolve_packs
from charter.plugins.host import PluginHost, default_host

EXIT_OK, EXIT_USER, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class DiagFormat(StrEnum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"


class OutFormat(StrEnum):
    text = "text"
    json = "json"


PLUGIN_CODES = frozenset({"CH200", "CH201", "CH202", "CH203", "CH204", "CH205"})


class _State:
    """Options of the root command (``charter --no-plugins ...``), reset by every ``main()``."""

    no_plugins = False


STATE = _State()


def fixed_now(value: str) -> datetime | str:
    """``--now``'s moment (``charter chat``, ``serve``, ``skills call``), or the message that
    refuses it. A time without its offset is no moment (a conversation's ``now:`` is refused
    alike, CH366): compared with the times the agent keeps, it would fail mid-turn."""
    try:
        fixed = datetime.fromisoformat(value)
    except ValueError:
        fixed = None
    if fixed is None or fixed.utcoffset() is None:
        return f"--now {value!r} is not an ISO 8601 time with a UTC offset (2025-06-30T10:00+08:00)"
    return fixed


def host() -> PluginHost:
    return default_host(no_plugins=STATE.no_plugins)


def registry() -> tuple[Registry, list[Diagnostic]]:
    """The registry and every plugin problem, for commands that check packs (validate, test):
    any plugin problem fails them, whatever the ``plugin_errors`` policy says."""
    h = host()
    diags = [
        error(d.code, d.message, d.location, d.hint) if d.code in PLUGIN_CODES else d
        for d in h.diagnostics
    ]
    return h.registry, diags


def runtime_registry(quiet: bool = False) -> tuple[Registry | None, list[Diagnostic]]:
    """The registry for commands that run packs (check, demo): the ``plugin_errors`` policy
    decides. Under ``fail`` a plugin problem is an error and there is no registry; under
    ``disable`` the problems are warnings, printed to stderr, and the run goes on. ``quiet``
    returns those warnings instead of printing them (for a report that carries them)."""
    h = host()
    if any(d.is_error for d in h.diagnostics):
        return None, list(h.diagnostics)
    if quiet:
        return h.registry, list(h.diagnostics)
    if h.diagnostics:
        sys.stderr.write(render_text(sort_diagnostics(h.diagnostics), SourceCache()))
    return h.registry, []


def requested(paths: Sequence[str | Path], reg: Registry, all_installed: bool) -> list[str | Path]:
    """The packs a command was given (paths or names); with ``--all-installed`` every pack
    plugins install too; with neither, the working directory."""
    if all_installed:
        return [*paths, *(reg.packs[name] for name in sorted(reg.packs))]
    return list(paths) or [Path(".")]


def find_packs(
    paths: Sequence[str | Path], installed: Mapping[str, Path] | None = None
) -> tuple[list[Path], list[Diagnostic]]:
    """The pack directories each argument stands for, as ``charter.pack.resolve`` finds them
    (a pack, a directory of packs, a name under domains/ or rulesets/, an installed pack),
    each once; CH004 for an argument that names nothing, CH009 for one that names different
    packs in different places."""
    found: list[Path] = []
    diags: list[Diagnostic] = []
    for path in paths:
        argument = str(path)
        try:
            packs = resolve_packs(argument, installed)
        except AmbiguousPack as exc:
            diags.append(ambiguous_pack(exc))
            continue
        if not packs:
            diags.append(no_pack(argument))
        for pack in packs:
            if pack.resolve() not in (f.resolve() for f in found):
                found.append(pack)
    return found, diags


def no_pack(argument: str) -> Diagnostic:
    """CH004 for an argument of validate or test that names no pack."""
    path = Path(argument)
    if path.exists():
        return error(
            "CH004",
            "no pack.yaml found here",
            Location(display_path(path)),
            "a pack is a directory with a pack.yaml",
        )
    return error(
        "CH004",
        "no such file or directory",
        Location(argument),
        "give a pack directory, a directory containing packs, the name of one under domains/ "
        "or rulesets/, or the name of a pack a plugin installed (charter plugins lists them)",
    )


def ambiguous_pack(exc: AmbiguousPack) -> Diagnostic:
    """CH009: the argument names several packs, and every candidate is listed."""
    return error("CH009", exc.message, Location(exc.argument), exc.hint)


def one_pack(
    name: str, installed: Mapping[str, Path], noun: str = "pack"
) -> tuple[Path | None, Diagnostic | None]:
    """The one pack ``name`` stands for (``charter.pack.resolve.resolve_domain``), or the
    diagnostic that says why there is none: CH004 unknown, CH009 ambiguous."""
    try:
        root = resolve_domain(name, installed)
    except AmbiguousPack as exc:
        return None, ambiguous_pack(exc)
    if root is None:
        return None, unknown_pack(name, noun)
    return root, None


def unknown_pack(name: str, noun: str = "pack") -> Diagnostic:
    """CH004 for a name that is neither a pack directory nor a known pack's name."""
    return error(
        "CH004",
        f"unknown {noun} '{name}'",
        Location(name),
        "give a pack directory, the name of one under domains/ or rulesets/, or "
        "the name of a pack a plugin installed (charter plugins lists them)",
    )


def compile_all(
    paths: Iterable[Path], reg: Registry, *, use_cache: bool = True
) -> tuple[list[CompiledPack], list[Diagnostic]]:
    packs, diags = [], []
    for path in paths:
        kwargs = {} if use_cache else {"cache_dir": None}
        pack, more = compile_path(path, reg, **kwargs)
        diags.extend(more)
        if pack is not None:
            packs.append(pack)
    return packs, diags + same_names(packs)


class Named(Protocol):
    """What CH007 needs of a compiled pack."""

    @property
    def name(self) -> str: ...

    @property
    def root(self) -> str: ...


def same_names(packs: Sequence[Named]) -> list[Diagnostic]:
    """CH007 for each pack whose name an earlier pack of the same run already has: reports,
    coverage and ``--domain NAME`` could not tell them apart."""
    first: dict[str, Named] = {}
    out: list[Diagnostic] = []
    for pack in packs:
        other = first.setdefault(pack.name, pack)
        if other is not pack and Path(other.root).resolve() != Path(pack.root).resolve():
            out.append(
                error(
                    "CH007",
                    f"pack name '{pack.name}' is also the name of {display_path(Path(other.root))}",
                    Location(display_path(Path(pack.root) / "pack.yaml"), 1, 1),
                    "give each pack its own name: in pack.yaml",
                )
            )
    return out


def emit_diagnostics(diags: Sequence[Diagnostic], fmt: DiagFormat, max_errors: int = 0) -> None:
    """Print sorted diagnostics in the chosen format; ``max_errors`` caps text output."""
    ordered = sort_diagnostics(diags)
    if fmt is DiagFormat.json:
        sys.stdout.write(render_json(ordered))
    elif fmt is DiagFormat.sarif:
        sys.stdout.write(render_sarif(ordered, __version__))
    elif fmt is DiagFormat.github:
        sys.stdout.write(render_github(ordered))
    else:
        shown = ordered[:max_errors] if max_errors > 0 else ordered
        out = render_text(shown, SourceCache())
        if len(shown) < len(ordered):
            out += f"... and {len(ordered) - len(shown)} more (raise --max-errors to see them)\n"
        sys.stdout.write(out)


StoreT = TypeVar("StoreT")


def open_database(
    prog: str, url: str, env_var: str, make: Callable[[str], StoreT]
) -> StoreT | None:
    """``make(url)``, or None after saying on stderr why the database cannot be opened: a URL
    that is none, a SQLite file that does not exist (never created by a command that reads),
    a missing driver, a connection or schema problem. Passwords are never printed."""
    import sqlalchemy as sa

    from charter.store.migrations import SchemaError
    from charter.text.masking import mask_text, mask_url, url_secrets

    def fail(message: str) -> None:
        sys.stderr.write(f"{prog}: {message}\n")

    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        fail(f"not a database URL: {mask_text(url)!r}")  # a keyword DSN may hold a password
        return None
    shown = mask_url(url)  # SQLAlchemy's own splits a password holding @ at the first one
    path = parsed.database or ""
    on_disk = parsed.get_backend_name() == "sqlite" and path not in ("", ":memory:")
    if on_disk and not Path(path).is_file():
        fail(f"no database at {path} (give --db URL or set {env_var})")
        return None
    try:
        return make(url)
    except ImportError as exc:
        fail(f"cannot open {shown}: {exc} (pip install 'charter[postgres]')")
    except (sa.exc.SQLAlchemyError, SchemaError) as exc:
        reason = mask_text(str(exc).splitlines()[0], known=url_secrets(url), fragments=True)
        fail(f"cannot open {shown}: {reason}")
    return None
