"""Compile stages 2 and 3: resolve names, then type-check, reporting every problem found."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import regex

from charter.compile.primitives import compile_regex, regex_flags
from charter.compile.redos import catastrophe, catastrophic
from charter.contracts.registry import Registry
from charter.contracts.rules import Extractor, RepairArg
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning
from charter.dsl import ast as A

RULE_SUBJECTS = ("output", "input", "context", "goal", "skill", "memory")
# words that start an item check: seen as a subject when parentheses are missing
_ITEM_WORDS = frozenset(
    {"decimals", "value", "has", "matches", "followed", "preceded", "near", "found"}
)
Locate = Callable[[A.Span], Location]


class Checker:
    """Walks one expression; ``locate`` maps a span of the DSL text to the YAML file."""

    def __init__(
        self,
        registry: Registry,
        constants: Mapping[str, Any],
        locate: Locate,
        subjects: tuple[str, ...] = RULE_SUBJECTS,
    ) -> None:
        self.registry = registry
        self.constants = constants
        self.locate = locate
        self.subjects = subjects
        self.diagnostics: list[Diagnostic] = []

    def _err(self, code: str, message: str, span: A.Span, hint: str = "") -> None:
        self.diagnostics.append(error(code, message, self.locate(span), hint))

    # ---- names ------------------------------------------------------------------------------

    def extractor(self, name: A.Name) -> Extractor | None:
        found = self.registry.extractors.get(name.text)
        if found is None:
            hint = did_you_mean(name.text, self.registry.extractors)
            if not self.registry.extractors:
                hint = "no extractors are installed; install charter-zh"
            self._err("CH102", f"unknown extractor '{name.text}'", name.span, hint)
        return found

    def subject(self, path: A.Path) -> bool:
        root = path.root.text
        if root == "pack":
            self._err(
                "CH101",
                "'pack' constants are not a text to check",
                path.root.span,
                "use output, input or a context path",
            )
            return False
        if root not in self.subjects:
            hint = did_you_mean(root, self.subjects)
            if root in _ITEM_WORDS:
                hint = (
                    "a compound item check needs parentheses: "
                    'every money in output (has unit "元" and decimals == 2)'
                )
            self._err("CH101", f"unknown subject '{root}'", path.root.span, hint)
            return False
        if root in ("output", "input") and path.parts:
            self._err(
                "CH101",
                f"'{root}' is a text and has no field '{path.dotted()[len(root) :]}'",
                path.span,
                f"write just '{root}'",
            )
            return False
        return True

    def constant(self, path: A.Path) -> Any:
        cur: Any = self.constants
        walked = "pack"
        for part in path.parts:
            if isinstance(cur, Mapping) and part in cur:
                cur = cur[part]
                walked += f".{part}"
                continue
            options = list(cur) if isinstance(cur, Mapping) else []
            self._err(
                "CH108",
                f"unknown pack constant '{walked}.{part}'",
                path.span,
                did_you_mean(str(part), options) if options else f"'{walked}' has no fields",
            )
            return None
        if not path.parts:
            self._err(
                "CH108",
                "'pack' alone is not a value",
                path.span,
                "name a constant, e.g. pack.thresholds.uncertainty",
            )
            return None
        return cur

    # ---- types ------------------------------------------------------------------------------

    def value(self, node: A.Value) -> str:
        """The static type: number, string, bool, text or any (a context value)."""
        if isinstance(node, A.Num):
            return "number"
        if isinstance(node, A.Str):
            return "string"
        if isinstance(node, A.Bool):
            return "bool"
        if isinstance(node, A.Len):
            self.subject(node.subject)
            return "number"
        if isinstance(node, A.Count):
            self.extractor(node.extractor)
            self.subject(node.subject)
            return "number"
        if isinstance(node, A.Neg | A.Arith):
            operands = [node.operand] if isinstance(node, A.Neg) else [node.left, node.right]
            for op in operands:
                t = self.value(op)
                if t not in ("number", "any"):
                    self._err("CH106", f"arithmetic needs numbers, not a {t}", op.span)
            return "number"
        if isinstance(node, A.Path):
            if node.root.text == "pack":
                const = self.constant(node)
                if isinstance(const, bool):
                    return "bool"
                if isinstance(const, int | float):
                    return "number"
                return "string" if isinstance(const, str) else "any"
            if not self.subject(node):
                return "any"
            return "text" if node.root.text in ("output", "input") else "any"
        raise TypeError(node)

    def regex(self, node: A.Regex) -> None:
        try:
            compile_regex(node)
        except (regex.error, ValueError, OverflowError) as exc:  # ValueError: clashing flags
            pos = getattr(exc, "pos", None)
            pos = pos if isinstance(pos, int) else 0
            start = node.span[0] + 1 + pos
            self._err(
                "CH105",
                f"invalid regular expression: {getattr(exc, 'msg', exc)}",
                (start, start + 1),
                "regular expressions use Python's `regex` syntax; escape / as \\/",
            )
            return
        for found in catastrophic(node.pattern, regex_flags(node.flags)):
            start = node.span[0] + 1 + found.offset
            self.diagnostics.append(
                warning("CH112", *catastrophe(found, self.locate((start, start + 1))))
            )

    def terms(self, terms: A.Terms) -> None:
        if not terms.values:
            self._err("CH107", "empty list of strings", terms.span, "list at least one string")
        elif "" in terms.values:
            self._err(
                "CH107",
                "empty string in a list of terms",
                terms.span,
                "an empty string would match everywhere",
            )

    def expr(self, node: A.Expr) -> None:
        if isinstance(node, A.And | A.Or):
            for item in node.items:
                self.expr(item)
        elif isinstance(node, A.Not):
            self.expr(node.item)
        elif isinstance(node, A.Contains):
            self.subject(node.subject)
            self.terms(node.terms)
            for u in node.unless:
                self.terms(u.terms)
        elif isinstance(node, A.Matches):
            self.subject(node.subject)
            self.regex(node.regex)
        elif isinstance(node, A.Mentions):
            self.subject(node.subject)
            self.extractor(node.extractor)
            if node.near is not None:
                self.target(node.near.target)
        elif isinstance(node, A.Quantified):
            self.subject(node.subject)
            ext = self.extractor(node.extractor)
            self.item(node.pred, ext, node.extractor.text, node.subject)
        elif isinstance(node, A.Compare):
            self.compare(node)
        elif isinstance(node, A.Member):
            t = self.value(node.value)
            if t in ("number", "bool"):
                self._err("CH106", f"'in [...]' tests a string, not a {t}", node.value.span)
            self.terms(node.terms)
        elif isinstance(node, A.Call):
            self.call(node)

    def compare(self, node: A.Compare) -> None:
        lt, rt = self.value(node.left), self.value(node.right)
        for t, side in ((lt, node.left), (rt, node.right)):
            if t == "text" and isinstance(side, A.Path):
                name = side.root.text
                self._err(
                    "CH106", f"'{name}' is a text; compare len({name}) or use contains", side.span
                )
                return
        known = {lt, rt} - {"any"}
        if len(known) == 2:
            self._err("CH106", f"cannot compare a {lt} with a {rt}", node.span)
        elif "bool" in known and node.op not in ("==", "!="):
            self._err(
                "CH106", f"'{node.op}' does not apply to true/false", node.span, "use == or !="
            )

    def target(self, target: A.Target) -> None:
        if isinstance(target, A.Name):
            self.extractor(target)
        else:
            self.terms(target)

    def item(self, node: A.ItemPred, ext: Extractor | None, ext_name: str, subject: A.Path) -> None:
        if isinstance(node, A.IAnd | A.IOr):
            for i in node.items:
                self.item(i, ext, ext_name, subject)
        elif isinstance(node, A.INot):
            self.item(node.item, ext, ext_name, subject)
        elif isinstance(node, A.IFound):
            self.found(node, ext_name, subject)
        elif isinstance(node, A.IMatches):
            self.regex(node.regex)
        elif isinstance(node, A.IAdjacent):
            self.target(node.target)
        elif isinstance(node, A.ITwin):
            twin = self.extractor(node.extractor)
            if ext and twin and (ext.value_kind != "number" or twin.value_kind != "number"):
                self._err(
                    "CH106",
                    f"'has twin' compares numbers, but '{ext_name}' gives "
                    f"{ext.value_kind} and '{node.extractor.text}' gives "
                    f"{twin.value_kind}",
                    node.span,
                )
        elif isinstance(node, A.IUnit):
            if node.units is not None:
                self.terms(node.units)
            if ext and not ext.has_units:
                self._err("CH106", f"'{ext_name}' items have no unit", node.span)
        elif isinstance(node, A.IDecimals | A.IValue):
            what = "decimals" if isinstance(node, A.IDecimals) else "a numeric value"
            if ext and ext.value_kind != "number":
                self._err(
                    "CH106",
                    f"'{ext_name}' items have no {what} (they are {ext.value_kind}s)",
                    node.span,
                )
            if isinstance(node, A.IValue):
                t = self.value(node.operand)
                if t not in ("number", "any"):
                    self._err("CH106", f"cannot compare a number with a {t}", node.operand.span)

    def found(self, node: A.IFound, ext_name: str, subject: A.Path) -> None:
        """``found in P``: P is a subject; looking in the items' own text proves nothing."""
        if not self.subject(node.ground) or node.ground != subject:
            return
        where = subject.dotted()
        if where in ("output", "input"):
            hint = (
                f"to require one, write some {ext_name} in {where}; to require a phrase, "
                f'write {where} contains "..."; to ground the items, name where they come '
                "from: found in context.<path>"
            )
        else:
            hint = "name the texts the items must come from: found in context.<path>"
        self._err(
            "CH106",
            f"'found in {where}' looks in the text the {ext_name} items come from, "
            "so every item is found",
            node.ground.span,
            hint,
        )

    def call(self, node: A.Call) -> None:
        pred = self.registry.predicates.get(node.name.text)
        if pred is None:
            hint = did_you_mean(node.name.text, self.registry.predicates)
            if not self.registry.predicates:
                hint = "no plugin predicates are installed"
            if node.name.text in self.registry.extractors:
                hint = f"'{node.name.text}' is an extractor: write output mentions {node.name.text}"
            self._err("CH103", f"unknown predicate '{node.name.text}'", node.name.span, hint)
            return
        usage = f"{pred.name}(subject{''.join(', ' + p for p in pred.params)})"
        if not node.args or not isinstance(node.args[0], A.Path):
            self._err("CH107", f"'{pred.name}' needs a subject first", node.span, f"use {usage}")
            return
        self.subject(node.args[0])
        rest = node.args[1:]
        if len(rest) != len(pred.params):
            self._err(
                "CH107",
                f"'{pred.name}' takes {len(pred.params)} argument(s) after the "
                f"subject, got {len(rest)}",
                node.span,
                f"use {usage}",
            )
            return
        kinds = {"string": A.Str, "strings": A.Terms, "number": A.Num, "regex": A.Regex}
        kinds["value"] = A.Path  # reached only when the argument is not a path
        for arg, kind in zip(rest, pred.params, strict=True):
            if kind == "name":
                ok = isinstance(arg, A.Path) and not arg.parts
            elif kind == "value" and isinstance(arg, A.Path):
                if arg.root.text == "pack":
                    self.constant(arg)
                else:
                    self.subject(arg)  # CH101 with a did-you-mean for an unknown root
                continue
            else:
                ok = isinstance(arg, kinds[kind])
            if not ok:
                self._err(
                    "CH107", f"argument of '{pred.name}' must be a {kind}", arg.span, f"use {usage}"
                )
            elif isinstance(arg, A.Regex):
                self.regex(arg)

    def action(self, node: A.Action) -> None:
        if node.kind != "fix" or node.repair is None:
            return
        repair = self.registry.repairs.get(node.repair.text)
        if repair is None:
            self._err(
                "CH104",
                f"unknown repair '{node.repair.text}'",
                node.repair.span,
                did_you_mean(node.repair.text, self.registry.repairs),
            )
            return
        args = [RepairArg(a.kind, a.value) for a in node.args]
        problem = repair.check_args(args, self.registry.extractors)
        if problem:
            self._err("CH107", f"repair '{repair.name}' {problem}", node.span)


def check_expr(
    text: str,
    locate: Locate,
    what: str,
    registry: Registry,
    constants: Mapping[str, Any],
    subjects: tuple[str, ...],
    diagnostics: list[Diagnostic],
) -> A.Expr | None:
    """Parse and check a DSL expression written inside a pack file other than rules.yaml (a
    goal trigger, a skill constraint, a fallback condition); ``locate`` maps a span of
    ``text`` to the file. Problems go to ``diagnostics``; None when there were any."""
    from charter.dsl.parser import DSLSyntaxError, parse_expr

    try:
        node = parse_expr(text)
    except DSLSyntaxError as exc:
        diagnostics += [
            error(e.code, f"{e.kind} in {what}: {e.message}", locate((e.start, e.end)), e.hint)
            for e in exc.every()
        ]
        return None
    checker = Checker(registry, constants, locate, subjects)
    checker.expr(node)
    diagnostics.extend(checker.diagnostics)
    return None if any(d.is_error for d in checker.diagnostics) else node  # CH112 warns
