"""Conversation coverage of a pack: the intents whose goals the conversations opened, the event
kinds their replies told and the response templates they used, each out of all there are."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from charter.compile.api import compile_path
from charter.compile.compiled import CompiledPack
from charter.compile.conversations import EVENT_KINDS as ALL_KINDS
from charter.contracts.registry import Registry
from charter.conversations.coverage import coverage_of

# a pack without examples asks no clarifying question: those events are not counted
EVENT_KINDS = tuple(k for k in ALL_KINDS if not k.startswith("clarification_"))

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "conversations" / "balance"


class Responses:
    reachable: tuple[str, ...] = ()  # none computed: every template id counts

    def template_ids(self) -> frozenset[str]:
        return frozenset({"pack.cancelled", "account_balance.result#1", "account_balance.result#2"})


def played(pack: str, **seen: Any) -> Any:
    """What ``coverage_of`` reads of a ``ConversationResult``."""
    empty: frozenset[str] = frozenset()
    return SimpleNamespace(
        pack=pack,
        intents=frozenset(seen.get("intents", empty)),
        events=frozenset(seen.get("events", empty)),
        templates=frozenset(seen.get("templates", empty)),
    )


def fixture_pack(registry: Registry) -> CompiledPack:
    pack, _ = compile_path(FIXTURE, registry, cache_dir=None)
    assert pack is not None
    return pack


def test_coverage_counts_what_the_conversations_showed(registry: Registry) -> None:
    pack = dataclasses.replace(fixture_pack(registry), responses=Responses())
    results = [
        played("balance", intents={"account-query"}, events={"slot_asked", "result"}),
        played("balance", events={"result", "fallback"}, templates={"account_balance.result#2"}),
        played("other", events={"cancelled"}, templates={"pack.cancelled"}),  # another pack
    ]
    c = coverage_of(pack, results)
    assert c.summary() == "intents 1/1, events 3/17, templates 1/3"
    missing_events = [k for k in EVENT_KINDS if k not in ("slot_asked", "result", "fallback")]
    assert c.missing() == [
        "events " + ", ".join(missing_events),
        "templates account_balance.result#1, pack.cancelled",
    ]
    assert c.as_dict() == {
        "pack": "balance",
        "intents": {"covered": 1, "total": 1, "missing": []},
        "events": {"covered": 3, "total": 17, "missing": missing_events},
        "templates": {
            "covered": 1,
            "total": 3,
            "missing": ["account_balance.result#1", "pack.cancelled"],
        },
    }


def test_without_compiled_responses_there_is_no_template_part(registry: Registry) -> None:
    pack = dataclasses.replace(fixture_pack(registry), responses=None)
    c = coverage_of(pack, [])
    assert c.templates is None
    assert c.summary() == "intents 0/1, events 0/17"
    assert c.missing() == ["intents account-query", "events " + ", ".join(EVENT_KINDS)]
    assert c.as_dict()["templates"] is None
