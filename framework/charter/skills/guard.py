"""The checks around a skill call, built once per contract and process from the compiled
contract: arguments against the input schema and the constraints, with the contract's
user-facing messages; the result against the output schema, ``max_results`` and the seed's
post-check (seed 001 §4.2: an empty result whose text claims success — "已为您找到3份文件" — is
a contract violation that must trigger reflection, not an answer).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
import jsonschema_rs
import regex

from charter.compile.build import Test
from charter.compile.program import Program
from charter.compile.specs.skills import SkillContract
from charter.contracts.registry import Registry
from charter.contracts.skills import Refused, SkillContext
from charter.dsl import ast as A
from charter.text.patterns import PatternTimeout, bounded

DEFAULT_INVALID = "参数{field}不符合要求，请调整后重试"
DEFAULT_INVALID_ALL = "参数不符合要求，请调整后重试"
# a result text that says something was found or done (the post-check looks for these only
# when the result holds nothing); a count must not be zero, and a negation before the verb
# (没有为您找到, 未能找到) makes it an honest "nothing"
SUCCESS_CLAIM = re.compile(
    r"(?<![没未不无])(?<!未能)(?<!没能)(?<!没有)"
    r"(为您(找到|查到|办理|预约|预订)|找到了?\s*(?!0\s*[份条个项篇])[1-9一二三四五六七八九十两几][0-9一二三四五六七八九十百]*\s*[份条个项篇]"
    r"|查询成功|已找到|已完成|已办理|已预约|预约成功|办理成功|found\s+[1-9]\d*|successfully)",
    re.I,
)
_TEXT_KEYS = ("summary", "message", "text", "answer", "note")
_REQUIRED = re.compile(r"^'([^']+)' is a required property$")


@dataclass(frozen=True)
class Violation:
    """Why arguments were refused: the user-facing ``message``, the argument it concerns,
    the schema keyword or ``constraint``, and the arguments missing (for ``missing_slot``)."""

    message: str
    field: str
    keyword: str
    detail: str
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputProblem:
    detail: str
    reflect: bool = False  # the empty-result-claims-success post-check


def _dotted(path: Any) -> str:
    return ".".join(str(p) for p in path if not isinstance(p, int))


def _bounded_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """jsonschema's ``pattern`` with a time bound: a contract's pattern runs on arguments a
    user or the model chose, and jsonschema's own uses ``re`` (jsonschema-rs, which answers
    first, uses a linear-time engine). A pattern that runs out of time does not match."""
    if not validator.is_type(instance, "string"):
        return
    try:
        found = bounded(pattern).search(instance)
    except (PatternTimeout, regex.error):
        found = None
    if found is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# the reference validator, its `pattern` bounded in time
_Validator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, {"pattern": _bounded_pattern}
)


class ContractGuard:
    """The compiled checks of one contract."""

    def __init__(self, contract: SkillContract, registry: Registry, constants: Mapping[str, Any]):
        self.contract = contract
        # Two validators of the same schema: jsonschema-rs answers "valid?" in well under a
        # microsecond, which is every call's question; jsonschema (the reference
        # implementation) explains an invalid instance, which is rare and worth its ~30 µs.
        checker = jsonschema.FormatChecker()
        self._input = _Validator(contract.input_schema, format_checker=checker)
        self._output = _Validator(contract.output_schema, format_checker=checker)
        self._fast_input = jsonschema_rs.Draft202012Validator(
            contract.input_schema, validate_formats=True
        )
        self._fast_output = jsonschema_rs.Draft202012Validator(
            contract.output_schema, validate_formats=True
        )
        self._program = Program(
            ((i, c.check) for i, c in enumerate(contract.constraints)), registry, constants
        )
        self._constraints: list[tuple[Test, frozenset[str], str, str, tuple[str, ...]]] = [
            (self._program[i], _arg_names(c.check), c.message, c.source, c.asks)
            for i, c in enumerate(contract.constraints)
        ]
        # the skill's own check of what the contract cannot know (the turn's day, its data)
        refuses = getattr(registry.skills.get(contract.name), "refuses", None)
        self.refuses: Callable[..., Refused | None] | None = refuses if callable(refuses) else None

    def check_args(
        self, args: Mapping[str, Any], context: SkillContext | None = None
    ) -> Violation | None:
        """The first problem with ``args`` (schema first, then constraints, then the skill's
        own ``refuses`` with ``context``, when it has one and a context is given), or None.

        A constraint applies only when every argument it reads was given: ``year_range`` is
        optional, and "若指定，首尾年份差不得大于3" says nothing when it is not."""
        errors = [] if self._fast_input.is_valid(args) else self._errors(args)
        if errors:
            missing = tuple(
                m[1]
                for e in errors
                if e.validator == "required" and (m := _REQUIRED.match(e.message))
            )
            first = errors[0]
            prop = _dotted(first.path)
            keyword = str(first.validator)
            if keyword == "required" and missing:
                prop = ".".join(p for p in (prop, missing[0]) if p)
            message = self.contract.message_for(prop, keyword) or (
                DEFAULT_INVALID.format(field=prop) if prop else DEFAULT_INVALID_ALL
            )
            return Violation(message, prop, keyword, first.message, missing)
        env = self._program.env(context={"args": args})
        for test, names, message, source, asks in self._constraints:
            if names and not all(n in args for n in names):
                continue
            try:
                held = test(env)
            except (TypeError, ValueError, IndexError, KeyError, ArithmeticError):
                held = False  # a constraint over values it cannot compute does not hold
            if not held:
                field = ", ".join(asks or sorted(names))
                return Violation(message, field, "constraint", source)
        if self.refuses is None or context is None:
            return None
        try:
            refused = self.refuses(args, context=context)
        except Exception:  # a check that cannot answer refuses nothing: the call will tell
            return None
        if refused is None:
            return None
        return Violation(
            refused.message, ", ".join(refused.asks), "skill", f"refused by {self.contract.name}"
        )

    def _errors(self, args: Mapping[str, Any]) -> list[Any]:
        found = sorted(self._input.iter_errors(args), key=lambda e: (list(e.path), e.validator))
        if found:
            return found
        # the two disagree only on a format jsonschema cannot check without an optional
        # package: report what jsonschema-rs found, in jsonschema's terms
        return [_Rs(e) for e in self._fast_input.iter_errors(args)][:1]

    def check_output(self, result: Any) -> OutputProblem | None:
        try:
            fast = self._fast_output.is_valid(result)
        except ValueError:  # an object JSON has no type for (jsonschema-rs cannot read it)
            fast = None
        if fast:
            error = None
        else:
            error = next(iter(self._output.iter_errors(result)), None)
            if error is None and fast is not None:
                error = next((_Rs(e) for e in self._fast_output.iter_errors(result)), None)
        if error is not None:
            where = _dotted(error.path) or "result"
            return OutputProblem(f"output schema: {where}: {error.message}")
        if not isinstance(result, Mapping):
            return None
        items = result.get(self.contract.results_key)
        if isinstance(items, list):
            cap = self.contract.max_results
            if cap is not None and len(items) > cap:
                return OutputProblem(f"{len(items)} results, the contract allows {cap}")
            if not items:
                claim = _claim(result)
                if claim is not None:
                    return OutputProblem(f"no results, but the result says {claim!r}", reflect=True)
        return None

    def count(self, result: Any) -> int | None:
        if isinstance(result, Mapping) and isinstance(result.get(self.contract.results_key), list):
            return len(result[self.contract.results_key])
        return None


class _Rs:
    """A jsonschema-rs error with the attributes of a jsonschema one that the guard reads."""

    def __init__(self, error: Any) -> None:
        self.path = list(error.instance_path)
        self.validator = str(error.schema_path[-1]) if error.schema_path else "format"
        self.message = str(error.message)


def _claim(result: Mapping[str, Any]) -> str | None:
    for key in _TEXT_KEYS:
        text = result.get(key)
        if isinstance(text, str):
            m = SUCCESS_CLAIM.search(text)
            if m is not None:
                return text
    return None


def _arg_names(node: A.Expr) -> frozenset[str]:
    return frozenset(
        str(sub.parts[0])
        for sub in A.walk(node)
        if isinstance(sub, A.Path) and sub.root.text == "args" and sub.parts
    )
