"""The frozen AST of the rule DSL.

Every node carries ``span``: character offsets ``(start, end)`` into the expression string, so
that compile errors can point at the exact token, also inside a YAML block scalar. Nodes compare
and hash by value *without* spans (``structure()``), which is what conflict detection needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Literal, TypeAlias

Span = tuple[int, int]


def _span() -> Span:
    return field(default=(0, 0), compare=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Name:
    text: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Regex:
    pattern: str
    flags: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Terms:
    """One string or a list of strings, as written."""

    values: tuple[str, ...]
    span: Span = _span()


# ---- values -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Path:
    root: Name
    parts: tuple[str | int, ...] = ()
    span: Span = _span()

    def dotted(self) -> str:
        out = self.root.text
        for p in self.parts:
            out += f"[{p}]" if isinstance(p, int) else f".{p}"
        return out


@dataclass(frozen=True, slots=True)
class Num:
    value: Decimal
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Str:
    value: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Len:
    subject: Path
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Count:
    extractor: Name
    subject: Path
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Arith:
    op: Literal["+", "-"]
    left: Value
    right: Value
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Value
    span: Span = _span()


Value: TypeAlias = Path | Num | Str | Bool | Len | Count | Arith | Neg


# ---- item predicates (inside every / some / no) ---------------------------------------------


@dataclass(frozen=True, slots=True)
class IMatches:
    regex: Regex
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class ITwin:
    extractor: Name
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IUnit:
    units: Terms | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IDecimals:
    op: str
    count: int
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IValue:
    op: str
    operand: Value
    span: Span = _span()


Target: TypeAlias = Terms | Name  # a Name here is an extractor


@dataclass(frozen=True, slots=True)
class IAdjacent:
    """``followed by X`` / ``preceded by X`` / ``near X``, optionally ``within N`` characters."""

    side: Literal["preceded", "followed", "near"]
    target: Target
    within: int | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IFound:
    """``found in P``: the quantifier's extractor, run on the text(s) at ``P``, finds an item
    of equal value (and unit) there."""

    ground: Path
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IAnd:
    items: tuple[ItemPred, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class IOr:
    items: tuple[ItemPred, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class INot:
    item: ItemPred
    span: Span = _span()


ItemPred: TypeAlias = (
    IMatches | ITwin | IUnit | IDecimals | IValue | IAdjacent | IFound | IAnd | IOr | INot
)


# ---- expressions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unless:
    side: Literal["preceded", "followed"]
    terms: Terms
    within: int
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Contains:
    subject: Path
    mode: Literal["one", "any", "all"]
    terms: Terms
    unless: tuple[Unless, ...] = ()
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Matches:
    subject: Path
    regex: Regex
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Near:
    target: Target
    within: int | None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Mentions:
    subject: Path
    extractor: Name
    near: Near | None = None
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Quantified:
    quant: Literal["every", "some", "no"]
    extractor: Name
    subject: Path
    pred: ItemPred
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Compare:
    op: str
    left: Value
    right: Value
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Member:
    value: Value
    terms: Terms
    span: Span = _span()


CallArg: TypeAlias = Path | Str | Terms | Regex | Num


@dataclass(frozen=True, slots=True)
class Call:
    name: Name
    args: tuple[CallArg, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class And:
    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Or:
    items: tuple[Expr, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Not:
    item: Expr
    span: Span = _span()


Expr: TypeAlias = (
    Contains | Matches | Mentions | Quantified | Compare | Member | Call | And | Or | Not
)


# ---- on_fail ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepairArgNode:
    kind: Literal["string", "strings", "name"]
    value: str | tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Action:
    kind: Literal["block", "escalate", "retry", "fix", "flag"]
    repair: Name | None = None
    args: tuple[RepairArgNode, ...] = ()
    span: Span = _span()


Node: TypeAlias = Expr | Value | ItemPred | Action


def children(node: object) -> list[object]:
    """Direct AST children, for generic walks (type checks, literal collection)."""
    out: list[object] = []
    for f in fields(node):  # type: ignore[arg-type]
        if f.name == "span":
            continue
        value = getattr(node, f.name)
        if isinstance(value, tuple):
            out.extend(v for v in value if hasattr(v, "span"))
        elif hasattr(value, "span"):
            out.append(value)
    return out


def walk(node: object) -> list[object]:
    out = [node]
    for child in children(node):
        out.extend(walk(child))
    return out
