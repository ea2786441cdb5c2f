"""The typed models of pack.yaml, rules.yaml, responses.yaml and the conversations files: a
shipped file reads as written, and a file the schema rejects reads as defaults where it is
wrong (and keeps its indexes), so that the loader and the compile stages run on it anyway."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from charter.pack.model import DEFAULT_MESSAGES, DEFAULT_THRESHOLDS
from charter.pack.typed.conversations import ConversationsFile
from charter.pack.typed.conversations import Expect as ExpectModel
from charter.pack.typed.pack import PackFile, Requires
from charter.pack.typed.responses import Alternative, ResponsesFile, read_entry
from charter.pack.typed.rules import Rule, RulesFile
from charter.pack.yamlsrc import load_yaml

ROOT = Path(__file__).resolve().parents[3]


def _data(relative: str) -> Any:
    doc, diags = load_yaml(ROOT / relative)
    assert doc is not None and not diags
    return doc.data


def _yaml(text: str) -> Any:
    return yaml.safe_load(text)


# ---- pack.yaml --------------------------------------------------------------------------------


def test_a_shipped_pack_yaml() -> None:
    meta = PackFile.read(_data("domains/finance/pack.yaml"))
    assert (meta.name, meta.version, meta.kind, meta.locale) == (
        "finance",
        "0.1.0",
        "domain",
        "zh-CN",
    )
    assert meta.extends == (
        "rulesets/zh-customer-service",
        "rulesets/uncertainty",
        "rulesets/memory-grounding",
    )
    assert meta.requires == Requires.read({"charter": ">=0.1", "plugins": ["charter-zh"]})
    assert meta.thresholds == {"uncertainty": 0.72, "max_retries": 2, "retrieval_top_k": 3}
    assert meta.messages["escalate"].startswith("该问题需要人工复核")


def test_a_pack_yaml_the_schema_rejects() -> None:
    meta = PackFile.read(
        _yaml(
            """
            name: 3
            version: [1]
            extends: [1, rulesets/x, null]
            requires: {charter: 0.1, plugins: charter-zh}
            thresholds: {uncertainty: 1.5, max_retries: 2.0, retrieval_top_k: true, x: 4}
            messages: {safe: 安全}
            """
        )
    )
    assert (meta.name, meta.version, meta.kind, meta.description) == ("", "", "", "")
    assert meta.extends == (None, "rulesets/x", None)  # ("extends", 1) is rulesets/x
    assert meta.requires == Requires()
    # out of range, no count, a bool: the defaults; a key the schema does not know is kept
    assert meta.thresholds == {**DEFAULT_THRESHOLDS, "x": 4}
    assert list(meta.thresholds) == [*DEFAULT_THRESHOLDS, "x"]
    assert meta.messages == {**DEFAULT_MESSAGES, "safe": "安全"}
    assert PackFile.read("name: x") == PackFile()
    assert PackFile().thresholds == DEFAULT_THRESHOLDS


def test_a_threshold_keeps_its_number_as_written() -> None:
    meta = PackFile.read({"thresholds": {"uncertainty": 1, "x": 10**400}})
    assert meta.thresholds == {**DEFAULT_THRESHOLDS, "uncertainty": 1, "x": 10**400}
    assert type(meta.thresholds["uncertainty"]) is int  # pack.thresholds.uncertainty is 1
    # too long for a float: out of range, not a crash
    assert PackFile.read({"thresholds": {"uncertainty": 10**400}}) == PackFile()


# ---- rules.yaml -------------------------------------------------------------------------------


def test_a_shipped_rules_yaml() -> None:
    data = _data("rulesets/zh-customer-service/rules.yaml")
    rules = RulesFile.read(data).rules
    assert len(rules) == len(data["rules"])
    first, raw = rules[0], data["rules"][0]
    assert first is not None
    assert (first.id, first.check, first.on_fail) == (raw["id"], raw["check"], raw["on_fail"])
    assert first.describe == raw["describe"]


def test_a_rules_yaml_the_schema_rejects() -> None:
    data = RulesFile.read(
        _yaml(
            """
            rules:
              - just text
              - {id: 1, check: output contains "x", on_fail: retry, override: "yes", tags: a}
              - {id: a, describe: d, check: c, on_fail: retry, when: 3, tags: [x, 1, y]}
            tests:
              - {name: 1, output: 2, pass: [a, 3], context: [1]}
              - {output: o, pass: [a], fail: b, verdict: 1, fixed: f}
            """
        )
    )
    assert data.rules[0] is None  # ("rules", 1) is still the second item
    assert data.rules[1] == Rule.read({"check": 'output contains "x"', "on_fail": "retry"})
    third = data.rules[2]
    assert third is not None
    assert (third.id, third.when, third.override, third.tags) == ("a", None, False, ("x", "y"))
    one, two = data.tests
    assert one is not None and two is not None
    assert (one.name, one.output, one.pass_, one.context) == ("", None, ("a",), {})
    assert (two.output, two.pass_, two.fail, two.verdict, two.fixed) == ("o", ("a",), (), None, "f")
    assert RulesFile.read([]) == RulesFile()


# ---- responses.yaml ---------------------------------------------------------------------------


def test_a_shipped_responses_yaml() -> None:
    data = _data("domains/finance/responses.yaml")
    written = ResponsesFile.read(data)
    assert written.mode == "strict"
    assert set(written.events.written()) == set(data["events"])
    assert written.events.cancelled == data["events"]["cancelled"]
    handed_off = written.events.handed_off
    assert isinstance(handed_off, tuple)
    assert handed_off[0] == Alternative.read(data["events"]["handed_off"][0])
    assert set(written.intents) == set(data["intents"])
    carried = written.intents["account-query"]
    assert carried is not None and carried.mode is None
    assert set(carried.written()) == set(data["intents"]["account-query"])


def test_a_responses_yaml_the_schema_rejects() -> None:
    written = ResponsesFile.read(
        _yaml(
            """
            mode: 1
            events:
              completed: ~
              cancelled: [a, 3, [b], {text: [x, 1], each: y, when: 2}]
              resumed: {text: 3}
              nonsense: x
            intents: {a: 1, b: {mode: assisted, slot_asked: x}}
            """
        )
    )
    assert written.mode is None
    # written, though with no usable value: the entry is declared
    assert written.events.written() == {
        "cancelled": ("a", None, None, Alternative.read({"text": ["x", 1], "each": "y"})),
        "completed": None,
        "resumed": Alternative.read({}),
    }
    resumed = written.events.resumed
    assert isinstance(resumed, Alternative) and "text" in resumed.model_fields_set
    b = written.intents["b"]
    assert written.intents["a"] is None and b is not None
    assert (b.mode, b.written()) == ("assisted", {"slot_asked": "x"})
    assert ResponsesFile.read({"intents": [1], "events": "x"}) == ResponsesFile()


def test_a_skill_reply_reads_as_an_entry() -> None:
    assert read_entry({"each": ["a", "b"]}) == Alternative.read({"each": ["a", "b"]})
    assert read_entry(["a", {}]) == ("a", Alternative())
    assert read_entry(3) is None


# ---- tests/conversations/*.yaml ---------------------------------------------------------------


def test_a_shipped_conversations_file() -> None:
    data = _data("domains/finance/tests/conversations/transfer.yaml")
    written = ConversationsFile.read(data)
    assert len(written.conversations) == len(data["conversations"])
    first = written.conversations[0]
    assert first is not None and first.name == data["conversations"][0]["name"]
    turn = first.turns[0]
    assert turn is not None and turn.user == "查一下尾号1234的余额，然后给张三转账5000元"
    expect = turn.expect
    assert expect.events == ("result", "confirmation_asked")
    assert expect.goals == {"account-query": "completed", "transfer": "pending"}
    assert expect.slots == {"transfer": {"payee": "张三", "amount": "5000", "card_tail": "1234"}}
    assert (expect.skills, expect.replayed, expect.model_calls) == (("account_balance",), None, 0)


def test_a_conversations_file_the_schema_rejects() -> None:
    written = ConversationsFile.read(
        _yaml(
            """
            conversations:
              - 3
              - name: c
                model: one answer
                turns:
                  - hello
                  - user: hi
                    model: []
                    expect:
                      contains: a
                      events: slot_asked
                      skills: []
                      responses: [x, 1, y]
                      goals: {a: 1, b: active}
                      slots: {a: 1, b: {x: 1}}
                      ticket: "yes"
                      model_calls: true
                  - user: 2
                    expect: [1]
            """
        )
    )
    none, conversation = written.conversations
    assert none is None and conversation is not None
    assert (conversation.name, conversation.model, conversation.now) == ("c", ("one answer",), None)
    not_a_turn, turn, no_user = conversation.turns
    assert not_a_turn is None and turn is not None and no_user is not None
    assert turn.model == ()  # no answers for this turn, not the conversation's
    assert turn.expect == ExpectModel.read(
        {
            "contains": ["a"],
            "skills": [],
            "responses": ["x", "y"],
            "goals": {"b": "active"},
            "slots": {"b": {"x": 1}},
        }
    )
    assert (turn.expect.events, turn.expect.ticket, turn.expect.model_calls) == (None, None, None)
    assert no_user.user is None and no_user.expect == ExpectModel()
