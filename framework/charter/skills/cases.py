"""Running a contract's ``tests:`` for ``charter test``: each case on a fresh breaker (an
injected failure of one case must not open the breaker for the next) and with a throw-away
ticket database (a handoff case opens a real ticket, in a temporary file).

A case's call is watched, so a failing case can say why: what the skill returned (before the
output checks refused it) or where it raised, and the reply the agent would tell for the
outcome — the contract's ``reply:`` (the pack's result template) over the result, else its
summary; the contract's message for refused arguments; the fallback protocol's text.
"""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from charter.compile.compiled import CompiledPack
from charter.compile.response_spec import default_spec
from charter.compile.specs.skills import SkillCase
from charter.compile.teller import Teller
from charter.contracts.registry import Registry
from charter.contracts.skills import Refused, Skill, SkillContext, takes_context
from charter.skills.breaker import BreakerRegistry
from charter.skills.runner import SkillOutcome, SkillRunner
from charter.skills.tickets import TicketStore


@dataclass
class _Seen:
    """What one call of a skill did: returned ``output``, or raised at ``raised_at``."""

    returned: bool = False
    output: Any = None
    raised_at: str | None = None


class _Watched:
    """A registered skill whose calls are recorded in the ``_Seen`` current when they start
    (a call that overruns its timeout writes to its own case's record, never the next's)."""

    def __init__(self, skill: Skill) -> None:
        self.skill = skill
        self.name = skill.name
        self.description = skill.description
        self.seen = _Seen()
        self._contextual = takes_context(skill)

    def __call__(self, args: Mapping[str, Any], *, context: SkillContext | None = None) -> Any:
        seen = self.seen
        try:
            if self._contextual and context is not None:
                value = self.skill(args, context=context)  # type: ignore[call-arg]
            else:
                value = self.skill(args)
        except BaseException as exc:
            seen.raised_at = raised_at(exc)
            raise
        seen.returned, seen.output = True, value
        return value

    def refuses(self, args: Mapping[str, Any], *, context: SkillContext) -> Refused | None:
        own = getattr(self.skill, "refuses", None)
        refused: Refused | None = own(args, context=context) if callable(own) else None
        return refused


def raised_at(exc: BaseException) -> str | None:
    """Where ``exc`` was raised: ``path:line, in function`` of the innermost frame (the path
    relative to the working directory when it is below it)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    last = frames[-1]
    path = last.filename
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        rel = path
    shown = rel if not rel.startswith("..") else path
    return f"{shown}:{last.lineno}, in {last.name}"


@dataclass(frozen=True)
class SkillCaseCall:
    """One case's call as ``charter test`` reports it: the ``outcome``; what the skill
    returned (``returned``: it did, ``output`` holds it — the result the contract checked,
    before its output checks) or where it raised; and the ``reply`` the agent would tell
    (None when no text of the contract tells it: a failure no fallback step answered gets the
    intent's ``skill_failed`` reply)."""

    outcome: SkillOutcome
    returned: bool = False
    output: Any = None
    raised_at: str | None = None
    reply: str | None = None


class SkillCaseRunner:
    def __init__(self, pack: CompiledPack, registry: Registry) -> None:
        assert pack.skills is not None
        self.pack = pack
        self._watched = {n: _Watched(s) for n, s in registry.skills.items()}
        self.registry = replace(registry, skills={**registry.skills, **self._watched})
        self._tmp = tempfile.TemporaryDirectory(prefix="charter-skill-cases-")
        self.tickets = TicketStore(f"sqlite:///{Path(self._tmp.name) / 'tickets.db'}")
        self.runner = SkillRunner(
            pack.skills,
            self.registry,
            pack=pack.name,
            constants=pack.constants,
            tickets=self.tickets,
        )
        self._teller: Teller | None = None

    def call(self, skill: str, case: SkillCase) -> SkillCaseCall:
        self.runner.breakers = BreakerRegistry()
        watched = self._watched.get(skill)
        seen = _Seen()
        if watched is not None:
            watched.seen = seen
        outcome = self.runner.call(skill, case.args, case.context, inject=case.inject)
        return SkillCaseCall(
            outcome, seen.returned, seen.output, seen.raised_at, self.reply(outcome)
        )

    def reply(self, outcome: SkillOutcome) -> str | None:
        """What the agent tells for ``outcome`` (``charter.compose.events`` and the
        composer): a result by the contract's ``reply:`` — the first alternative that applies,
        the first text of a rotation — over the result, ``args``, ``found`` and empty
        ``slots`` (no goal: a template reading ``goal`` or ``intent`` does not apply), else the
        result's summary; refused arguments by the contract's message; a failure by the
        fallback step that answered, else None. The text before the pack's rules check it."""
        if outcome.status == "ok":
            result = outcome.result if isinstance(outcome.result, Mapping) else {}
            contract = self.pack.skills.contract(outcome.skill) if self.pack.skills else None
            key = contract.results_key if contract is not None else "results"
            found = result.get(key)
            items = (
                tuple(i for i in found if isinstance(i, Mapping)) if isinstance(found, list) else ()
            )
            scope = {
                "slots": {},
                **result,
                "args": dict(outcome.args),
                "result": dict(result),
                "found": len(items),
            }
            teller = self.teller()
            told = teller.tell(teller.spec.result(outcome.skill), scope, items, 0)
            if told is not None:
                return told.text
            return outcome.text or None
        if outcome.status == "invalid":
            return outcome.text
        fb = outcome.fallback
        return fb.text if fb is not None and fb.action != "none" else None

    def teller(self) -> Teller:
        if self._teller is None:
            spec = self.pack.responses or default_spec()
            self._teller = Teller(spec, self.registry, self.pack.constants)
        return self._teller

    def close(self) -> None:
        self.runner.close()
        self.tickets.dispose()
        self._tmp.cleanup()

    def __enter__(self) -> SkillCaseRunner:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
