"""Running a contract's ``tests:`` for ``charter test``: each case on a fresh breaker (an
injected failure of one case must not open the breaker for the next) and with a throw-away
ticket database (a handoff case opens a real ticket, in a temporary file)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import TracebackType

from charter.compile.compiled import CompiledPack
from charter.compile.specs.skills import SkillCase
from charter.contracts.registry import Registry
from charter.skills.breaker import BreakerRegistry
from charter.skills.runner import SkillOutcome, SkillRunner
from charter.skills.tickets import TicketStore


class SkillCaseRunner:
    def __init__(self, pack: CompiledPack, registry: Registry) -> None:
        assert pack.skills is not None
        self._tmp = tempfile.TemporaryDirectory(prefix="charter-skill-cases-")
        self.tickets = TicketStore(f"sqlite:///{Path(self._tmp.name) / 'tickets.db'}")
        self.runner = SkillRunner(
            pack.skills, registry, pack=pack.name, constants=pack.constants, tickets=self.tickets
        )

    def call(self, skill: str, case: SkillCase) -> SkillOutcome:
        self.runner.breakers = BreakerRegistry()
        return self.runner.call(skill, case.args, case.context, inject=case.inject)

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
