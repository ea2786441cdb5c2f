"""What a skill plugin implements: the code behind a skill contract (``skills/<name>.yaml``,
ARCHITECTURE §8), checked at registration (``isinstance``) so that a plugin returning the
wrong kind of object is reported by name instead of failing deep inside a turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Skill(Protocol):
    """The implementation of a skill contract (``skills/<name>.yaml``) of the same ``name``.

    Charter validates ``args`` against the contract's ``input_schema`` and constraints before the
    call and the result against its ``output_schema`` after it; the call runs with the contract's
    timeout, behind its circuit breaker. Raise to signal failure: the fallback protocol runs.

    A skill that keeps state between calls (a demo ledger numbering its transfers) may also
    define ``fresh() -> Skill``, a new instance in its first state: each conversation test
    (``charter test``) calls it, so the numbers a test pins do not depend on the tests before.
    """

    name: str
    description: str

    def __call__(self, args: Mapping[str, Any]) -> Any: ...
