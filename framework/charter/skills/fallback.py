"""Fallback protocols at run time (seed 001 §4.3: 兜底不是放弃，而是启动新的能力组合).

A protocol is an ordered list of steps, each ``when`` (conditions that must all hold) → ``do``
(an action). The steps are tried in order; a step whose conditions hold runs its action, and
an action that answers ends the chain. An action that cannot answer — the FAQ has no entry
above its floor, a called skill fails too — hands on to the next step, so "政策搜索 fails →
FAQ → clarify" is three steps of one protocol. Every action run fires
``charter_on_fallback``, and the outcome lists every step with what it did, for traces.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from charter.compile.program import Program
from charter.compile.specs.skills import Action, Condition, FallbackStep, SkillsSpec, fill_args
from charter.contracts.events import Fallback
from charter.contracts.registry import Registry
from charter.skills.tickets import TicketStoreProtocol as Tickets

HANDOFF_TEXT = "已为您转接人工客服，工单号 {ticket}，稍后会有专人联系您。"
RECOMMEND_TEXT = "这个问题可以试试「{skill}」：{description}"
NO_ANSWER = "抱歉，暂时无法完成这个请求，请稍后再试或联系人工客服。"


@dataclass(frozen=True)
class CallContext:
    """What the turn knows that a fallback may use: the user's words (the FAQ query), how
    often they said no, the answer's confidence, who and where (for a ticket), the recent
    conversation (the ticket's context) and anything else (``extra``, read by ``expr``).

    ``now`` is the turn's clock when it was set (``charter chat --now``, a conversation's
    ``now:``, a skill case's ``now:``, the Agent's ``clock=``), told to the skills that take a
    ``context`` (``SkillContext``); None: the wall clock."""

    query: str = ""
    negations: int = 0
    confidence: float | None = None
    user_id: str = ""
    session_id: str = ""
    conversation: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    now: datetime | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> CallContext:
        data = dict(data or {})
        known = {k: data.pop(k) for k in list(data) if k in cls.__dataclass_fields__}
        if "conversation" in known:
            known["conversation"] = tuple(known["conversation"])
        if isinstance(known.get("now"), str):
            known["now"] = aware(known["now"])
        extra = dict(known.pop("extra", None) or {})
        return cls(**known, extra={**extra, **data})

    def subject(self) -> dict[str, Any]:
        """What ``expr`` conditions read under ``context.``."""
        return {
            **dict(self.extra),
            "query": self.query,
            "negations": self.negations,
            "confidence": self.confidence,
            "user_id": self.user_id,
            "session_id": self.session_id,
        }


def aware(text: str) -> datetime:
    """An ISO 8601 date-time with its UTC offset: a clock without one would be read in
    whatever zone the machine is in."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        raise ValueError(f"now {text!r} has no UTC offset (2024-05-01T10:00:00+08:00)")
    return value


@dataclass(frozen=True)
class Failure:
    """Why a call did not give a result: ``kind`` error / timeout / breaker_open /
    contract_violation / invalid_args; ``message`` is user-facing for invalid arguments."""

    kind: str
    detail: str
    message: str = ""
    missing: tuple[str, ...] = ()
    reflect: bool = False
    field: str = ""  # invalid_args: the argument(s) refused, "a" or "a, b" (a path: "a.b")


@dataclass(frozen=True)
class StepTrace:
    step: str  # "when -> do" as written
    held: bool
    result: str  # what the action did, or why the step did not apply


@dataclass(frozen=True)
class FallbackOutcome:
    protocol: str
    action: str  # the action that answered; "none" when none did
    text: str
    steps: tuple[StepTrace, ...] = ()
    ticket: str | None = None
    faq: str | None = None
    skill: str | None = None  # the skill recommended or called


CallSkill = Callable[[str, Mapping[str, Any], CallContext, int], Any]  # -> SkillOutcome


