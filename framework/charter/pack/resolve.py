"""Where a pack named on a command line or in a configuration is: a directory, its
``pack.yaml``, a name under the project's ``domains/`` or ``rulesets/``, or a pack a plugin
installed. The runtime (``Agent.from_pack``, the health report's ablation cases) and every
command resolve a ``--domain`` the same way."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def resolve_domain(name: str, installed: Mapping[str, Path] | None = None) -> Path | None:
    """A path; or a pack name looked up in domains/ and rulesets/ here or in a parent (the
    project's own packs come first); or the name of a pack a plugin installed."""
    direct = Path(name)
    if (direct / "pack.yaml").is_file():
        return direct
    if direct.is_file() and direct.name == "pack.yaml":
        return direct.parent
    here = Path.cwd()
    for base in [here, *here.parents]:
        for kind in ("domains", "rulesets"):
            candidate = base / kind / name
            if (candidate / "pack.yaml").is_file():
                return candidate
    if installed and name in installed:
        return installed[name]
    return None
