"""``render_text`` shows the source line under a diagnostic: a window of a very long line (a
fuzzed pack's 10-million-character literal printed 20 MB), the caret still under its column."""

from __future__ import annotations

from pathlib import Path

from charter.diagnostics import Location, error, render_text


def test_a_long_line_is_shown_as_a_window_with_the_caret_in_place(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("check: " + "x" * 5000 + " or bad\n", encoding="utf-8")
    start = len("check: ") + 5000 + 2  # 1-based column of "or"
    text = render_text([error("CH113", "too long", Location(str(path), 1, start, 1, start + 2))])
    headline, source, caret = text.splitlines()
    assert headline == f"{path}:1:{start}: CH113 too long"
    assert source == "    …" + "x" * 79 + " or bad"
    assert caret == "    " + " " * 81 + "^^"


def test_a_short_line_is_shown_whole(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("check: 价格 > 1\n", encoding="utf-8")
    text = render_text([error("CH101", "bad", Location(str(path), 1, 8, 1, 10))])
    assert text.splitlines()[1:] == ["    check: 价格 > 1", "           ^^^^"]
