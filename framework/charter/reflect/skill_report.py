"""What a skill case's call did, for ``charter test``'s reports (``charter.reflect.testing``):
the arguments, the fault injected, the status, the failure and where the skill raised, what it
returned, the text and the reply — as a JSON document, and as the lines a failing case prints
under its problems."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from charter.compile.specs.skills import SkillCase

OUTPUT_SHOWN = 400  # characters of a skill's output a failing case prints (JSON has it whole)


def skill_call(case: SkillCase, got: Any) -> dict[str, Any]:
    """What a skill case's call did, for the reports: the arguments, the fault injected, the
    status, the failure (kind, detail, where the skill raised), what the skill returned
    (``returned`` false: it did not return — not called, raised, timed out), the text and
    the reply."""
    outcome: Any = getattr(got, "outcome", got)
    f = outcome.failure
    return {
        "args": dict(outcome.args),
        "inject": case.inject,
        "status": outcome.status,
        "failure": None
        if f is None
        else {"kind": f.kind, "detail": f.detail, "raised_at": getattr(got, "raised_at", None)},
        "returned": bool(getattr(got, "returned", False)),
        "output": _plain(getattr(got, "output", None)),
        "fallback": outcome.fallback.action if outcome.fallback is not None else None,
        "text": outcome.text,
        "reply": getattr(got, "reply", None),
    }


def skill_call_lines(call: Mapping[str, Any]) -> tuple[str, ...]:
    """A failing skill case's call, line by line under its problems: the contract violation
    or the exception, the fault injected, the arguments and what the skill returned."""
    out = []
    f = call["failure"]
    if f is not None:
        out.append(f"failure: {f['kind']}: {f['detail']}")
        if f.get("raised_at"):
            out.append(f"  raised at {f['raised_at']}")
    if call.get("inject"):
        out.append(f"inject: {call['inject']}")
    out.append(f"args: {_json_text(call['args'])}")
    if call.get("returned"):
        text = _json_text(call["output"])
        if len(text) > OUTPUT_SHOWN:
            text = text[:OUTPUT_SHOWN] + f"… ({len(text) - OUTPUT_SHOWN} more characters)"
        out.append(f"output: {text}")
    else:
        out.append("output: (none)")
    return tuple(out)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError):  # keys that do not sort, a value that holds itself
        return repr(value)


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it (what a skill returned may be any object): its ``repr``
    where it is no JSON."""
    try:
        plain: Any = json.loads(json.dumps(value, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):
        return repr(value)
    return plain


__all__ = ["OUTPUT_SHOWN", "skill_call", "skill_call_lines"]