class FallbackRunner:
    def __init__(
        self,
        spec: SkillsSpec,
        registry: Registry,
        *,
        pack: str = "",
        tickets: Tickets | None = None,
        notify: Callable[[str, object], object] | None = None,
        constants: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.pack = pack
        self.tickets = tickets
        self.notify = notify
        exprs = [
            c.expr
            for _, steps in spec.protocols
            for s in steps
            for c in s.when
            if c.expr is not None
        ]
        self._program = Program(((id(e), e) for e in exprs), registry, constants)
        # per protocol, the steps that can apply after a call that succeeded, their cheap
        # conditions first (a DSL expression last: it builds an environment)
        self._after_success = {
            name: [
                sorted(step.when, key=lambda c: c.kind == "expr")
                for step in steps
                if all(c.kind not in ("failure", "always") for c in step.when)
            ]
            for name, steps in spec.protocols
        }

    def applies_after_success(
        self, protocol: str, args: Mapping[str, Any], ctx: CallContext
    ) -> bool:
        """Would any step of ``protocol`` apply to a call that succeeded? (The common answer,
        no, without walking the protocol.)"""
        return any(
            all(self.holds(c, None, args, ctx) for c in conds)
            for conds in self._after_success.get(protocol, ())
        )

    def holds(
        self, cond: Condition, failure: Failure | None, args: Mapping[str, Any], ctx: CallContext
    ) -> bool:
        """Does ``cond`` hold? After a call that succeeded (``failure`` None) only what the
        turn says about the answer can: negations, confidence, a missing argument, ``expr``;
        ``always`` and the failure words mean "whenever the call failed"."""
        if cond.kind == "always":
            return failure is not None
        if cond.kind == "failure":
            return failure is not None and failure.kind in cond.failures
        if cond.kind == "missing_slot":
            missing = failure.missing if failure is not None else ()
            return cond.name in missing or args.get(cond.name) in (None, "", [])
        if cond.kind == "negations":
            return ctx.negations >= cond.number
        if cond.kind == "confidence":
            return ctx.confidence is not None and ctx.confidence < cond.number
        assert cond.expr is not None
        # the DSL reads context.<path> from the context mapping itself
        env = self._program.env(input=ctx.query, context=ctx.subject())
        return bool(self._program[id(cond.expr)](env))

    def run(
        self,
        protocol: str,
        skill: str,
        args: Mapping[str, Any],
        failure: Failure | None,
        ctx: CallContext,
        call: CallSkill,
        depth: int = 0,
    ) -> FallbackOutcome:
        """Try the protocol's steps in order (see the module docstring). ``failure`` None: the
        call succeeded, and the protocol is asked whether the turn still needs a fallback (the
        user said no twice, the answer is uncertain)."""
        traces: list[StepTrace] = []
        for step in self.spec.protocol(protocol):
            label = " and ".join(c.source for c in step.when) + " -> " + step.do.source
            if not all(self.holds(c, failure, args, ctx) for c in step.when):
                traces.append(StepTrace(label, False, "conditions do not hold"))
                continue
            self._fire(protocol, step, skill, failure, ctx)
            done = self._act(step.do, skill, args, failure, ctx, call, depth)
            traces.append(StepTrace(label, True, done.get("result", "")))
            if "text" in done:
                return FallbackOutcome(
                    protocol,
                    step.do.kind,
                    done["text"],
                    tuple(traces),
                    ticket=done.get("ticket"),
                    faq=done.get("faq"),
                    skill=done.get("skill"),
                )
        text = (failure.message if failure is not None else "") or NO_ANSWER
        return FallbackOutcome(protocol, "none", text, tuple(traces))

    def _fire(
        self,
        protocol: str,
        step: FallbackStep,
        skill: str,
        failure: Failure | None,
        ctx: CallContext,
    ) -> None:
        if self.notify is None:
            return
        event = Fallback(
            pack=self.pack,
            protocol=protocol,
            condition=" and ".join(c.source for c in step.when),
            action=step.do.source,
            skill=skill,
            detail={"failure": failure.kind, "detail": failure.detail}
            if failure is not None
            else {"failure": None},
            user_id=ctx.user_id or None,
            session_id=ctx.session_id or None,
        )
        self.notify("charter_on_fallback", event)

    def _act(
        self,
        act: Action,
        skill: str,
        args: Mapping[str, Any],
        failure: Failure | None,
        ctx: CallContext,
        call: CallSkill,
        depth: int,
    ) -> dict[str, Any]:
        if act.kind == "clarify":
            return {"text": act.text, "result": "asked"}
        if act.kind == "template":
            return {"text": fill_args(act.text, args), "result": "answered from the template"}
        if act.kind == "degrade_to_faq":
            return self._faq(act, skill, args, ctx)
        if act.kind == "recommend_skill":
            target = self.spec.contract(act.target)
            description = target.description if target is not None else act.target
            text = RECOMMEND_TEXT.format(skill=act.target, description=description)
            return {"text": text, "skill": act.target, "result": f"recommended {act.target}"}
        if act.kind == "handoff_human":
            return self._handoff(act, skill, args, failure, ctx)
        return self._call(act, args, ctx, call, depth)

    def _faq(
        self, act: Action, skill: str, args: Mapping[str, Any], ctx: CallContext
    ) -> dict[str, Any]:
        faq = self.spec.faq
        query = ctx.query or " ".join(str(v) for v in args.values() if isinstance(v, str))
        if faq is None or not query.strip():
            return {"result": "no FAQ query"}
        floor = act.min_score if act.min_score is not None else faq.min_score
        found = faq.lookup(query, skill=skill, k=1, min_score=0.0)
        if not found or found[0].score < floor:
            best = f"{found[0].score:.2f}" if found else "0.00"
            return {"result": f"FAQ miss (best {best} < {floor:.2f})"}
        hit = found[0]
        return {
            "text": hit.entry.answer,
            "faq": hit.entry.id,
            "result": f"FAQ {hit.entry.id} ({hit.score:.2f})",
        }

    def _handoff(
        self,
        act: Action,
        skill: str,
        args: Mapping[str, Any],
        failure: Failure | None,
        ctx: CallContext,
    ) -> dict[str, Any]:
        if self.tickets is None:
            return {"result": "no ticket store: cannot hand off"}
        if failure is None:
            reason = f"the user said no {ctx.negations} times to its answer"
        else:
            reason = f"{failure.kind}: {failure.detail}"
            if ctx.negations:
                reason = f"the user said no {ctx.negations} times; {reason}"
        ticket = self.tickets.open(
            user_id=ctx.user_id or "anonymous",
            session_id=ctx.session_id or "-",
            domain=self.pack or "-",
            skill=skill,
            queue=act.target or "human",
            reason=reason,
            summary=ctx.query[:200],
            context={
                "query": ctx.query,
                "args": json.loads(json.dumps(dict(args), ensure_ascii=False, default=str)),
                "failure": None
                if failure is None
                else {"kind": failure.kind, "detail": failure.detail},
                "negations": ctx.negations,
                "conversation": list(ctx.conversation),
            },
        )
        tid = str(getattr(ticket, "id", ticket))
        return {"text": HANDOFF_TEXT.format(ticket=tid), "ticket": tid, "result": f"ticket {tid}"}

    def _call(
        self, act: Action, args: Mapping[str, Any], ctx: CallContext, call: CallSkill, depth: int
    ) -> dict[str, Any]:
        target = self.spec.contract(act.target)
        if target is None:
            return {"result": f"no contract for {act.target}"}
        props = set(target.input_schema.get("properties", {}))
        passed = {k: v for k, v in args.items() if k in props}
        outcome = call(act.target, passed, ctx, depth + 1)
        if outcome.status != "ok":
            return {"result": f"{act.target} failed too ({outcome.failure.kind})"}
        return {
            "text": outcome.text,
            "skill": act.target,
            "result": f"{act.target} answered",
        }


def describe_steps(steps: Sequence[StepTrace]) -> list[str]:
    return [f"{'✓' if s.held else '·'} {s.step}: {s.result}" for s in steps]
