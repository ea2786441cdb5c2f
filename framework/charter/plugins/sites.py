"""Where a plugin's problem is, in the plugin's own files: the line that raised, the hook
function or class, the module that did not import, the entry point's line in its
distribution's ``entry_points.txt``; ``<plugin NAME>`` only when there is no file to name.

A diagnostic that points into the plugin is one its author can act on (an editor opens the
line); the plugin host (``charter.plugins.manager``, ``charter.plugins.registration``,
``charter.plugins.lifecycle``) builds its CH200-CH205 with these.
"""

from __future__ import annotations

import importlib.metadata as md
from pathlib import Path
from typing import TYPE_CHECKING, Any

from charter.diagnostics import Diagnostic, Location, error
from charter.plugins.kinds import plugin_dir

if TYPE_CHECKING:
    from charter.plugins.manager import CharterPluginManager

ENTRY_POINT_GROUP = "charter"


def shown_path(path: str) -> str:
    """A source file as diagnostics name it: relative to the working directory when below it."""
    import os

    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(absolute)


def code_location(obj: object) -> Location | None:
    """Where a module, class or function is defined (for an object, its class): the ``def``
    or ``class`` line, past any decorator. None for what has no Python source."""
    import inspect

    plain = inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj)
    target = inspect.unwrap(obj) if inspect.isfunction(obj) else obj if plain else type(obj)
    try:
        path = inspect.getsourcefile(target)  # type: ignore[arg-type]
        lines, first = inspect.getsourcelines(target)  # type: ignore[arg-type]
    except (TypeError, OSError):
        return None
    if path is None:
        return None
    for i, text in enumerate(lines if first else ()):  # a module starts at its first line
        code = text.lstrip()
        if code.startswith(("def ", "async def ", "class ")):
            indent = len(text) - len(code)
            end = len(text.rstrip())
            return Location(shown_path(path), first + i, indent + 1, first + i, end + 1)
    return Location(shown_path(path), max(first, 1), 1)


def raise_location(exc: BaseException, within: Path | None) -> Location | None:
    """The innermost line of ``exc``'s traceback in a file below ``within``, with the columns
    of the expression that raised; None when no frame is there."""
    import linecache
    import traceback

    if within is None:
        return None
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not Path(frame.filename).resolve().is_relative_to(within) or not frame.lineno:
            continue
        where = Location(shown_path(frame.filename), frame.lineno, 1)
        text = linecache.getline(frame.filename, frame.lineno).encode()
        if frame.colno is None or frame.end_colno is None or frame.end_lineno != frame.lineno:
            return where
        # the traceback counts columns in UTF-8 bytes
        col, end = (
            len(text[:n].decode(errors="replace")) + 1 for n in (frame.colno, frame.end_colno)
        )
        return Location(where.path, frame.lineno, col, frame.lineno, end)
    return None


def where(name: str) -> Location:
    """The location of a plugin problem when no file of the plugin can be named."""
    return Location(f"<plugin {name}>")


def at(pm: CharterPluginManager, name: str, *objects: object) -> Location:
    """Where a user looks for a plugin's problem: the first of ``objects`` (a hook function)
    with Python source, else the plugin itself."""
    for obj in (*objects, pm.get_plugin(name)):
        found = code_location(obj) if obj is not None else None
        if found is not None:
            return found
    return where(name)


def raised_at(pm: CharterPluginManager, name: str, exc: BaseException, impl: Any) -> Location:
    """The line of the plugin that raised, else the hook function that was called."""
    return raise_location(exc, plugin_dir(impl.plugin)) or at(pm, name, impl.function)


def raised(
    pm: CharterPluginManager, name: str, hook: str, exc: BaseException, impl: Any
) -> Diagnostic:
    """CH204: plugin ``name`` raised ``exc`` in ``hook``, located where it raised."""
    return error(
        "CH204",
        f"plugin {pm.describe(name)} raised in {hook}: {type(exc).__name__}: {exc}",
        raised_at(pm, name, exc, impl),
        f"fix or uninstall '{pm.distributions.get(name, ('?',))[0]}'",
    )


def import_site(ep: md.EntryPoint, exc: BaseException) -> Location:
    """Where a plugin that failed to import went wrong: its line that raised (or did not
    parse), else the entry point's line in its distribution's entry_points.txt."""
    import importlib.util

    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return Location(shown_path(exc.filename), exc.lineno, exc.offset or 1)
    home, top = None, str(getattr(ep, "module", "")).split(".")[0]
    try:
        spec = importlib.util.find_spec(top) if top else None
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        home = Path(next(iter(spec.submodule_search_locations))).resolve()
    elif spec is not None and spec.origin:
        home = Path(spec.origin).resolve().parent
    return raise_location(exc, home) or entry_point_line(ep) or where(ep.name)


def entry_point_line(ep: md.EntryPoint, group: str = ENTRY_POINT_GROUP) -> Location | None:
    """The line declaring ``ep`` in the entry_points.txt of its distribution."""
    dist = getattr(ep, "dist", None)
    files = [f.locate() for f in getattr(dist, "files", None) or () if f.name == "entry_points.txt"]
    base = getattr(dist, "_path", None)  # a PathDistribution's .dist-info directory
    for path in [*files, *([Path(str(base)) / "entry_points.txt"] if base else [])]:
        try:
            lines = Path(str(path)).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        section = ""
        for n, line in enumerate(lines, 1):
            text = line.strip()
            if text.startswith("["):
                section = text.strip("[]").strip()
            elif section == group and text.split("=", 1)[0].strip() == ep.name:
                col = len(line) - len(line.lstrip()) + 1
                return Location(shown_path(str(path)), n, col, n, len(line.rstrip()) + 1)
        return Location(shown_path(str(path)))
    return None
