"""The report of a pack's intent table (``charter.conversations.understanding``): the run with
keyword triggers only beside the run with the examples too, the leave-one-out accuracy of the
examples, and what fails the run (a safety intent missed; an intent under ``--min-recall`` or
``--min-precision``, with examples). ``render`` is the text ``charter test`` prints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from charter.compile.specs.understanding import LooRow
from charter.contracts.registry import Registry
from charter.conversations.understanding import Measure, Outcome, measure, ratio
from charter.diagnostics import Location

if TYPE_CHECKING:
    from charter.compile.compiled import CompiledPack
    from charter.goals.understand import Understander

EPS = 1e-9  # a percentage compared with a threshold: 90 % of 10 is 90 %, not 89.999…


@dataclass(frozen=True)
class UnderstandingReport:
    pack: str
    location: Location  # the table (tests/intents.yaml)
    keywords: Measure  # keyword triggers only
    examples: Measure | None  # keywords and examples (None: the pack has no examples)
    loo: tuple[LooRow, ...]  # each example held out of the fit
    safety: tuple[str, ...]  # the pack's safety intents

    @property
    def best(self) -> Measure:
        """The run the thresholds apply to: with examples when the pack has them."""
        return self.examples if self.examples is not None else self.keywords

    def loo_accuracy(self) -> float | None:
        return ratio(sum(r.decided == r.expected for r in self.loo), len(self.loo))

    def problems(self, min_recall: float = 0.0, min_precision: float = 0.0) -> list[str]:
        """Why the run fails: safety intents below 100 % recall, intents below the minimums
        (percent), with examples."""
        out: list[str] = []
        for s in self.best.scores():
            if s.intent in self.safety and s.recall is not None and s.recall < 1 - EPS:
                out.append(f"safety intent '{s.intent}' recall {pct(s.recall)} is below 100%")
            elif s.recall is not None and s.recall * 100 + EPS < min_recall:
                out.append(f"intent '{s.intent}' recall {pct(s.recall)} is below {min_recall:g}%")
            if s.precision is not None and s.precision * 100 + EPS < min_precision:
                out.append(
                    f"intent '{s.intent}' precision {pct(s.precision)} is below {min_precision:g}%"
                )
        return out

    def summary(self) -> str:
        """One line: the accuracy of each run and the leave-one-out accuracy."""
        parts = [f"accuracy {pct(self.keywords.accuracy())} with keywords only"]
        if self.examples is not None:
            parts.append(f"{pct(self.examples.accuracy())} with examples")
        if self.loo:
            parts.append(f"leave-one-out {pct(self.loo_accuracy())}")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pack": self.pack,
            "location": str(self.location),
            "keywords": _measure_dict(self.keywords),
            "examples": _measure_dict(self.examples) if self.examples is not None else None,
            "leave_one_out": {
                "examples": len(self.loo),
                "accuracy": _round(self.loo_accuracy()),
                "misses": [
                    {"text": r.text, "expected": r.expected, "decided": r.decided, "how": r.how}
                    for r in self.loo
                    if r.decided != r.expected
                ],
            },
            "safety": list(self.safety),
        }


def report_for(
    pack: CompiledPack, registry: Registry, understander: Understander | None
) -> UnderstandingReport:
    """The pack's table measured twice: keyword triggers only, then with ``understander``."""
    goals = pack.goals
    spec = getattr(pack, "understanding", None)
    phrases = getattr(pack, "phrases", ())
    where = phrases[0].location if phrases else Location(pack.root)
    return UnderstandingReport(
        pack=pack.name,
        location=Location(where.path),
        keywords=measure(pack, registry, None),
        examples=measure(pack, registry, understander) if understander is not None else None,
        loo=spec.loo if spec is not None else (),
        safety=tuple(i.id for i in goals.intents if i.safety) if goals is not None else (),
    )


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value * 100, 1)


def _measure_dict(m: Measure) -> dict[str, Any]:
    asked, named = m.clarified()
    none, unanswered = m.out_of_scope()
    acts, acts_right = m.acts()
    slots, slots_right = m.slots()
    return {
        "phrases": len(m.outcomes),
        "accuracy": _round(m.accuracy()),
        "clarified": {"asked": asked, "naming_expected": named},
        "intents": [
            {
                "intent": s.intent,
                "expected": s.expected,
                "decided": s.decided,
                "precision": _round(s.precision),
                "recall": _round(s.recall),
            }
            for s in m.scores()
        ],
        "out_of_scope": {"phrases": none, "unanswered": _round(ratio(unanswered, none))},
        "acts": {"phrases": acts, "accuracy": _round(ratio(acts_right, acts))},
        "slots": {"phrases": slots, "accuracy": _round(ratio(slots_right, slots))},
        "layers": dict(m.layers()),
        "confusion": [{"expected": e, "decided": d, "count": n} for e, d, n in m.confusion()],
        "misses": [o.as_dict() for o in m.misses()],
    }


