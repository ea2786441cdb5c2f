"""Where a test plugin raises, as a CH204 diagnostic shows it: the plugin's own source line."""

from __future__ import annotations

import inspect
import os
from pathlib import Path


def raised_at(plugin: type) -> tuple[str, str]:
    """``("path:line:col", the rendered source line and caret)`` of the first ``raise`` in
    ``plugin``'s class body; the path relative to the working directory when it is below it,
    as diagnostics show paths."""
    lines, start = inspect.getsourcelines(plugin)
    index = next(i for i, line in enumerate(lines) if line.lstrip().startswith("raise "))
    line = lines[index].rstrip("\n")
    column = len(line) - len(line.lstrip()) + 1
    path = Path(inspect.getsourcefile(plugin) or "")
    try:
        shown = str(path.relative_to(Path.cwd()))
    except ValueError:
        shown = os.fspath(path)
    rendered = f"    {line}\n    {' ' * (column - 1)}{'^' * len(line.strip())}\n"
    return f"{shown}:{start + index}:{column}", rendered
