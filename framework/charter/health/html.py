"""The health report as one self-contained HTML page: inline CSS, inline SVG charts, no script,
no font or image to fetch — a person opens the file in a browser, offline, and sees

* each metric as a bar against its healthy range (a green band, a line at the threshold), the
  bar coloured by its mark; an n/a metric has no bar and says why;
* the trend over the days of the window: the daily values of the metrics read from traces
  (one line each, a point per day with a value) and the daily counts of turns and reflections;
* the table of every metric: its value, count, healthy range, mark and what it counts.

Every chart is an ``<svg class="chart">`` with an ``aria-label``; every bar and point carries a
``<title>`` (the browser's tooltip) and ``data-`` attributes naming what it shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from html import escape

from charter._version import __version__
from charter.health.report import (
    BY_ID,
    DIMENSIONS,
    TREND_IDS,
    Day,
    HealthReport,
    Metric,
    percent,
)
from charter.text.display import shown

COLOURS = {
    "cross_session_rate": "#2f6fb0",
    "contract_compliance": "#7a4eab",
    "fallback_activation": "#c77c0e",
    "chain_success": "#23866a",
    "turns": "#5b7083",
    "reflections": "#c2410c",
}
WIDTH = 760
LEFT = 190  # where the bars of the metrics chart start
BAR_W = 440  # 0 .. 100 %
ROW = 30

CSS = """
:root { --pass: #2e8b57; --warn: #d9822b; --na: #9aa0a6; --ink: #1f2933; --soft: #eef1f4; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
  margin: 0 auto; max-width: 820px; padding: 24px; line-height: 1.45; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 32px 0 8px; border-bottom: 1px solid var(--soft); }
