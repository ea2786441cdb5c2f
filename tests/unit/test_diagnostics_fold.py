"""Folding what follows from a problem under it (charter.diagnostics.fold), and how each
output format shows a root with its consequences."""

from __future__ import annotations

import json

from charter.diagnostics import (
    Location,
    SourceCache,
    count,
    error,
    fold,
    render_github,
    render_json,
    render_sarif,
    render_text,
    sort_diagnostics,
    unfold,
    warning,
)

ROOT = error("CH001", "mapping values are not allowed here", Location("p/goals.yaml", 3, 14))
INTENT = error("CH361", "unknown intent '转账'", Location("p/tests/conversations/a.yaml", 5, 9))
RULE = error("CH102", "unknown extractor 'mony'", Location("p/rules.yaml", 2, 20))
PHRASE = warning(
    "CH385", "phrase '转三千' expects unknown intent '转账'", Location("p/t.yaml", 7, 5)
)
SOURCES = SourceCache({"p/goals.yaml": "intents:\n  - id: 转账\n     describe: 转账\n"})


def _folded() -> list:
    return fold([ROOT, INTENT, RULE, PHRASE], ROOT, lambda d: d.code in {"CH361", "CH385"})


def test_fold_moves_what_follows_under_the_root_and_keeps_the_rest() -> None:
    folded = _folded()
    assert [d.code for d in folded] == ["CH102", "CH001"]
    assert folded[1].consequences == (INTENT, PHRASE)
    assert count(folded) == 2
    assert sort_diagnostics(unfold(folded)) == sort_diagnostics([ROOT, INTENT, RULE, PHRASE])


def test_a_root_reached_by_two_packs_keeps_the_consequences_of_both() -> None:
    a = fold([ROOT, INTENT], ROOT, lambda d: True)
    b = fold([ROOT, PHRASE], ROOT, lambda d: True)
    (merged,) = sort_diagnostics([*a, *b])
    assert merged.consequences == (PHRASE, INTENT)  # by location


def test_text_shows_the_root_and_how_many_follow_from_it() -> None:
    root = _folded()[1]
    assert render_text([root], SOURCES) == (
        "p/goals.yaml:3:14: CH001 mapping values are not allowed here\n"
        "         describe: 转账\n"
        "                 ^\n"
        "    and 2 consequences (--all-consequences lists them)\n"
    )


def test_machine_formats_show_the_roots_with_their_count_and_json_nests_them() -> None:
    root = _folded()[1]
    assert render_github([root]) == (
        "::error file=p/goals.yaml,line=3,col=14,title=CH001::"
        "mapping values are not allowed here (and 2 consequences)\n"
    )
    sarif = json.loads(render_sarif([root], "0"))["runs"][0]["results"]
    assert [r["message"]["text"] for r in sarif] == [
        "mapping values are not allowed here (and 2 consequences)"
    ]
    (doc,) = json.loads(render_json([root]))
    assert [c["code"] for c in doc["consequences"]] == ["CH361", "CH385"]
    assert "consequences" not in json.loads(render_json([RULE]))[0]
