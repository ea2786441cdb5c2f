"""What a pack's conversation tests exercised: the intents whose goals they opened, the goal
event kinds their replies told, the response templates their replies were composed from —
each against everything the pack (and Charter) could show."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.compile.compiled import CompiledPack
from charter.compile.response_spec import EVENT_KINDS

if TYPE_CHECKING:
    from charter.conversations.runner import ConversationResult


@dataclass(frozen=True)
class Part:
    """One dimension: the ids there are, and those seen."""

    name: str  # intents, events, templates
    total: tuple[str, ...]
    covered: frozenset[str]

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(i for i in self.total if i not in self.covered)

    def __str__(self) -> str:
        return f"{self.name} {len(self.total) - len(self.missing)}/{len(self.total)}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "covered": len(self.total) - len(self.missing),
            "total": len(self.total),
            "missing": list(self.missing),
        }


@dataclass(frozen=True)
class ConversationCoverage:
    pack: str
    intents: Part
    events: Part
    templates: Part | None  # None: the pack has no compiled responses

    @property
    def parts(self) -> tuple[Part, ...]:
        return (self.intents, self.events, *((self.templates,) if self.templates else ()))

    def summary(self) -> str:
        """``intents 5/5, events 9/15, templates 23/30``"""
        return ", ".join(str(p) for p in self.parts)

    def missing(self) -> list[str]:
        """One line per dimension with something never seen: ``events fallback, invalid``."""
        return [f"{p.name} {', '.join(p.missing)}" for p in self.parts if p.missing]

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "intents": self.intents.as_dict(),
            "events": self.events.as_dict(),
            "templates": self.templates.as_dict() if self.templates else None,
        }


def _events(pack: CompiledPack) -> tuple[str, ...]:
    """The event kinds a turn of the pack can have: the clarifying ones only when its intents
    have examples."""
    goals = pack.goals
    examples = goals is not None and any(i.examples for i in goals.intents)
    return tuple(e for e in EVENT_KINDS if examples or not e.startswith("clarification_"))


def coverage_of(pack: CompiledPack, results: Iterable[ConversationResult]) -> ConversationCoverage:
    """The coverage of ``pack`` by the results of its conversations."""
    rs = [r for r in results if r.pack == pack.name]
    intents = tuple(i.id for i in pack.goals.intents) if pack.goals is not None else ()
    responses = getattr(pack, "responses", None)
    templates = None
    if responses is not None:
        used = frozenset(t for r in rs for t in r.templates)
        known = responses.reachable or tuple(sorted(responses.template_ids()))
        templates = Part("templates", tuple(sorted(known)), used)
    return ConversationCoverage(
        pack.name,
        Part("intents", intents, frozenset(i for r in rs for i in r.intents)),
        Part("events", _events(pack), frozenset(e for r in rs for e in r.events)),
        templates,
    )
