"""A turn's expectations against what the turn did: each one that does not hold is one
``(key, message)`` problem saying what was expected and what came instead.

Values are shown as JSON (``"pass"``, ``["account_balance"]``); the reply text, when it is not
the one expected, as a character-level diff (``charter.text.diff``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from charter.agent.reply import Reply
from charter.compile.conversations import Expect, template_matches
from charter.text.diff import char_diff


@dataclass(frozen=True)
class Observed:
    """What a turn did, as the expectations read it."""

    reply: Reply
    model_calls: int
    goals: Mapping[str, str] = field(default_factory=dict)  # intent -> status of the latest goal
    slots: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # of the latest goal
    written: Sequence[tuple[str, str]] = ()  # facts written during the turn: (key, value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _got(value: Any) -> str:
    return "nothing" if value is None else _json(value)


def _same_templates(want: Sequence[str], got: Sequence[str]) -> bool:
    return len(want) == len(got) and all(
        template_matches(w, g) for w, g in zip(want, got, strict=True)
    )


def check(expect: Expect, seen: Observed) -> list[tuple[str, str]]:
    """Every expectation of ``expect`` that ``seen`` breaks, in the order of the format."""
    out: list[tuple[str, str]] = []
    r = seen.reply
    text = r.text
    if expect.reply is not None and text != expect.reply:
        out.append(("reply", f"(-expected +got) {char_diff(expect.reply, text)}"))
    for want in expect.contains:
        if want not in text:
            out.append(("contains", f"expected {_json(want)} in the reply, got {_json(text)}"))
    for unwanted in expect.not_contains:
        if unwanted in text:
            out.append(("not_contains", f"expected no {_json(unwanted)}, got {_json(text)}"))
    if expect.matches is not None and regex.search(expect.matches, text) is None:
        out.append(("matches", f"expected a match of {_json(expect.matches)}, got {_json(text)}"))
    if expect.responses is not None and not _same_templates(expect.responses, r.responses):
        out.append(
            (
                "responses",
                f"expected {_json(list(expect.responses))}, got {_json(list(r.responses))}",
            )
        )
    if expect.events is not None:
        kinds = [e.get("kind") for e in r.events]
        if kinds != list(expect.events):
            out.append(("events", f"expected {_json(list(expect.events))}, got {_json(kinds)}"))
    for key in ("verdict", "answered_by"):
        want_value = getattr(expect, key)
        if want_value is not None and getattr(r, key) != want_value:
            out.append((key, f"expected {_json(want_value)}, got {_json(getattr(r, key))}"))
    for intent, status in expect.goals:
        got_status = seen.goals.get(intent)
        if got_status != status:
            got = "no goal of it" if got_status is None else _json(got_status)
            out.append((f"goals {intent}", f"expected {_json(status)}, got {got}"))
    for intent, values in expect.slot_values().items():
        have = seen.slots.get(intent)
        for slot, value in values.items():
            if have is None:
                out.append((f"slots {intent}.{slot}", f"expected {_json(value)}, got no goal"))
            elif have.get(slot) != value:
                out.append(
                    (
                        f"slots {intent}.{slot}",
                        f"expected {_json(value)}, got {_got(have.get(slot))}",
                    )
                )
    if expect.skills is not None:
        called = [s.get("skill") for s in r.skills]
        if called != list(expect.skills):
            out.append(("skills", f"expected {_json(list(expect.skills))}, got {_json(called)}"))
    if expect.replayed is not None:
        replayed = [s.get("skill") for s in r.skills if s.get("replayed")]
        if replayed != list(expect.replayed):
            out.append(
                ("replayed", f"expected {_json(list(expect.replayed))}, got {_json(replayed)}")
            )
    if expect.ticket is not None and (r.ticket is not None) != expect.ticket:
        out.append(
            (
                "ticket",
                f"expected no ticket, got {r.ticket}"
                if r.ticket is not None
                else "expected a ticket, got none",
            )
        )
    for key, value in expect.memory:
        written = [v for k, v in seen.written if k == key]
        if value not in written:
            got = "nothing written" if not written else " and ".join(map(_json, written))
            out.append((f"memory {key}", f"expected {_json(value)} written, got {got}"))
    if expect.model_calls is not None and seen.model_calls != expect.model_calls:
        out.append(("model_calls", f"expected {expect.model_calls}, got {seen.model_calls}"))
    return out
