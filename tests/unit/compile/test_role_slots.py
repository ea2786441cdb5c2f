"""A slot's ``role:`` (goals.yaml), compiled: the spec holds its kind and words; a role with no
words, a blank word or a type other than text is reported (CH319), a role beside a regex or an
extractor too (CH013), an unknown kind by the schema (CH013)."""

from __future__ import annotations

from pathlib import Path

import pytest

from charter.compile.specs import goals as S
from charter.contracts.registry import Registry
from tests.support.skills_compile import compile_files


def goals(payee: str) -> str:
    return f"""\
intents:
  - id: transfer
    describe: 转账
    trigger: input contains "转"
    slots:
      - name: payee
{payee}
        required: true
        ask: 收款人是谁？
    description: 向{{payee}}转账
"""


def test_the_spec_holds_the_role(tmp_path: Path, registry: Registry) -> None:
    role = "        role: {before: [给, 向, 收款人], after: [那边, 卡上]}"
    pack, diags = compile_files(tmp_path, registry, {"goals.yaml": goals(role)})
    assert diags == []
    assert pack is not None and pack.goals is not None
    (slot,) = pack.goals.intents[0].slots
    assert slot.role == S.RoleSpec(
        kind="name", before=("给", "向", "收款人"), after=("那边", "卡上")
    )
    assert (slot.regex, slot.extractor, slot.type) == (None, None, "text")


@pytest.mark.parametrize(
    ("payee", "wanted"),
    [
        (
            "        role: {kind: name}",
            [
                (
                    "CH319",
                    "the role of slot 'payee' of intent 'transfer' has no words to find it by",
                    "goals.yaml:7:15",
                )
            ],
        ),
        (
            "        role: {before: [], after: []}",
            [
                (
                    "CH319",
                    "the role of slot 'payee' of intent 'transfer' has no words to find it by",
                    "goals.yaml:7:15",
                )
            ],
        ),
        (
            '        role: {before: [给, "  "]}',
            [
                (
                    "CH319",
                    "a word of 'before' in the role of slot 'payee' of intent 'transfer' is blank",
                    "goals.yaml:7:28",
                )
            ],
        ),
        (
            "        role: {before: [给]}\n        type: number",
            [
                (
                    "CH319",
                    "slot 'payee' of intent 'transfer' reads a name by its role, which is no "
                    "number",
                    "goals.yaml:8:15",
                )
            ],
        ),
        (
            "        role: {before: [给]}\n        regex: 给(?P<value>\\p{Han}{2})",
            [
                (
                    "CH013",
                    "slot 'payee' of intent 'transfer' needs exactly one of regex, extractor "
                    "and role",
                    "goals.yaml:6:9",
                )
            ],
        ),
        (
            "        role: {before: [给], kind: place}",
            [("CH013", None, "goals.yaml:7:35")],
        ),
        (
            "        role: {before: [给], side: left}",
            [("CH012", None, "goals.yaml:7:29")],
        ),
    ],
    ids=["no-words", "empty-lists", "blank-word", "typed", "with-regex", "kind", "unknown-key"],
)
def test_a_bad_role_is_reported_where_it_is(
    tmp_path: Path, registry: Registry, payee: str, wanted: list
) -> None:
    _, diags = compile_files(tmp_path, registry, {"goals.yaml": goals(payee)})
    assert len(diags) == len(wanted), diags
    got = [
        (d.code, d.message if w[1] is not None else None, d.where)
        for d, w in zip(diags, wanted, strict=True)
    ]
    assert got == wanted
