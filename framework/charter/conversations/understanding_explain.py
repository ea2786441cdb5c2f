"""How one input is understood, layer by layer (``charter understand``): the keyword triggers
that fire, the dialogue act, what the examples say (the ranking, each intent's bands and the
margin), and the decision the planner takes on an empty session, with the layer that took it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.compile.specs.understanding import Band, Heard
from charter.contracts.registry import Registry
from charter.conversations.understanding import CLARIFY, NOW, _first_goal
from charter.goals.acts import act_of
from charter.goals.planner import Planner
from charter.goals.plans import state_from

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack
    from charter.goals.understand import Understander

TOP = 5  # ranked intents shown


@dataclass(frozen=True)
class BandRow:
    """An intent's fitted (or pinned) bands, with how many examples it has."""

    intent: str
    examples: int
    band: Band | None  # None: the intent has no examples

    def as_dict(self) -> dict[str, Any]:
        b = self.band
        return {
            "intent": self.intent,
            "examples": self.examples,
            "open": round(b.open, 4) if b is not None else None,
            "ask": round(b.ask, 4) if b is not None else None,
            "pinned": b.pinned if b is not None else False,
            "safety": b.safety if b is not None else False,
        }


@dataclass(frozen=True)
class Explained:
    pack: str
    text: str
    triggers: tuple[str, ...]  # intents whose keyword trigger fires
    act: str
    heard: Heard | None  # None: the pack has no examples (or its embedder cannot load)
    embedder: str | None
    bands: tuple[BandRow, ...]
    margin: float | None
    decided: str | None  # an intent, "clarify" or None
    candidates: tuple[str, ...]
    layer: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "text": self.text,
            "triggers": list(self.triggers),
            "act": self.act,
            "embedder": self.embedder,
            "examples": self.heard.as_dict() if self.heard is not None else None,
            "bands": [b.as_dict() for b in self.bands],
            "margin": round(self.margin, 4) if self.margin is not None else None,
            "decision": {
                "intent": self.decided,
                "candidates": list(self.candidates),
                "layer": self.layer,
            },
        }


def bands_of(pack: CompiledPack, understander: Understander | None) -> tuple[BandRow, ...]:
    goals = pack.goals
    if goals is None:
        return ()
    spec = understander.spec if understander is not None else None
    return tuple(
        BandRow(i.id, len(i.examples), spec.band(i.id) if spec is not None else None)
        for i in goals.intents
    )


def explain(
    pack: CompiledPack, registry: Registry, understander: Understander | None, text: str
) -> Explained:
    goals = pack.goals
    spec = understander.spec if understander is not None else None
    if goals is None:
        return Explained(pack.name, text, (), "other", None, None, (), None, None, (), "")
    planner = Planner(goals, registry, pack.constants, understander)
    env = planner.program.env(input=text)
    fired = tuple(i.id for i in goals.intents if planner.triggers[i.id](env))
    plan = planner.plan(text, state_from([], NOW))
    decided, _ = _first_goal(plan)
    heard = understander.hear(text) if understander is not None else None
    return Explained(
        pack=pack.name,
        text=text,
        triggers=fired,
        act=str(act_of(text, planner.lexicon)),
        heard=heard,
        embedder=spec.embedder if spec is not None else None,
        bands=bands_of(pack, understander),
        margin=spec.margin if spec is not None else None,
        decided=decided,
        candidates=plan.clarify if decided == CLARIFY else (),
        layer=plan.layer,
    )


def render_bands(rows: tuple[BandRow, ...], margin: float | None) -> list[str]:
    width = max([len(r.intent) for r in rows] + [6])
    out = [f"  {'intent':<{width}}  examples   open    ask"]
    for r in rows:
        b = r.band
        if b is None:
            out.append(f"  {r.intent:<{width}}  {r.examples:>8}      –      –")
            continue
        notes = [n for n, on in (("pinned", b.pinned), ("safety", b.safety)) if on]
        tail = f"  ({', '.join(notes)})" if notes else ""
        out.append(f"  {r.intent:<{width}}  {r.examples:>8}  {b.open:.3f}  {b.ask:.3f}{tail}")
    if margin is not None:
        out.append(f"  margin {margin:.3f}")
    return out


def render(e: Explained) -> str:
    out = [f"{e.pack}: {e.text}"]
    out.append("keyword triggers: " + (", ".join(e.triggers) or "none"))
    out.append(f"dialogue act: {e.act}")
    if e.heard is None:
        out.append("examples: none (the pack has no examples, or its embedder cannot load)")
    else:
        out.append(f"examples ({e.embedder}): {e.heard.decision}")
        width = max([len(s.intent) for s in e.heard.ranking[:TOP]] + [6])
        for s in e.heard.ranking[:TOP]:
            veto = f"  vetoed by {s.vetoed_by}" if s.vetoed_by else ""
            out.append(f"  {s.intent:<{width}}  {s.score:.3f}  {s.nearest}{veto}")
        out.append("bands:")
        out += render_bands(e.bands, e.margin)
    clarified = "clarify: " + " | ".join(e.candidates)
    shown = clarified if e.decided == CLARIFY else e.decided or "none"
    out.append(f"decision: {shown} (layer: {e.layer or 'none'})")
    return "\n".join(out) + "\n"