# ---- text ------------------------------------------------------------------------------------


def _pair(kw: Measure, ex: Measure | None, of: Callable[[Measure], float | None]) -> str:
    """``kw | ex``: the keyword-only value beside the one with examples."""
    first = pct(of(kw))
    return first if ex is None else f"{first:>6} | {pct(of(ex)):>6}"


def _of(intent: str, key: str) -> Callable[[Measure], float | None]:
    """An intent's precision or recall in a run."""

    def read(m: Measure) -> float | None:
        value: float | None = getattr(m.score(intent), key)
        return value

    return read


def render(report: UnderstandingReport, problems: Sequence[str] = ()) -> str:
    kw, ex = report.keywords, report.examples
    best = report.best
    out = [
        f"understanding: {report.pack} ({_n(len(kw.outcomes), 'phrase')}, {report.location.path})",
        "  " + ("keyword triggers only | with examples" if ex is not None else "keyword triggers"),
    ]
    intents = [s.intent for s in best.scores()]
    for s in kw.scores():
        if s.intent not in intents:
            intents.append(s.intent)
    width = max([len(i) for i in intents] + [6])
    out.append(f"  {'intent':<{width}}  phrases  {'precision':>15}  {'recall':>15}")
    for intent in intents:
        mark = " (safety)" if intent in report.safety else ""
        prec = _pair(kw, ex, _of(intent, "precision"))
        rec = _pair(kw, ex, _of(intent, "recall"))
        n = best.score(intent).expected
        out.append(f"  {intent:<{width}}  {n:>7}  {prec:>15}  {rec:>15}{mark}")
    asked, named = best.clarified()
    accuracy = _pair(kw, ex, Measure.accuracy)
    out.append(
        f"  accuracy: {accuracy} ({_n(len(kw.scored), 'phrase')}; "
        f"{_n(asked, 'clarifying question')}, {named} naming the expected intent)"
    )
    none, _ = best.out_of_scope()
    out.append(
        "  out of scope, answered by no intent: "
        f"{_pair(kw, ex, lambda m: ratio(m.out_of_scope()[1], none))} ({_n(none, 'phrase')})"
    )
    acts, _ = best.acts()
    out.append(
        f"  dialogue acts: {_pair(kw, ex, lambda m: ratio(m.acts()[1], acts))} "
        f"({_n(acts, 'phrase')})"
    )
    slots, _ = best.slots()
    out.append(
        f"  slots: {_pair(kw, ex, lambda m: ratio(m.slots()[1], slots))} ({_n(slots, 'phrase')})"
    )
    if report.loo:
        out.append(
            f"  examples, leave-one-out: {pct(report.loo_accuracy())} ({len(report.loo)} examples)"
        )
    label = "with examples" if ex is not None else "keywords"
    out.append(
        f"  layer that decided ({label}): "
        + ", ".join(f"{layer} {n}" for layer, n in best.layers())
    )
    confusion = best.confusion()
    if confusion:
        out.append(f"  confusion ({label}), expected → decided:")
        out += [f"    {e} → {d}: {n}" for e, d, n in confusion]
    misses = best.misses()
    if misses:
        out.append(f"  misses ({label}):")
        out += [f"    {_miss(o)}" for o in misses]
    out += [f"  FAIL {p}" for p in problems]
    return "\n".join(out) + "\n"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _miss(o: Outcome) -> str:
    p = o.phrase
    parts = [f"{p.say} → {o.shown} ({o.layer or 'no layer'})"]
    if p.checks_intent and not o.intent_right:
        parts.append(f"expected {p.intent or 'none'}")
    if p.act is not None and o.act != p.act:
        parts.append(f"act {o.act}, expected {p.act} (pending {p.pending})")
    if p.slots and not o.slots_right:
        got = {k: o.slots.get(k) for k in p.slots}
        parts.append(f"slots {got}, expected {p.slots}")
    return "; ".join(parts) + f"  [{p.location.line}]"
