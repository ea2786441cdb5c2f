"""Traces as text for ``charter trace ID`` and ``charter traces``, and as JSON.

Plain text with fixed widths, not rich markup: it is read in terminals and pasted into issues
and chats, and the tests pin it exactly. Widths are display cells, not characters (a Chinese
character takes two), so columns stay aligned and a truncated value (``…``) never runs past
``WIDTH`` cells, whatever the script.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.cells import cell_len, get_character_cell_size

from charter.text.display import shown, shown_json
from charter.traces.model import Trace, TraceStep, iso

WIDTH = 100  # cells per line for step inputs and outputs
LABEL = 10  # "duration" and a space or two: the column values start at
ELLIPSIS = "…"
LIST_HEADERS = ("id", "started", "duration", "user", "session", "domain", "verdict", "steps")


def fit(text: str, cells: int) -> str:
    """``text`` if it takes at most ``cells`` display cells, else cut to ``cells`` with ``…``."""
    if cell_len(text) <= cells:
        return text
    room, kept = cells - cell_len(ELLIPSIS), []
    for ch in text:
        room -= get_character_cell_size(ch)
        if room < 0:
            break
        kept.append(ch)
    return "".join(kept) + ELLIPSIS


def duration(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def value_text(value: Any) -> str:
    """A value on one line: strings as they are (newlines as ``\\n``), the rest as JSON."""
    if isinstance(value, str):
        return value.replace("\n", "\\n") if value else '""'
    return json.dumps(value, ensure_ascii=False)


def _row(label: str, text: str) -> str:
    return f"  {label:<{LABEL}}{text}".rstrip()


def _block(label: str, text: str) -> list[str]:
    """A field whose text may have several lines: the later ones under the first."""
    # lines are cut at newlines only: a CR, U+2028 or U+0085 in a value is shown escaped
    first, *rest = text.split("\n") if text else [""]
    return [_row(label, first)] + [_row("", line) for line in rest]


def _pairs(label: str, values: Mapping[str, Any]) -> list[str]:
    room = WIDTH - 2 - LABEL
    lines = [fit(f"{key}: {value_text(v)}", room) for key, v in values.items()]
    return [_row(label if i == 0 else "", line) for i, line in enumerate(lines)]


def render_step(number: int, step: TraceStep) -> list[str]:
    head = f"step {number}: {step.name} ({duration(step.duration_ms)}, "
    lines = [head + f"from +{duration(step.started_ms)})"]
    if step.decision:
        lines += _block("decision", step.decision)
    lines += _pairs("in", step.inputs)
    lines += _pairs("out", step.outputs)
    return lines


def render_trace(trace: Trace) -> str:
    """The header (who, where, when, how long, the verdict and the reply), then one block
    per step in the order the steps started."""
    lines = [f"trace {trace.id}"]
    fields = [
        ("user", trace.user_id),
        ("session", trace.session_id),
        ("domain", trace.domain),
        *([("tenant", trace.tenant)] if trace.tenant is not None else []),
        ("started", iso(trace.started_at)),
        ("duration", duration(trace.duration_ms)),
        ("verdict", trace.verdict),
        ("steps", str(len(trace.steps))),
    ]
    lines += [_row(label, text) for label, text in fields]
    lines += _block("reply", trace.reply or '""')
    for number, step in enumerate(trace.steps, start=1):
        lines += ["", *render_step(number, step)]
    # what a user or a model wrote reaches the operator's terminal escaped (ESC, CSI, CR...)
    return shown("\n".join(lines)) + "\n"


def render_json(data: Any) -> str:
    return shown_json(json.dumps(data, ensure_ascii=False, indent=2)) + "\n"


def render_trace_json(trace: Trace) -> str:
    return render_json(trace.as_dict())


def _second(trace: Trace) -> str:
    # to the second, like the tickets table: the table stays narrow; the trace has the rest
    return iso(trace.started_at.replace(microsecond=0))


def _cell(text: str) -> str:
    return shown(text.replace("\n", "\\n")) or "-"


def render_list(traces: Sequence[Trace]) -> str:
    """A table, newest first as given: one trace a line."""
    rows = [LIST_HEADERS] + [
        tuple(
            _cell(v)
            for v in (
                t.id,
                _second(t),
                duration(t.duration_ms),
                t.user_id,
                t.session_id,
                t.domain,
                t.verdict,
                str(len(t.steps)),
            )
        )
        for t in traces
    ]
    widths = [max(cell_len(r[c]) for r in rows) for c in range(len(LIST_HEADERS) - 1)]
    lines = [
        "".join(cell + " " * (w - cell_len(cell) + 2) for cell, w in zip(r, widths, strict=False))
        + r[-1]
        for r in rows
    ]
    return "".join(line.rstrip() + "\n" for line in lines)
