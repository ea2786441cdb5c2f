"""``charter.health.html``: one self-contained page (nothing fetched, nothing run), a bar per
measured metric against its range, a trend point per day with a value, the counts per day,
escaped text. The page in a real browser: ``tests/acceptance/test_health_cli.py``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest

from charter.health.html import render_html
from charter.health.report import DEFINITIONS, Day, HealthReport, Metric

NOW = datetime(2024, 5, 6, tzinfo=UTC)


class Tags(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str, name: str, cls: str | None = None) -> list[dict[str, str | None]]:
    parser = Tags()
    parser.feed(html)
    return [
        a
        for t, a in parser.tags
        if t == name and (cls is None or cls in (a.get("class") or "").split())
    ]


def report(days: tuple[Day, ...] = (), pack: str | None = "shop") -> HealthReport:
    metrics = tuple(
        Metric(d.id, 0, 0) if d.id == "chain_success" else Metric(d.id, 1, 10) for d in DEFINITIONS
    )
    return HealthReport(NOW, metrics, days, pack=pack)


def day(name: str, turns: int = 1, reflections: int = 0, **rates: tuple[int, int]) -> Day:
    return Day(name, turns, reflections, rates)


def test_self_contained() -> None:
    html = render_html(report((day("2024-05-01", cross_session_rate=(1, 2)),)))
    assert html.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    for fetched in ("<script", "<link", "<img", "<iframe", "@import", "url(", "src="):
        assert fetched not in html
    # the only URL is the SVG namespace, which is a name, not something fetched
    assert set(re.findall(r"https?://[^\"' )]+", html)) == {"http://www.w3.org/2000/svg"}


def test_a_bar_per_measured_metric() -> None:
    html = render_html(report())
    bars = tags(html, "rect", "bar")
    # chain success is n/a: no bar; fallback activation at 10 % is in its range
    assert [(b["data-metric"], b["class"], b["width"]) for b in bars] == [
        (d.id, "bar pass" if d.id == "fallback_activation" else "bar warn", "44.0")
        for d in DEFINITIONS
        if d.id != "chain_success"
    ]
    assert len(tags(html, "line", "threshold")) == 10  # the range has two ends
    bands = {b["y"]: (b["x"], b["width"]) for b in tags(html, "rect", "band")}
    assert next(iter(bands.values())) == ("476.0", "154.0")  # 65 % .. 100 % of 440 px from 190
    assert ">n/a</text>" in html


@pytest.mark.parametrize(
    ("days", "points", "lines", "labels"),
    [
        ((), 0, 0, []),
        ((day("2024-05-01", cross_session_rate=(1, 2)),), 1, 0, ["05-01"]),
        (
            (
                day("2024-05-01", cross_session_rate=(1, 2), chain_success=(1, 1)),
                day("2024-05-02"),
                day("2024-05-03", cross_session_rate=(2, 2)),
            ),
            3,
            1,
            ["05-01", "05-02", "05-03"],
        ),
        (
            tuple(day(f"2024-05-{n:02d}", contract_compliance=(n, 31)) for n in range(1, 32)),
            31,
            1,
            [f"05-{n:02d}" for n in range(1, 32, 3)],  # every third, back from the last
        ),
    ],
    ids=["no days", "one day", "a gap", "a month"],
)
def test_the_trend(days: tuple[Day, ...], points: int, lines: int, labels: list[str]) -> None:
    html = render_html(report(days))
    assert len(tags(html, "circle", "point")) == points
    assert len(tags(html, "path", "line")) == lines
    assert re.findall(r'class="muted day"[^>]*>([0-9-]+)<', html)[: len(labels)] == labels
    assert len(tags(html, "rect", "count")) == 2 * len(days)
    if not days:
        assert "No turns or reflections in the window." in html
        assert [s["id"] for s in tags(html, "svg", "chart")] == ["chart-metrics"]
    else:
        assert [s["id"] for s in tags(html, "svg", "chart")] == [
            "chart-metrics",
            "chart-trend-rates",
            "chart-trend-counts",
        ]


def test_a_gap_breaks_the_line() -> None:
    days = (
        day("2024-05-01", cross_session_rate=(1, 2)),
        day("2024-05-02"),
        day("2024-05-03", cross_session_rate=(2, 2)),
        day("2024-05-04", cross_session_rate=(0, 2)),
    )
    html = render_html(report(days))
    (line,) = tags(html, "path", "line")
    (gap,) = tags(html, "path", "gap")
    assert (line["d"] or "").count("M") == 2 and (gap["d"] or "").count("M") == 1
    values = [(p["data-day"], p["data-value"]) for p in tags(html, "circle", "point")]
    assert values == [("2024-05-01", "0.5"), ("2024-05-03", "1.0"), ("2024-05-04", "0.0")]


def test_counts_share_one_scale() -> None:
    html = render_html(report((day("2024-05-01", 8, 2), day("2024-05-02", 4, 0))))
    heights = [(c["class"], c["data-count"], c["height"]) for c in tags(html, "rect", "count")]
    # the axis goes to 8 (the largest count, rounded up to a multiple of 4): 150 px tall
    assert heights == [
        ("count turns", "8", "150.0"),
        ("count reflections", "2", "37.5"),
        ("count turns", "4", "75.0"),
        ("count reflections", "0", "0.0"),
    ]


def test_text_is_escaped() -> None:
    html = render_html(report(pack='<b>"商城" & co</b>'))
    assert "<b>" not in html
    assert "<title>Cognitive health · &lt;b&gt;&quot;商城&quot; &amp; co&lt;/b&gt;</title>" in html
