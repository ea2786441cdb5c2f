"""Plugin distributions "installed" for one test, without pip and without touching the
environment the tests run in.

``site.install(...)`` writes what pip leaves in site-packages — a ``.dist-info`` with METADATA
and entry_points.txt — into a directory of the test's own that is put on ``sys.path``, so that
``importlib.metadata`` finds the entry points and Charter's plugin host loads them as it loads
an installed plugin. ``site.editable(project)`` does what ``pip install -e project`` does for a
project ``charter new`` wrote: the .dist-info from its pyproject.toml, and the project directory
on ``sys.path``. ``site.environ()`` is the environment for a subprocess that should see the same.

The plugin host is rebuilt before and after the test, and every module imported from the
installed distributions is forgotten afterwards: the next test sees the real environment.
"""

from __future__ import annotations

import importlib
import os
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import charter.plugins.host

_PLUGIN_VARIABLES = (
    "CHARTER_PLUGINS",
    "CHARTER_DISABLE_PLUGIN_AUTOLOAD",
    "CHARTER_PLUGIN_ERRORS",
    "CHARTER_TRACE_PLUGINS",
)


class Site:
    """A site-packages directory of the test's own, on ``sys.path``."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.paths: list[Path] = [root]  # what a subprocess needs on PYTHONPATH, in order
        self.modules: set[str] = set()  # top-level modules the distributions provide
        self._monkeypatch = monkeypatch
        root.mkdir(parents=True, exist_ok=True)
        monkeypatch.syspath_prepend(str(root))

    def install(
        self,
        distribution: str,
        entry_points: Mapping[str, str],
        *,
        version: str = "0.1.0",
        sources: Mapping[str, str] | None = None,
    ) -> None:
        """Install ``distribution``: its plugins (entry point name -> module) in the group
        ``charter``, and ``sources`` (path below site-packages -> text) beside them."""
        for relative, text in (sources or {}).items():
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        info = self.root / f"{distribution.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = "".join(f"{name} = {module}\n" for name, module in entry_points.items())
        (info / "entry_points.txt").write_text(f"[charter]\n{lines}", encoding="utf-8")
        self.modules |= {module.split(".")[0] for module in entry_points.values()}
        self._changed()

    def editable(self, project: Path) -> None:
        """``pip install -e project``: the distribution its pyproject.toml declares, with the
        project's own directory on ``sys.path`` (its sources are imported where they are)."""
        with open(project / "pyproject.toml", "rb") as fh:
            meta = tomllib.load(fh)["project"]
        self._monkeypatch.syspath_prepend(str(project))
        self.paths.insert(0, project)
        self.install(meta["name"], meta["entry-points"]["charter"], version=meta["version"])

    def environ(self) -> dict[str, str]:
        """``os.environ`` with the site (and the editable projects) first on PYTHONPATH."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [*map(str, self.paths), *filter(None, [env.get("PYTHONPATH")])]
        )
        return env

    def _changed(self) -> None:
        importlib.invalidate_caches()
        charter.plugins.host._HOSTS.clear()

    def close(self) -> None:
        charter.plugins.host._HOSTS.clear()
        for name in [m for m in sys.modules if m.split(".")[0] in self.modules]:
            del sys.modules[name]
        importlib.invalidate_caches()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Site]:
    """A site-packages of the test's own: ``site.install(...)``, ``site.editable(project)``."""
    for name in _PLUGIN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    installed = Site(tmp_path / "site-packages", monkeypatch)
    installed._changed()
    yield installed
    installed.close()
