"""Guarded skill execution (ARCHITECTURE §8, seed 001 §4.2): ``SkillRunner.call(skill, args,
context)``.

1. the arguments against the input schema and the constraints, then the skill's own
   ``refuses`` (what holds on the turn's day) — a violation is answered with the contract's
   user-facing message (the skill's) and never reaches the skill;
2. the breaker of the skill admits the call (or it fails at once, ``breaker_open``);
3. the implementation runs on a worker thread, waited for at most the contract's timeout
   (a Python thread cannot be killed: a call that overruns is abandoned, its late result
   dropped, and counted as a failure by the breaker);
4. the result against the output schema, ``max_results`` and the empty-result-claims-success
   post-check (a ``contract_violation`` with ``reflect`` set: the turn must reflect on it);
5. on any failure the contract's fallback protocol runs (``charter.skills.fallback``). A skill
   a fallback calls (``call NAME``) runs guarded like any other, but without its own
   protocol: when it fails, the calling chain goes on to its next step.

Every call is recorded (skill, status, failure, fallback, time, duration) for traces and the
health metrics (contract compliance, fallback activation); ``records()`` returns them and a
``recorder`` callback may persist them.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from charter.compile.specs.skills import SkillContract, SkillsSpec
from charter.contracts.registry import Registry
from charter.contracts.skills import SkillContext, takes_context
from charter.skills.breaker import BreakerOpenError, BreakerRegistry, BreakerSettings
from charter.skills.executions import Executed, ExecutionLedger
from charter.skills.fallback import CallContext, Failure, FallbackRunner
from charter.skills.guard import ContractGuard, Violation
from charter.skills.outcome import CallRecord, SkillOutcome, Status, result_text
from charter.skills.tickets import TicketStoreProtocol
from charter.skills.workers import Workers
from charter.store.clock import Clock, utcnow

# the outcome types live in charter.skills.outcome; their old home keeps naming them
__all__ = ["INJECTABLE", "CallRecord", "SkillOutcome", "SkillRunner", "Status", "result_text"]
INJECTABLE = ("error", "timeout", "breaker_open", "empty_claim", "bad_output")


class SkillRunner:
    def __init__(
        self,
        spec: SkillsSpec,
        registry: Registry,
        *,
        pack: str = "",
        constants: Mapping[str, Any] | None = None,
        breakers: BreakerRegistry | None = None,
        tickets: TicketStoreProtocol | None = None,
        notify: Callable[[str, object], object] | None = None,
        recorder: Callable[[CallRecord], object] | None = None,
        workers: int = 8,
        keep: int = 10_000,
        ledger: ExecutionLedger | None = None,
        clock: Clock = utcnow,
    ) -> None:
        self.spec = spec
        self.clock = clock  # the wall clock a call without a turn's clock (``ctx.now``) reads
        self.ledger = ledger
        self.registry = registry
        self.pack = pack
        self.breakers = breakers or BreakerRegistry()
        self.fallbacks = FallbackRunner(
            spec, registry, pack=pack, tickets=tickets, notify=notify, constants=constants
        )
        self._guards = {c.name: ContractGuard(c, registry, constants or {}) for c in spec.contracts}
        self._settings = {
            c.name: BreakerSettings(c.breaker.failures, c.breaker.slow_s, c.breaker.cooldown_s)
            for c in spec.contracts
        }
        # skills whose protocol has a step with no failure condition in it
        self._objecting = frozenset(
            c.name
            for c in spec.contracts
            if c.fallback is not None
            and any(
                all(cond.kind not in ("failure", "always") for cond in step.when)
                for step in spec.protocol(c.fallback)
            )
        )
        self._workers = Workers(workers)
        # which skills take ``context=``: their signatures read once, not on every call
        self._contextual = frozenset(n for n, s in registry.skills.items() if takes_context(s))
        self._recorder = recorder
        self._records: deque[CallRecord] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._workers.close()

    def records(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def contract(self, name: str) -> SkillContract:
        found = self.spec.contract(name)
        if found is None:
            known = ", ".join(sorted(c.name for c in self.spec.contracts)) or "none"
            raise KeyError(f"no skill contract named {name!r} (the pack has: {known})")
        return found

    def call(
        self,
        name: str,
        args: Mapping[str, Any],
        context: CallContext | Mapping[str, Any] | None = None,
        *,
        inject: str | None = None,
        depth: int = 0,
        key: str | None = None,
    ) -> SkillOutcome:
        """Validate, call through the breaker with the timeout, check the result; on failure
        run the fallback protocol. ``inject`` makes the call fail on purpose (a drill of the
        fallback chain: error, timeout, breaker_open, empty_claim, bad_output).

        ``key`` is the idempotency key of an executing skill (``effect: execute``; the agent
        gives the goal's id): with a ledger, the skill runs at most once per key and later
        calls get the first one's outcome back (``replayed``)."""
        contract = self.contract(name)
        if inject is not None and inject not in INJECTABLE:
            raise ValueError(f"cannot inject {inject!r}: one of {', '.join(INJECTABLE)}")
        ctx = context if isinstance(context, CallContext) else CallContext.of(context)
        if key is not None and contract.executes and self.ledger is not None:
            return self._once(contract, args, ctx, inject, depth, key, self.ledger)
        return self._call(contract, args, ctx, inject, depth)

    def skill_context(self, ctx: CallContext) -> SkillContext:
        """What the skill is told of the turn: its clock when the turn has one, else the wall
        clock in the machine's local time (its day is the local day, not UTC's)."""
        now = ctx.now if ctx.now is not None else self.clock().astimezone()
        return SkillContext(
            now=now,
            clock_set=ctx.now is not None,
            pack=self.pack,
            user_id=ctx.user_id,
            session_id=ctx.session_id,
        )

    def check(
        self,
        name: str,
        args: Mapping[str, Any],
        context: CallContext | Mapping[str, Any] | None = None,
    ) -> SkillOutcome | None:
        """The refusal of ``args`` (the contract's schema and constraints, the skill's own
        ``refuses`` on the turn of ``context``), without calling the skill or its fallback;
        None when the call would be admitted."""
        ctx = context if isinstance(context, CallContext) else CallContext.of(context)
        violation = self._admits(name, args, ctx)
        if violation is None:
            return None
        failure = Failure(
            "invalid_args",
            violation.detail,
            violation.message,
            violation.missing,
            field=violation.field,
        )
        return SkillOutcome(name, "invalid", args, violation.message, None, failure)

    def _admits(self, name: str, args: Mapping[str, Any], ctx: CallContext) -> Violation | None:
        guard = self._guards[name]
        return guard.check_args(args, self.skill_context(ctx) if guard.refuses else None)

    def replay(self, name: str, args: Mapping[str, Any], key: str) -> SkillOutcome | None:
        """What the execution of ``key`` gave, from the ledger; None when nothing is kept (a
        repeated yes tells the result again and never runs the skill)."""
        found = self.ledger.get(key) if self.ledger is not None else None
        if found is None or found[1] is None or found[0] == "running":
            return None
        return self._told(name, args, found[1])

    def _once(
        self,
        contract: SkillContract,
        args: Mapping[str, Any],
        ctx: CallContext,
        inject: str | None,
        depth: int,
        key: str,
        ledger: ExecutionLedger,
    ) -> SkillOutcome:
        ran: list[SkillOutcome] = []

        def run() -> Executed:
            out = self._call(contract, args, ctx, inject, depth)
            ran.append(out)
            f = out.failure
            return Executed(
                out.status,
                out.text,
                out.result,
                f.kind if f is not None else None,
                f.detail if f is not None else "",
                f.message if f is not None else "",
            )

        # waiting for another worker's execution: as long as that call may take, and a margin
        once = ledger.once(key, contract.name, args, run, wait_s=contract.timeout_s + 5.0)
        if ran:
            return ran[0]
        done = once.executed
        if done is None:
            failure = Failure("timeout", f"another call with key {key!r} is still executing")
            return SkillOutcome(contract.name, "failed", args, "", None, failure, replayed=True)
        return self._told(contract.name, args, done)

    @staticmethod
    def _told(name: str, args: Mapping[str, Any], done: Executed) -> SkillOutcome:
        told = (
            Failure(done.failure, done.detail, done.message) if done.failure is not None else None
        )
        status: Status = "ok" if done.status == "ok" else "failed"
        return SkillOutcome(name, status, args, done.text, done.result, told, replayed=True)

    def _call(
        self,
        contract: SkillContract,
        args: Mapping[str, Any],
        ctx: CallContext,
        inject: str | None,
        depth: int,
    ) -> SkillOutcome:
        name = contract.name
        guard = self._guards[name]
        started, t0 = time.time(), time.perf_counter()
        violation = self._admits(name, args, ctx)
        if violation is not None:
            failure = Failure(
                "invalid_args",
                violation.detail,
                violation.message,
                violation.missing,
                field=violation.field,
            )
            return self._failed(contract, args, ctx, failure, "invalid", started, t0, depth)
        result, failed = self._guarded(contract, guard, args, ctx, inject)
        if failed is None:
            return self._answered(contract, args, ctx, result, started, t0, depth)
        return self._failed(contract, args, ctx, failed, "failed", started, t0, depth)

    def _guarded(
        self,
        contract: SkillContract,
        guard: ContractGuard,
        args: Mapping[str, Any],
        ctx: CallContext,
        inject: str | None,
    ) -> tuple[Any, Failure | None]:
        name = contract.name
        impl = self.registry.skills.get(name)
        breaker = self.breakers.get(name, self._settings[name])
        if inject == "breaker_open":
            return None, Failure("breaker_open", "breaker forced open (injected)")
        try:
            admission = breaker.admit()
        except BreakerOpenError as exc:
            return None, Failure("breaker_open", f"{exc} (retry in {exc.retry_in_s:.0f} s)")
        t0 = time.perf_counter()
        result: Any = None
        failure: Failure | None = None
        if inject in ("error", "timeout"):
            detail = "raised (injected)" if inject == "error" else "timed out (injected)"
            failure = Failure(inject, detail)
        elif impl is None:
            failure = Failure("error", f"no installed plugin implements skill {name!r}")
        else:
            fn: Callable[..., Any] = impl
            if name in self._contextual:  # by keyword, as its signature asked for
                fn = functools.partial(fn, context=self.skill_context(ctx))
            try:
                ok, value = self._workers.call(fn, dict(args), contract.timeout_s)
            except TimeoutError:
                failure = Failure("timeout", f"no result within {contract.timeout_s:g} s")
            else:
                if ok:
                    result = value
                else:  # the skill's own failure, whatever it is
                    failure = Failure("error", f"{type(value).__name__}: {value}")
        elapsed = time.perf_counter() - t0
        breaker.record(admission, ok=failure is None, elapsed_s=elapsed)
        if failure is not None:
            return None, failure
        if inject == "empty_claim":
            result = {contract.results_key: [], "summary": "已为您找到3份相关文件"}
        elif inject == "bad_output":
            return None, Failure("contract_violation", "output schema: bad output (injected)")
        problem = guard.check_output(result)
        if problem is not None:
            return None, Failure("contract_violation", problem.detail, reflect=problem.reflect)
        return result, None

    def _answered(
        self,
        contract: SkillContract,
        args: Mapping[str, Any],
        ctx: CallContext,
        result: Any,
        started: float,
        t0: float,
        depth: int,
    ) -> SkillOutcome:
        """The skill answered; its protocol may still take over when the turn says the user
        does not want this answer (negations ≥ N, low confidence, an ``expr``)."""
        text, fallback = result_text(result), None
        action = None
        if (
            contract.fallback is not None
            and depth == 0
            and self._may_object(contract)
            and self.fallbacks.applies_after_success(contract.fallback, args, ctx)
        ):
            ran = self.fallbacks.run(
                contract.fallback, contract.name, args, None, ctx, self._call_from_fallback, depth
            )
            if any(s.held for s in ran.steps):
                action = ran.action  # a step applied: the fallback was activated
            if ran.action != "none":
                text, fallback = ran.text, ran
        elapsed = time.perf_counter() - t0
        self._record(CallRecord(contract.name, "ok", started, elapsed, None, "", action, depth))
        return SkillOutcome(contract.name, "ok", args, text, result, None, fallback, elapsed)

    def _may_object(self, contract: SkillContract) -> bool:
        """Has the protocol a step that can apply to a call that succeeded? (Most have none:
        then answering costs no protocol walk.)"""
        assert contract.fallback is not None
        return contract.name in self._objecting

    def _failed(
        self,
        contract: SkillContract,
        args: Mapping[str, Any],
        ctx: CallContext,
        failure: Failure,
        status: Status,
        started: float,
        t0: float,
        depth: int,
    ) -> SkillOutcome:
        fallback = None
        text = failure.message
        if contract.fallback is not None and depth == 0:
            fallback = self.fallbacks.run(
                contract.fallback,
                contract.name,
                args,
                failure,
                ctx,
                self._call_from_fallback,
                depth,
            )
            text = fallback.text
        elapsed = time.perf_counter() - t0
        # a fallback was activated when one of its steps applied, whether or not it answered
        fired = fallback is not None and any(s.held for s in fallback.steps)
        self._record(
            CallRecord(
                contract.name,
                status,
                started,
                elapsed,
                failure.kind,
                failure.detail,
                fallback.action if fired and fallback is not None else None,
                depth,
            )
        )
        return SkillOutcome(
            contract.name, status, args, text or failure.detail, None, failure, fallback, elapsed
        )

    def _call_from_fallback(
        self, name: str, args: Mapping[str, Any], ctx: CallContext, depth: int
    ) -> SkillOutcome:
        return self.call(name, args, ctx, depth=depth)

    def _record(self, record: CallRecord) -> None:
        with self._lock:
            self._records.append(record)
        if self._recorder is not None:
            self._recorder(record)