.scope { color: #52606d; margin: 0 0 8px; }
.mark { display: inline-block; padding: 0 8px; border-radius: 10px; color: #fff;
  font-size: 0.85em; font-weight: 600; }
.mark.pass { background: var(--pass); } .mark.warn { background: var(--warn); }
.mark.na { background: var(--na); }
svg.chart { display: block; width: 100%; height: auto; margin: 8px 0 16px;
  font-size: 12px; font-family: inherit; }
svg.chart text { fill: var(--ink); }
svg.chart .axis, svg.chart .grid { stroke: #cbd2d9; stroke-width: 1; }
svg.chart .grid { stroke-dasharray: 2 3; }
svg.chart .track { fill: var(--soft); }
svg.chart .band { fill: var(--pass); opacity: 0.18; }
svg.chart .threshold { stroke: var(--pass); stroke-width: 2; }
svg.chart .bar.pass { fill: var(--pass); } svg.chart .bar.warn { fill: var(--warn); }
svg.chart .dim { font-weight: 700; }
svg.chart .muted { fill: #7b8794; }
svg.chart .line { fill: none; stroke-width: 2; }
svg.chart .gap { fill: none; stroke-width: 1; stroke-dasharray: 4 4; opacity: 0.6; }
table { border-collapse: collapse; width: 100%; font-size: 0.92em; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--soft);
  vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.what { color: #52606d; }
.empty { color: #7b8794; font-style: italic; }
footer { margin-top: 32px; color: #7b8794; font-size: 0.85em; }
"""


def _a(value: object) -> str:
    return escape(shown(str(value)), quote=True)


def _x(value: Fraction | float) -> float:
    return round(LEFT + BAR_W * float(value), 1)


def _mark_class(mark: str) -> str:
    return "na" if mark == "n/a" else mark


def _tip(m: Metric) -> str:
    t = m.definition.threshold.text
    return f"{m.definition.name}: {m.shown} ({m.numerator}/{m.denominator}), healthy {t}: {m.mark}"


def metrics_chart(report: HealthReport) -> str:
    """A bar per measured metric on a 0–100 % scale, the healthy range shaded behind it."""
    rows: list[str] = []
    y = 24
    for dim, name in DIMENSIONS:
        rows.append(f'<text class="dim" x="0" y="{y + 14}">{dim} · {_a(name)}</text>')
        y += ROW
        for m in report.dimension(dim):
            th = m.definition.threshold
            high = th.high if th.high is not None else Fraction(1)
            mid = y + ROW / 2
            rows.append(
                f'<g class="metric" data-metric="{m.id}" data-mark="{m.mark}">'
                f"<title>{_a(_tip(m))}</title>"
                f'<text x="12" y="{mid + 4}">{_a(m.definition.name)}</text>'
                f'<rect class="track" x="{LEFT}" y="{y + 6}" width="{BAR_W}" height="{ROW - 12}"/>'
                f'<rect class="band" x="{_x(th.low) - (3 if th.low == high else 0)}" '
                f'y="{y + 3}" width="{max(_x(high) - _x(th.low), 3)}" height="{ROW - 6}"/>'
            )
            for edge in (th.low, th.high):
                if edge is not None:
                    rows.append(
                        f'<line class="threshold" x1="{_x(edge)}" x2="{_x(edge)}" '
                        f'y1="{y + 2}" y2="{y + ROW - 2}"/>'
                    )
            if m.measured:
                frac = Fraction(m.numerator, m.denominator)
                rows.append(
                    f'<rect class="bar {m.mark}" data-metric="{m.id}" data-value="{m.value}" '
                    f'x="{LEFT}" y="{y + 9}" width="{round(BAR_W * float(frac), 1)}" '
                    f'height="{ROW - 18}"/>'
                    f'<text class="value" x="{LEFT + BAR_W + 8}" y="{mid + 4}">'
                    f"{percent(frac)} · {m.mark}</text>"
                )
            else:
                rows.append(
                    f'<text class="value muted" x="{LEFT + BAR_W + 8}" y="{mid + 4}">n/a</text>'
                )
            rows.append("</g>")
            y += ROW
    ticks = "".join(
        f'<line class="grid" x1="{_x(p / 100)}" x2="{_x(p / 100)}" y1="18" y2="{y}"/>'
        f'<text class="muted" x="{_x(p / 100)}" y="12" text-anchor="middle">{p}%</text>'
        for p in (0, 25, 50, 75, 100)
    )
    return _svg(
        "chart-metrics",
        "Each metric against its healthy range",
        y + 8,
        ticks + "".join(rows),
    )


def _svg(ident: str, label: str, height: float, body: str) -> str:
    return (
        f'<svg class="chart" id="{ident}" role="img" aria-label="{_a(label)}" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg">{body}</svg>'
    )


def _days_x(days: Sequence[Day], left: float, right: float) -> list[float]:
    if len(days) == 1:
        return [round((left + right) / 2, 1)]
    step = (right - left) / (len(days) - 1)
    return [round(left + i * step, 1) for i in range(len(days))]


def _day_labels(days: Sequence[Day], xs: Sequence[float], y: float) -> str:
    every = max(1, len(days) // 10)  # at most about ten labels under the axis
    return "".join(
        f'<text class="muted day" x="{x}" y="{y}" text-anchor="middle">{d.day[5:]}</text>'
        for n, (d, x) in enumerate(zip(days, xs, strict=True))
        if (len(days) - 1 - n) % every == 0  # evenly spaced back from the last day
    )


def _legend(names: Sequence[tuple[str, str]], y: float) -> str:
    out, x = [], 50.0
    for key, label in names:
        out.append(
            f'<g class="legend" data-series="{key}"><rect x="{x}" y="{y - 9}" width="12" '
            f'height="12" fill="{COLOURS[key]}"/><text x="{x + 17}" y="{y + 1}">{_a(label)}'
            "</text></g>"
        )
        x += 30 + 7.2 * len(label)
    return "".join(out)


def trend_rates_chart(days: Sequence[Day]) -> str:
    """The daily value of each metric read from traces: a line each, a point per valued day."""
    top, bottom, left, right = 40, 230, 50, WIDTH - 20
    xs = _days_x(days, left + 10, right - 10)

    def y_of(v: float) -> float:
        return round(bottom - (bottom - top) * v, 1)

    parts = [
        f'<line class="grid" x1="{left}" x2="{right}" y1="{y_of(p / 100)}" y2="{y_of(p / 100)}"/>'
        f'<text class="muted" x="{left - 6}" y="{y_of(p / 100) + 4}" text-anchor="end">{p}%</text>'
        for p in (0, 25, 50, 75, 100)
    ]
    for metric in TREND_IDS:
        name = BY_ID[metric].name
        path, points, pen = [], [], "M"
        valued: list[str] = []  # every point, joined across days without a value (dashed)
        for d, x in zip(days, xs, strict=True):
            v = d.value(metric)
            if v is None:
                pen = "M"
                continue
            num, den = d.counts[metric]
            path.append(f"{pen}{x} {y_of(v)}")
            valued.append(f"{'L' if valued else 'M'}{x} {y_of(v)}")
            pen = "L"
            points.append(
                f'<circle class="point" data-series="{metric}" data-day="{d.day}" '
                f'data-value="{v}" cx="{x}" cy="{y_of(v)}" r="4" fill="{COLOURS[metric]}">'
                f"<title>{_a(name)} {d.day}: {percent(v)} ({num}/{den})</title></circle>"
            )
        if len(valued) > 1:
            parts.append(
                f'<path class="gap" stroke="{COLOURS[metric]}" d="{" ".join(valued)}"/>'
                f'<path class="line" data-series="{metric}" stroke="{COLOURS[metric]}" '
                f'd="{" ".join(path)}"/>'
            )
        parts.extend(points)
    parts.append(_day_labels(days, xs, bottom + 18))
    parts.append(_legend([(m, BY_ID[m].name) for m in TREND_IDS], 16))
    label = "Daily values of the metrics read from traces"
    return _svg("chart-trend-rates", label, 260, "".join(parts))


def _nice(n: int) -> int:
    """The top of a count axis with four ticks of 1, 2 or 5 × 10^k: at least ``n``."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if 4 * step * scale >= n:
                return 4 * step * scale
        scale *= 10


def trend_counts_chart(days: Sequence[Day]) -> str:
    """Turns and reflections per day, side by side."""
    top, bottom, left, right = 40, 190, 50, WIDTH - 20
    most = _nice(max([d.turns for d in days] + [d.reflections for d in days] + [1]))
    slot = (right - left) / len(days)
    bar = min(18.0, slot / 3)
    parts = []
    for k in range(5):
        v = most * k // 4
        y = round(bottom - (bottom - top) * k / 4, 1)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{right}" y1="{y}" y2="{y}"/>'
            f'<text class="muted" x="{left - 6}" y="{y + 4}" text-anchor="end">{v}</text>'
        )
    xs = [round(left + slot * (i + 0.5), 1) for i in range(len(days))]
    for d, x in zip(days, xs, strict=True):
        for offset, key, n in ((-bar, "turns", d.turns), (0.0, "reflections", d.reflections)):
            h = round((bottom - top) * n / most, 1)
            parts.append(
                f'<rect class="count {key}" data-day="{d.day}" data-count="{n}" '
                f'x="{round(x + offset, 1)}" y="{round(bottom - h, 1)}" width="{round(bar, 1)}" '
                f'height="{h}" fill="{COLOURS[key]}"><title>{d.day}: {n} {key}</title></rect>'
            )
    parts.append(f'<line class="axis" x1="{left}" x2="{right}" y1="{bottom}" y2="{bottom}"/>')
    parts.append(_day_labels(days, xs, bottom + 18))
    parts.append(_legend([("turns", "turns"), ("reflections", "reflections")], 16))
    return _svg("chart-trend-counts", "Turns and reflections per day", 220, "".join(parts))


def _table(report: HealthReport) -> str:
    out = []
    for dim, name in DIMENSIONS:
        rows = "".join(
            f'<tr data-metric="{m.id}"><td>{_a(m.definition.name)}</td>'
            f'<td class="num">{m.shown}</td>'
            f'<td class="num">{m.numerator}/{m.denominator}</td>'
            f"<td>{_a(m.definition.threshold.text)}</td>"
            f'<td><span class="mark {_mark_class(m.mark)}">{m.mark}</span></td>'
            f'<td class="what">{_a(m.definition.numerator)} / {_a(m.definition.denominator)}'
            + (f"<br><em>{_a(m.note)}</em>" if m.note else "")
            + "</td></tr>"
            for m in report.dimension(dim)
        )
        out.append(
            f'<h3 id="{dim}">{dim} · {_a(name)}</h3><table><thead><tr><th>metric</th>'
            "<th>value</th><th>count</th><th>healthy</th><th>mark</th><th>counted</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
    return "".join(out)


def render_html(report: HealthReport) -> str:
    marks = report.marks
    badges = " ".join(
        f'<span class="mark {_mark_class(k)}">{marks[k]} {k}</span>'
        for k in ("pass", "warn", "n/a")
    )
    if report.days:
        first, last = report.days[0].day, report.days[-1].day
        span = first if first == last else f"{first} – {last}"
        trend = (
            f'<p class="scope">UTC days {span}</p>'
            + trend_rates_chart(report.days)
            + trend_counts_chart(report.days)
        )
    else:
        trend = '<p class="empty">No turns or reflections in the window.</p>'
    title = f"Cognitive health · {report.pack}" if report.pack else "Cognitive health"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_a(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{_a(title)}</h1>"
        f'<p class="scope">{_a(report.scope())}</p><p>{badges}</p></header>'
        '<section id="thresholds"><h2>Metrics against their thresholds</h2>'
        f"{metrics_chart(report)}</section>"
        f'<section id="trend"><h2>Trend over days</h2>{trend}</section>'
        f'<section id="metrics"><h2>Metrics</h2>{_table(report)}</section>'
        f"<footer>charter {_a(__version__)} · charter health --format html</footer>"
        "</body></html>\n"
    )
