"""``charter plugins``: every plugin, where it comes from, and what each of its hooks registered.

Exit status 0 when every plugin loaded cleanly, 1 when one failed or was disabled (its problems
are listed), so a CI job can check that the plugins it expects are healthy.
"""

from __future__ import annotations

import json
import sys

from charter.cli.common import EXIT_OK, EXIT_USER, OutFormat, host
from charter.plugins.host import PluginInfo

_HEADERS = ("plugin", "distribution", "version", "status", "hook", "registered")


def _rows(infos: list[PluginInfo]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for info in infos:
        hooks = sorted(info.hooks.items()) or [("-", [])]
        for i, (hook, names) in enumerate(hooks):
            lead = (
                (info.name, info.distribution, info.version, info.status) if i == 0 else ("",) * 4
            )
            rows.append((*lead, hook, ", ".join(names) or "-"))
    return rows


def render(infos: list[PluginInfo]) -> str:
    rows = [_HEADERS, *_rows(infos)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(_HEADERS) - 1)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        for r in rows
    ]
    for info in infos:
        lines += [f"{info.name}: {problem}" for problem in info.problems]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def run(fmt: OutFormat) -> int:
    h = host()
    infos = sorted(h.infos.values(), key=lambda i: (i.distribution != "charter", i.name))
    if fmt is OutFormat.json:
        sys.stdout.write(json.dumps([i.as_dict() for i in infos], ensure_ascii=False, indent=2))
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(infos))
    return EXIT_USER if any(i.status != "ok" for i in infos) else EXIT_OK
