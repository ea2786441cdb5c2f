"""The fallback half of the ``skills`` compile stage: ``fallbacks.yaml`` conditions and actions
(CH325 when one does not parse; ``expr`` conditions are DSL over ``context.*``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from charter.compile.specs import skills as S
from charter.diagnostics import Diagnostic, did_you_mean, error
from charter.dsl import ast as A
from charter.pack.model import PackSource
from charter.pack.typed.skills import FallbacksFile, FallbackStep
from charter.pack.yamlsrc import LocatedDoc, Pointer

_NAME = r"([a-z][a-z0-9_]*)"
_STRING = r"(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
_CONDITIONS = (
    (re.compile(r"^missing_slot\s+([A-Za-z_][A-Za-z0-9_]*)$"), "missing_slot"),
    (re.compile(r"^negations\s*>=\s*([0-9]+)$"), "negations"),
    (re.compile(r"^confidence\s*<\s*([0-9]*\.?[0-9]+)$"), "confidence"),
    (re.compile(r"^expr\s+(.+)$", re.S), "expr"),
)
_ACTIONS = (
    (re.compile(r"^degrade_to_faq(?:\s+min_score\s+([0-9]*\.?[0-9]+))?$"), "degrade_to_faq"),
    (re.compile(r"^handoff_human(?:\s+([A-Za-z0-9_\-]+))?$"), "handoff_human"),
    (re.compile(rf"^recommend_skill\s+{_NAME}$"), "recommend_skill"),
    (re.compile(rf"^call\s+{_NAME}$"), "call"),
    (re.compile(rf"^clarify\s+{_STRING}$", re.S), "clarify"),
    (re.compile(rf"^template\s+{_STRING}$", re.S), "template"),
)
CONDITION_HELP = (
    "one of unavailable, error, timeout, breaker_open, contract_violation, invalid_args, "
    "failed, always, low_confidence, missing_slot NAME, negations >= N, confidence < X, "
    "expr <DSL expression>"
)
ACTION_HELP = (
    "one of degrade_to_faq [min_score X], handoff_human [QUEUE], recommend_skill NAME, "
    'call NAME, clarify "<question>", template "<text>"'
)


def _unquote(literal: str) -> str:
    if literal.startswith("'"):
        literal = '"' + literal[1:-1].replace('\\"', '"').replace('"', '\\"') + '"'
    value: str = json.loads(literal)
    return value


class FallbackStage:
    """Mixed into the skills stage, which provides ``source``, ``diagnostics`` and ``expr``."""

    source: PackSource
    diagnostics: list[Diagnostic]
    expr: Callable[..., A.Expr | None]

    # ---- fallbacks -----------------------------------------------------------------------------

    def condition(self, doc: LocatedDoc, text: str, ptr: Pointer) -> S.Condition | None:
        text = text.strip()
        if text in S.FAILURE_WORDS:
            return S.Condition("failure", text, failures=S.FAILURE_WORDS[text])
        if text == "always":
            return S.Condition("always", text)
        if text == "low_confidence":
            uncertainty = float(self.source.thresholds.get("uncertainty", 0.72))
            return S.Condition("confidence", text, number=uncertainty)
        for pattern, kind in _CONDITIONS:
            m = pattern.match(text)
            if m is None:
                continue
            if kind == "missing_slot":
                return S.Condition("missing_slot", text, name=m[1])
            if kind == "negations":
                return S.Condition("negations", text, number=float(m[1]))
            if kind == "confidence":
                return S.Condition("confidence", text, number=float(m[1]))
            body = m[1].strip()
            quoted = body[:1] in "\"'" and body[-1:] == body[:1] and len(body) > 1
            dsl = _unquote(body) if quoted else body
            at = m.start(1) + int(quoted)
            node = self.expr(doc, dsl, ptr, "a fallback condition", ("context",), at)
            return None if node is None else S.Condition("expr", text, expr=node)
        self._bad(doc, ptr, f"unknown fallback condition '{text}'", CONDITION_HELP, text)
        return None

    def _bad(self, doc: LocatedDoc, ptr: Pointer, message: str, hint: str, text: str) -> None:
        word = text.split()[0] if text.split() else text
        known = [*S.FAILURE_WORDS, "always", "low_confidence", "missing_slot", "negations"]
        known += ["confidence", "expr", *S.ACTION_KINDS]
        self.diagnostics.append(
            error("CH325", message, doc.loc(ptr), did_you_mean(word, known) or hint)
        )

    def action(self, doc: LocatedDoc, text: str, ptr: Pointer) -> S.Action | None:
        text = text.strip()
        for pattern, kind in _ACTIONS:
            m = pattern.match(text)
            if m is None:
                continue
            if kind == "degrade_to_faq":
                return S.Action("degrade_to_faq", text, min_score=float(m[1]) if m[1] else None)
            if kind == "handoff_human":
                return S.Action("handoff_human", text, target=m[1] or "human")
            if kind in ("recommend_skill", "call"):
                return S.Action(kind, text, target=m[1])  # type: ignore[arg-type]
            return S.Action(kind, text, text=_unquote(m[1]))  # type: ignore[arg-type]
        self._bad(doc, ptr, f"unknown fallback action '{text}'", ACTION_HELP, text)
        return None

    def protocols(self, doc: LocatedDoc) -> list[tuple[str, tuple[S.FallbackStep, ...]]]:
        out = []
        for name, steps in FallbacksFile.read(doc.data).protocols.items():
            compiled = []
            for n, raw in enumerate(steps):
                step = self.step(doc, name, n, raw) if raw is not None else None
                if step is not None:
                    compiled.append(step)
            out.append((name, tuple(compiled)))
        return out

    def step(self, doc: LocatedDoc, name: str, n: int, raw: FallbackStep) -> S.FallbackStep | None:
        """Step ``n`` of protocol ``name``; None when a condition or its action does not read
        (reported) or it has none (the schema reported that)."""
        when = raw.when
        texts = [when] if isinstance(when, str) else list(when or ())
        conds = []
        for i, text in enumerate(texts):
            ptr: Pointer = (
                ("protocols", name, n, "when")
                if isinstance(when, str)
                else ("protocols", name, n, "when", i)
            )
            # an item that is no string (the schema said so) is read as its text: reported as
            # an unknown condition at its place, as a string of that text would be
            cond = self.condition(doc, str(text), ptr)
            if cond is not None:
                conds.append(cond)
        do = ("protocols", name, n, "do")
        act = self.action(doc, raw.do, do) if raw.do is not None else None
        if act is None or len(conds) != len(texts) or not texts:
            return None
        return S.FallbackStep(tuple(conds), act, doc.loc(("protocols", name, n)), doc.loc(do))
