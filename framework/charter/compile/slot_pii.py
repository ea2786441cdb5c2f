"""CH308: a slot's regex that captures personal data (issue 16).

At run time a regex slot passes over a value that a PII recognizer finds in the input
(``charter.compile.specs.slots``), so a card number typed where an order number was expected
reaches no goal. A pattern that would capture such values is still a mistake of the pack: the user
who typed one is asked again for what they think they gave. So validation tries each slot regex on
the example texts the installed recognizers carry (``examples``: sentences holding one value of
their kind, as users write it) and warns when the value the regex takes overlaps personal data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import regex

from charter.contracts.pii import PiiMatch, PiiRecognizer
from charter.diagnostics import Diagnostic, Location, did_you_mean, error, warning


def slot_diagnostics(
    pattern: regex.Pattern[str],
    allowed: list[Any],
    recognizers: Iterable[PiiRecognizer],
    loc: Callable[..., Location],
    what: str,
) -> list[Diagnostic]:
    """CH309 for each kind of ``personal:`` no recognizer reports; CH308 when the slot's
    ``pattern`` (``what``: "slot 'order_id' of intent 'refund'") captures other kinds.
    ``loc(*keys)`` locates a key below the slot."""
    recognizers = tuple(recognizers)
    known = {r.kind for r in recognizers}
    out = [
        error(
            "CH309",
            f"unknown kind of personal data '{kind}' in {what}",
            loc("personal", i),
            did_you_mean(str(kind), sorted(known)),
        )
        for i, kind in enumerate(allowed)
        # a kind written as a mapping or a list (the schema said so) is reported, not hashed
        if str(kind) not in known or not isinstance(kind, str)
    ]
    found = [(k, v) for k, v in captured_kinds(pattern, recognizers) if k not in allowed]
    if found:
        kinds = ", ".join(f"{kind} ({value})" for kind, value in found)
        out.append(
            warning(
                "CH308",
                f"the regex of {what} captures personal data: {kinds}; "
                "such a value is passed over at run time",
                loc("regex"),
                "narrow the regex so it cannot match personal data; when the slot must hold it, "
                f"say so (personal: [{found[0][0]}]): the goal store then keeps it encrypted",
            )
        )
    return out


def captured_kinds(
    pattern: regex.Pattern[str], recognizers: Iterable[PiiRecognizer]
) -> list[tuple[str, str]]:
    """``(kind, value)`` for each kind of personal data the pattern's value captures in one of
    the recognizers' examples: the first such value of each kind."""
    group: str | int = "value" if "value" in pattern.groupindex else (1 if pattern.groups else 0)
    found: list[tuple[str, str]] = []
    for r in recognizers:
        for example in getattr(r, "examples", ()):
            hit = _capture(pattern, group, example, r.recognize(example))
            if hit is not None:
                found.append((r.kind, hit))
                break
    return found


def _capture(
    pattern: regex.Pattern[str], group: str | int, text: str, personal: Sequence[PiiMatch]
) -> str | None:
    try:
        matches = list(pattern.finditer(text, timeout=0.5))
    except TimeoutError:  # a pattern slow on a short example is reported elsewhere (CH112)
        return None
    for m in matches:
        start, end = m.span(group)
        if start < end and any(p.exposes(start, end, m.group(group)) for p in personal):
            return str(m.group(group))
    return None
