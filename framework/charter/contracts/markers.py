"""The pluggy markers of the project ``charter``.

They live below every other package so that a runtime package (an LLM backend, an embedder)
can register its built-in implementations as a plugin without importing the plugin host.
"""

from __future__ import annotations

import pluggy

PROJECT = "charter"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
