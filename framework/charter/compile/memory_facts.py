"""Compile stage ``memory``, the facts part: memory.yaml's ``slot_facts`` (how slot values
are stored as facts) and ``statements`` (what the user says of themselves that is remembered).

Beyond the schema: a rule or statement naming a memory type the policy does not have (CH313:
it would be stored as a plain L0 fact valid for ever, whatever was meant); a statement phrase
with more than one ``{X}``, none and no ``value:``, or ``values:`` with nothing to restrict
(CH314); a statement's ``roles`` that disagree with ``roles:`` for its key (CH315). The
phrases become regular expressions here, once: literal text escaped, ``{X}`` a group
``value``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from charter.compile.specs import memory as P
from charter.diagnostics import Diagnostic, did_you_mean, error
from charter.pack.typed.memory import FactRule, MemoryFile, SlotFacts, Statement
from charter.pack.yamlsrc import LocatedDoc

PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
# what {X} may read when no values: are listed: up to 30 characters of one clause
FREE_VALUE = r"[^\s，。！？；：、,.!?;:“”\"'（）()]{1,30}"
Pointer = tuple[str | int, ...]


def _validity(text: str | None) -> P.Validity | None:
    # a number of more digits than the schema allows is no validity (int() refuses some)
    if text is None or re.search(r"[0-9]{7}", text):
        return None
    return P.Validity.parse(text)


def _confidence(value: float | None, default: float) -> float:
    return value if value is not None and 0 <= value <= 1 else default


class _Facts:
    def __init__(self, doc: LocatedDoc, types: Mapping[str, P.MemoryType]) -> None:
        self.doc = doc
        self.types = types
        self.diags: list[Diagnostic] = []

    def rule(self, raw: FactRule | Statement, ptr: Pointer, default: P.FactRule) -> P.FactRule:
        """A slot fact rule, or a statement's, over ``default``."""
        kind = raw.type
        if kind is not None and kind not in self.types:
            self.diags.append(
                error(
                    "CH313",
                    f"unknown memory type '{kind}': its facts would be plain L0 facts kept "
                    "for ever",
                    self.doc.loc((*ptr, "type")),
                    did_you_mean(kind, self.types)
                    or f"declare it under types: (types there are: {', '.join(self.types)})",
                )
            )
        remember = raw.remember if isinstance(raw, FactRule) else None
        # set and not false: true (a value the schema rejected included); unset: the default
        given = isinstance(raw, FactRule) and "remember" in raw.model_fields_set
        return P.FactRule(
            type=kind if kind is not None else default.type,
            level=raw.level if raw.level in P.LEVELS else default.level,
            validity=_validity(raw.validity) or default.validity,
            confidence=_confidence(raw.confidence, default.confidence),
            remember=remember is not False if given else default.remember,
        )

    def slot_facts(self, raw: SlotFacts) -> P.SlotFacts:
        default = self.rule(raw.default, ("slot_facts", "default"), P.FactRule())
        keys = {
            k: self.rule(v if v is not None else FactRule(), ("slot_facts", "keys", k), default)
            for k, v in raw.keys.items()
        }
        origins = dict(P.DEFAULT_ORIGINS)
        for name in P.ORIGINS:
            spec = getattr(raw.origins, name)  # an origin left out reads as every default
            base = P.DEFAULT_ORIGINS[name]
            origins[name] = P.SlotOrigin(
                _confidence(spec.confidence, base.confidence),
                _validity(spec.validity) or base.validity,
            )
        return P.SlotFacts(default=default, keys=keys, origins=origins)

    def statement(self, raw: Statement, n: int) -> P.Statement | None:
        ptr: Pointer = ("statements", n)
        key = raw.key
        listed = isinstance(raw.pattern, tuple)  # a list of phrases: a report points into it
        phrases = raw.pattern if isinstance(raw.pattern, tuple) else (raw.pattern,)
        if key is None or not phrases:
            return None  # the schema reported it
        values = raw.values
        fixed = raw.value
        patterns: list[str] = []
        for k, phrase in enumerate(phrases):
            where = (*ptr, "pattern", k) if listed else (*ptr, "pattern")
            holes = PLACEHOLDER.findall(phrase)
            why = ""
            if len(holes) > 1:
                why = f"the phrase '{phrase}' has {len(holes)} placeholders; a statement reads one"
            elif not holes and fixed is None:
                why = f"the phrase '{phrase}' has no {{X}} and the statement no value: to store"
            elif not holes and values:
                why = f"the phrase '{phrase}' has no {{X}} for values: to restrict"
            elif not holes and PLACEHOLDER.search(fixed or ""):
                why = f"value: names {{X}} but the phrase '{phrase}' reads none"
            if why:
                self.diags.append(
                    error(
                        "CH314",
                        f"statement '{key}': {why}",
                        self.doc.loc(where),
                        "write the phrase with one {X} where the value is (我对{X}过敏), "
                        "or without one and a fixed value: (我怀孕了, value: 怀孕)",
                    )
                )
                continue
            patterns.append(compile_phrase(phrase, values))
        if not patterns:
            return None
        default = P.FactRule(type=key if key in self.types else "fact")
        return P.Statement(
            key=key,
            patterns=tuple(patterns),
            value=PLACEHOLDER.sub("{value}", fixed) if fixed is not None else "{value}",
            rule=self.rule(raw, ptr, default),
            intent=raw.intent,
            consent=raw.consent,
        )

    def roles(
        self,
        statements: list[tuple[int, P.Statement, tuple[str, ...]]],
        declared: Mapping[str, tuple[str, ...]],
    ) -> dict[str, frozenset[str]]:
        """The roles of each statement's key: roles: for it, else the statement's own."""
        out: dict[str, frozenset[str]] = {}
        for n, s, roles in statements:
            if not roles:
                continue
            if s.key in declared and frozenset(declared[s.key]) != frozenset(roles):
                self.diags.append(
                    error(
                        "CH315",
                        f"statement '{s.key}' lets {', '.join(roles)} read it, but roles: "
                        f"says {', '.join(declared[s.key])}",
                        self.doc.loc(("statements", n, "roles")),
                        "declare the readers of a key once: drop one of the two lists",
                    )
                )
            elif s.key not in declared:
                out[s.key] = out.get(s.key, frozenset()) | frozenset(roles)
        return out


