"""What every part of the goals stage shares: the goals file (located, for diagnostics, and
read as its typed model), the registry, the diagnostics list, and how a problem at a place in
the file is reported."""

from __future__ import annotations

from charter.contracts.registry import Registry
from charter.diagnostics import Diagnostic, error
from charter.pack.typed.goals import GoalsFile
from charter.pack.yamlsrc import LocatedDoc, Pointer


class GoalFileStage:
    doc: LocatedDoc
    file: GoalsFile
    registry: Registry
    diagnostics: list[Diagnostic]

    def _err(self, code: str, message: str, ptr: Pointer, hint: str = "") -> None:
        self.diagnostics.append(error(code, message, self.doc.loc(ptr), hint))
