"""CH112: the static analyser of catastrophic backtracking, and its diagnostic."""

from __future__ import annotations

import pytest
import regex

from charter.compile.redos import catastrophic

NESTED = "a repetition inside a repetition can split one text in exponentially many ways"
SAME = "a repetition of alternatives that match the same characters"


@pytest.mark.parametrize(
    ("pattern", "offset", "message"),
    [
        (r"(a+)+$", 0, NESTED),
        (r"(a*)*", 0, NESTED),
        (r"(\w+\s?)+$", 0, NESTED),
        (r"x(?:\d+,?)*y", 1, NESTED),
        (r"^(\w+\w)+$", 1, NESTED),
        (r"(?:a+){2,}", 0, NESTED),
        (r"(a|a)*", 0, SAME),
        (r"(a|aa)+", 0, SAME),
        (r"(.|\s)*", 0, SAME),
    ],
)
def test_catastrophic_shapes_are_found(pattern: str, offset: int, message: str) -> None:
    found = catastrophic(pattern)
    assert [(f.offset, f.message) for f in found] == [(offset, message)]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+b)+",
        r"(ab|ac)*",
        r"a++",
        r"(?>a+)+",
        r"(?:\d{4}[- ]?){3}",
        r"(?<![0-9A-Za-z+])(?P<value>(?:DD)?[0-9]{12,15})(?![0-9])",
        r"(?:[0-9]+,)+",
        r"(?=a+)+b",
        r"\p{Han}+",
        r"[\[(]+",
        r"(a+)?b",
    ],
)
def test_safe_patterns_are_not_reported(pattern: str) -> None:
    assert catastrophic(pattern) == []


def test_flags_are_taken_into_account() -> None:
    # A and a overlap only when case is ignored
    assert catastrophic("(A|a)*") == []
    assert len(catastrophic("(A|a)*", regex.IGNORECASE)) == 1


def test_a_dsl_pattern_is_warned_about_at_its_repetition(tmp_path, registry) -> None:  # type: ignore[no-untyped-def]
    from charter.compile.api import compile_path

    pack = tmp_path / "p"
    pack.mkdir()
    (pack / "pack.yaml").write_text("name: p\nversion: 0.1.0\n", "utf-8")
    (pack / "rules.yaml").write_text(
        "rules:\n  - id: r\n    describe: d\n    check: not output matches /x(a+)+$/\n"
        "    on_fail: retry\n",
        "utf-8",
    )
    compiled, diagnostics = compile_path(pack, registry, cache_dir=None)
    assert compiled is not None  # a warning: the pack still compiles
    [d] = [d for d in diagnostics if d.code == "CH112"]
    assert (d.location.line, d.location.col) == (4, 33)  # the ( after x
    assert d.message == f"pattern can backtrack catastrophically: {NESTED}"
    assert d.hint.startswith("let each character be matched one way only (a+ for (a+)+)")
