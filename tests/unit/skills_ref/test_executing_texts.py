"""Every text the executing skills can give the user passes its pack's rules as it is: each
``tests:`` case of ``transfer``, ``invoice_issue`` and ``return_request`` is run through the
guards, and what it tells the user (a summary, a refusal, a contract message, a fallback's
template) is checked by the pack's engine. The finance pack wants every amount in digits and
capitals, equal to the cent; the ecommerce pack wants ``元`` and two decimals."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from charter.compile.specs.skills import SkillCase
from charter.reflect.engine import Engine
from tests.support.packs import installed_registry
from tests.support.packs import shipped as pack
from tests.support.skills_ref import make_runner

EXECUTING = {"finance": ("transfer", "invoice_issue"), "ecommerce": ("return_request",)}


def verdict(pack_name: str, text: str) -> str:
    return str(Engine(pack(pack_name), installed_registry()).check(text, "", {}).verdict)


def cases() -> Iterator[Any]:
    for name, skills in EXECUTING.items():
        contracts = pack(name).skills
        assert contracts is not None
        for skill in skills:
            contract = contracts.contract(skill)
            assert contract is not None
            for case in contract.cases:
                if case.action != "handoff_human":  # the framework's words, with a ticket
                    yield pytest.param(name, skill, case, id=f"{skill}:{case.name}")


@pytest.mark.parametrize(("pack_name", "skill", "case"), list(cases()))
def test_what_the_user_is_told_passes_the_pack_rules(
    pack_name: str, skill: str, case: SkillCase
) -> None:
    runner = make_runner(pack_name, None)
    try:
        outcome = runner.call(skill, case.args, case.context, inject=case.inject)
    finally:
        runner.close()
    assert outcome.text
    assert verdict(pack_name, outcome.text) == "pass", outcome.text


@pytest.mark.parametrize(
    ("pack_name", "text"),
    [
        ("finance", "已向张三转账5000.00元，交易流水号TR-20240501-0001。"),
        ("finance", "已向张三转账¥5,000.00（伍佰元整）。"),
        ("ecommerce", "退款1299元将原路退回。"),
    ],
)
def test_the_check_is_not_vacuous(pack_name: str, text: str) -> None:
    assert verdict(pack_name, text) != "pass"
