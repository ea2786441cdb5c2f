"""What the plugins registered, as one immutable value the compiler and the runtime read."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from charter.contracts.models import EmbedderFactory, LLMBackend
from charter.contracts.pii import PiiRecognizer
from charter.contracts.rules import Extractor, Formatter, Predicate, Repair
from charter.contracts.skills import Skill


@dataclass(frozen=True)
class Registry:
    extractors: Mapping[str, Extractor] = field(default_factory=dict)
    predicates: Mapping[str, Predicate] = field(default_factory=dict)
    repairs: Mapping[str, Repair] = field(default_factory=dict)
    formatters: Mapping[str, Formatter] = field(default_factory=dict)
    skills: Mapping[str, Skill] = field(default_factory=dict)
    packs: Mapping[str, Path] = field(default_factory=dict)  # name -> pack directory
    llm_backends: Mapping[str, LLMBackend] = field(default_factory=dict)
    embedders: Mapping[str, EmbedderFactory] = field(default_factory=dict)
    stores: Mapping[str, Any] = field(default_factory=dict)  # StoreFactory by name
    pii_recognizers: Mapping[str, PiiRecognizer] = field(default_factory=dict)
    # plugin name -> distribution version, for `requires.plugins` and the compile cache key
    plugins: Mapping[str, str] = field(default_factory=dict)
    # the same of the plugins installed that did not load (failed to import, or disabled): a
    # pack requiring one is not told to install it
    unloaded: Mapping[str, str] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """Changes whenever what is registered changes, so cached compilations go stale."""
        parts = [
            *(
                f"x:{n}:{type(e).__module__}.{type(e).__qualname__}"
                for n, e in sorted(self.extractors.items())
            ),
            *(f"p:{n}:{type(p).__module__}" for n, p in sorted(self.predicates.items())),
            *(f"r:{n}:{type(r).__module__}" for n, r in sorted(self.repairs.items())),
            # templates name formatters and are checked at compile time
            *(
                f"f:{n}:{type(f).__module__}.{type(f).__qualname__}"
                for n, f in sorted(self.formatters.items())
            ),
            *(f"s:{n}" for n in sorted(self.skills)),
            *(f"k:{n}={p}" for n, p in sorted(self.packs.items())),
            *(f"d:{n}={v}" for n, v in sorted(self.plugins.items())),
        ]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