def compile_phrase(phrase: str, values: tuple[str, ...] = ()) -> str:
    """A regular expression for ``phrase``: literal text escaped; ``{X}`` a group ``value``
    of one of ``values``, else of a clause's characters, as few as the text after it needs
    (as many as there are when it ends the phrase)."""
    m = PLACEHOLDER.search(phrase)
    if m is None:
        return re.escape(phrase)
    before, after = phrase[: m.start()], phrase[m.end() :]
    if values:
        body = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
        group = f"(?P<value>{body})"
    else:
        group = f"(?P<value>{FREE_VALUE}{'?' if after else ''})"
    return re.escape(before) + group + re.escape(after)


def compile_facts(
    doc: LocatedDoc, data: MemoryFile, types: Mapping[str, P.MemoryType]
) -> tuple[P.SlotFacts, tuple[P.Statement, ...], dict[str, frozenset[str]], list[Diagnostic]]:
    """``slot_facts``, ``statements`` and the roles the statements add to ``roles:``."""
    facts = _Facts(doc, types)
    slot_facts = facts.slot_facts(data.slot_facts)
    made: list[tuple[int, P.Statement, tuple[str, ...]]] = []
    for n, item in enumerate(data.statements):
        s = facts.statement(item, n) if item is not None else None
        if item is not None and s is not None:
            made.append((n, s, item.roles))
    roles = facts.roles(made, data.roles)
    return slot_facts, tuple(s for _, s, _ in made), roles, facts.diags
