"""Telling one event: an entry of a ``ResponsesSpec`` rendered in a scope, the first
alternative that applies winning (its ``when`` holds and every field it names has a value), a
rotation chosen by the turn's number. Built once per pack (the ``when`` conditions become
closures), used by the composer at run time and by the responses stage at compile time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from charter.compile import response_spec as R
from charter.compile.build import Builder
from charter.compile.env import Env
from charter.compile.literals import LiteralTable
from charter.contracts.registry import Registry


@dataclass(frozen=True)
class Told:
    id: str  # the template id (transfer.slot_corrected#2)
    text: str


class Teller:
    def __init__(
        self, spec: R.ResponsesSpec, registry: Registry, constants: Mapping[str, Any]
    ) -> None:
        self.spec = spec
        self.formatters = registry.formatters
        self.extractors = registry.extractors
        self.table = LiteralTable(spec.literals)
        builder = Builder(self.table.ids, constants, registry.predicates)
        self._when: dict[int, Callable[[Env], bool]] = {}
        for entry in spec.entries:
            for alt in entry.alternatives:
                if alt.when is not None:
                    self._when[id(alt)] = builder.expr(alt.when)
        self.handoff = builder.expr(spec.handoff) if spec.handoff is not None else None

    def wants_handoff(self, text: str) -> bool:
        """The user asks for a person (转人工)."""
        if self.handoff is None:
            return False
        return self.handoff(Env("", text, {}, self.table, self.extractors))

    def holds(self, alt: R.Alternative, scope: Mapping[str, Any]) -> bool:
        test = self._when.get(id(alt))
        return test is None or test(Env("", "", scope, self.table, self.extractors))

    def texts(
        self,
        alt: R.Alternative,
        scope: Mapping[str, Any],
        items: Sequence[Mapping[str, Any]] = (),
    ) -> list[Told]:
        """Every text of ``alt`` rendered in ``scope`` (all of a rotation); empty when the
        alternative does not apply or a field has no value."""
        if not self.holds(alt, scope):
            return []
        out = []
        for tid, template in alt.texts:
            if alt.each:
                if not items:
                    return []
                lines = [template.render({**scope, **item}, self.formatters) for item in items]
                if any(line is None for line in lines):
                    continue
                out.append(Told(tid, "\n".join(line for line in lines if line is not None)))
            else:
                text = template.render(scope, self.formatters)
                if text is not None:
                    out.append(Told(tid, text))
        return out

    def tell(
        self,
        entry: R.Entry | None,
        scope: Mapping[str, Any],
        items: Sequence[Mapping[str, Any]] = (),
        turn: int = 0,
    ) -> Told | None:
        """The entry's reply in ``scope``: the first alternative that applies; within a
        rotation, the text the turn's number points to among those that render."""
        if entry is None:
            return None
        for alt in entry.alternatives:
            told = self.texts(alt, scope, items)
            if told:
                return told[turn % len(told)]
        return None
