"""What a turn returns (ARCHITECTURE §12): the reply and everything that explains it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from charter.learn.words import NEGATIONS, is_negation
from charter.reflect.engine import Finding

__all__ = ["NEGATIONS", "ReflectionRecord", "Reply", "is_negation"]


@dataclass(frozen=True)
class ReflectionRecord:
    """The three lines of seed 000 §2.2, decided by the compiled checkers, not by the model:
    【目标对齐】 the active goals' deliverables are in the answer; 【约束合规】 no rule failed
    on the final text; 【不确定性】 a memory below the pack's uncertainty threshold was used."""

    goal_aligned: bool
    constraints_ok: bool
    uncertain: bool
    missing: tuple[str, ...] = ()  # deliverables not covered
    failed_rules: tuple[str, ...] = ()  # on the final text
    attempts: int = 1
    verdict: str = "pass"

    def lines(self) -> tuple[str, str, str]:
        goal = (
            "【目标对齐】Y"
            if self.goal_aligned
            else "【目标对齐】N 缺少：" + "、".join(self.missing)
        )
        rules = (
            "【约束合规】Y"
            if self.constraints_ok
            else "【约束合规】N " + "、".join(self.failed_rules)
        )
        unsure = "【不确定性】" + ("高（用到了低置信度信息）" if self.uncertain else "低")
        return goal, rules, unsure

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal_aligned": self.goal_aligned,
            "constraints_ok": self.constraints_ok,
            "uncertain": self.uncertain,
            "missing": list(self.missing),
            "failed_rules": list(self.failed_rules),
            "attempts": self.attempts,
            "verdict": self.verdict,
            "lines": list(self.lines()),
        }


@dataclass(frozen=True)
class Reply:
    """``text`` is what the user is told, composed from the pack's templates (``responses``
    are their ids, in order; ``model`` marks what the model wrote) for the turn's ``events``.
    ``verdict``: pass, fixed (repaired by the rules), ask (a question and nothing delivered: a
    slot is missing, a confirmation is asked, a fallback clarifies), escalate (a person takes
    over: see ``ticket``), block (the pack's safe message). ``answered_by``: template, faq (an
    FAQ entry as written, unchecked like a template), model
    (some of it the model's), escalation or rules (blocked). ``attempts``: generations."""

    text: str
    verdict: str
    findings: tuple[Finding, ...] = ()
    reflection: ReflectionRecord | None = None
    goals: tuple[Mapping[str, Any], ...] = ()
    memories_used: tuple[str, ...] = ()
    trace_id: str | None = None
    ticket: str | None = None
    attempts: int = 0
    skills: tuple[Mapping[str, Any], ...] = ()
    answered_by: str = "template"  # template, faq, model, escalation, rules
    # delivered: the goals whose result the reply told (they complete); entropy: the model's
    extra: Mapping[str, Any] = field(default_factory=dict)
    responses: tuple[str, ...] = ()
    events: tuple[Mapping[str, Any], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "verdict": self.verdict,
            "answered_by": self.answered_by,
            "findings": [f.as_dict() for f in self.findings],
            "reflection": self.reflection.as_dict() if self.reflection else None,
            "goals": [dict(g) for g in self.goals],
            "memories_used": list(self.memories_used),
            "trace_id": self.trace_id,
            "ticket": self.ticket,
            "attempts": self.attempts,
            "skills": [dict(s) for s in self.skills],
            "responses": list(self.responses),
            "events": [dict(e) for e in self.events],
        }
