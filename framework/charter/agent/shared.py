"""The deployment's shared pool in a turn (seed 000 §6.1, docs/memory.md §8): facts that belong
to no user ("保温杯：已停产", "服务协议：V3.0生效"), read by every agent configured with the
same pool (``[memory] shared_url`` and ``shared_namespace``).

Reading comes after the user's own memories (the ladder): the shared facts the turn is about —
a key the input contains, a key equal to a value a slot of an active goal holds (the product
asked about), or a key naming a slot the turn shares (``price-query.product`` or ``product``).
The roles of ``memory.yaml`` apply to shared keys as to a user's (``roles.<key>``, or the type
``shared``), and every fact read is an audit row in the user's trail (``read``, memory id
``shared:<key>@v<version>``). When the ladder found nothing of the user's, the recollection
says the shared pool answered (step ``shared``).

Writing: the values the user gave this turn for the slots ``[memory] shared_keys`` lists, stored
under the listed name — only when the turn carries the user's consent and no PII recognizer
finds anything in the value; ``updated_by`` names the pack and the actor, never the user. A
refused share is a ``deny`` audit row, a share a ``write`` row. A pool that cannot be reached
leaves the turn to the user's own memories and says so in the trace.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError

from charter.memory.facts.access import audit_row, denied
from charter.memory.records import Accessor
from charter.memory.shared import SharedFact

if TYPE_CHECKING:
    from charter.agent.parts import Parts
    from charter.agent.steps import Planned

log = logging.getLogger(__name__)
TYPE = "shared"  # the memory type role rules name for shared facts


def memory_id(fact: SharedFact) -> str:
    return f"shared:{fact.key}@v{fact.version}"


@dataclass(frozen=True)
class SharedRecall:
    """The shared facts a turn read, the ones its role may not see, and a failure."""

    facts: tuple[SharedFact, ...] = ()
    hidden: tuple[str, ...] = ()  # keys refused by role
    error: str = ""

    def texts(self) -> list[str]:
        return [f"{f.key}：{f.value}" for f in self.facts]

    def ids(self) -> list[str]:
        return [memory_id(f) for f in self.facts]

    def trace(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "facts": [
                {"key": f.key, "value": f.value, "version": f.version, "by": f.updated_by}
                for f in self.facts
            ]
        }
        if self.hidden:
            out["hidden"] = list(self.hidden)
        if self.error:
            out["error"] = self.error
        return out


def _slots(p: Parts, intent: str) -> list[str]:
    spec = p.pack.goals.intent(intent) if p.pack.goals is not None else None
    return [s.name for s in spec.slots] if spec is not None else []


def _shared_name(p: Parts, intent: str, slot: str) -> str | None:
    """The name ``shared_keys`` gives this slot: ``intent.slot`` first, else ``slot``."""
    for name in (f"{intent}.{slot}", slot):
        if name in p.shared_keys:
            return name
    return None


def _names(p: Parts, planned: Planned) -> Iterator[str]:
    """The keys a turn names without writing them: its goals' slot values and shared slots."""
    for goal in planned.active:
        for value in planned.slots.get(goal.id, {}).values():
            if isinstance(value, str | int) and not isinstance(value, bool):
                yield str(value)
        for slot in _slots(p, goal.intent):
            name = _shared_name(p, goal.intent, slot)
            if name is not None:
                yield name


def recall(p: Parts, accessor: Accessor, text: str, planned: Planned) -> SharedRecall:
    """The shared facts this turn is about that the accessor's role may see, audited."""
    if p.shared is None:
        return SharedRecall()
    try:
        found = p.shared.mentioned(text, _names(p, planned))
    except SQLAlchemyError as exc:  # the pool is an addition: the user's memory still answers
        log.warning("the shared pool could not be read: %s", type(exc).__name__)
        return SharedRecall(error=f"the shared pool could not be read ({type(exc).__name__})")
    seen = tuple(f for f in found if p.policy.may_see(accessor.role, TYPE, f.key))
    hidden = tuple(f.key for f in found if f not in seen)
    now = p.clock()
    rows = [audit_row(accessor, "read", now, memory_id(f), f"shared {f.key}") for f in seen]
    rows += [denied(accessor, now, f"read shared {key}", f"role {accessor.role}") for key in hidden]
    p.facts.record_audit(rows)
    return SharedRecall(seen, hidden)


def _given(planned: Planned) -> Iterable[tuple[str, str, Any]]:
    """(intent, slot, value) of every value the user gave this turn."""
    if planned.turn is None:
        return
    for g in planned.turn.plan.goals:
        yield from ((g.intent, k, v) for k, v in g.slots.items())


def share(p: Parts, accessor: Accessor, planned: Planned) -> dict[str, Any]:
    """Put the turn's values of shareable slots in the pool; what was shared and refused."""
    if p.shared is None or not p.shared_keys:
        return {}
    shared: list[str] = []
    refused: list[str] = []
    rows: list[dict[str, Any]] = []
    now = p.clock()
    for intent, slot, raw in _given(planned):
        name = _shared_name(p, intent, slot)
        if name is None or raw in (None, "", []):
            continue
        value = "、".join(map(str, raw)) if isinstance(raw, list) else str(raw)
        why = _refusal(p, accessor, value)
        if why is not None:
            refused.append(name)
            rows.append(denied(accessor, now, f"share {name}", why))
            continue
        fact = p.shared.put(name, value, updated_by=f"{p.pack.name}:{accessor.actor}")
        shared.append(name)
        rows.append(audit_row(accessor, "write", now, memory_id(fact), f"shared {name}"))
    p.facts.record_audit(rows)
    out: dict[str, Any] = {"shared": shared}
    if refused:
        out["shared_refused"] = refused
    return out


def _refusal(p: Parts, accessor: Accessor, value: str) -> str | None:
    """Why this value may not go to the pool, or None: everyone configured reads it."""
    if accessor.consent is None:
        return "the turn carries no consent of the user"
    kinds = p.pipeline.pii.scan(value, in_clear=True).kinds
    if kinds or p.pipeline.scrub(value) != value:
        return "personal data: " + ("、".join(sorted(set(kinds))) or "scrubbed")
    return None
