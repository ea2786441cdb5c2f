"""What ``charter trace ID`` and ``charter traces`` print, exactly: the header, one block per
step, values cut to the width in display cells (Chinese takes two), and the list table."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from charter.traces.model import TraceStep
from charter.traces.render import (
    WIDTH,
    duration,
    fit,
    render_json,
    render_list,
    render_trace,
    value_text,
)
from tests.support.traces import RECALL, T0, trace

GENERATE = TraceStep(
    "generate",
    3.0,
    1234.5,
    {"prompt": "用户画像：" + "长期持有稳健型基金，" * 12, "max_tokens": 256},
    {"text": "line1\nline2", "empty": "", "none": None, "tokens": 212, "entropy": [0.1, 0.25]},
)

FULL = """\
trace tr-1
  user      u1
  session   s1
  domain    finance
  tenant    acme
  started   2024-05-01T10:00:00Z
  duration  141.5 ms
  verdict   pass
  steps     2
  reply     第一行
            第二行

step 1: recall (12.2 ms, from +0.5 ms)
  decision  ladder: entity
  in        text: 上次说的合同第三条
            top_k: 3
  out       step: entity
            facts: [{"key": "contract", "value": "第三条"}]

step 2: generate (1.23 s, from +3.0 ms)
  in        prompt: 用户画像：长期持有稳健型基金，长期持有稳健型基金，长期持有稳健型基金，长期持有…
            max_tokens: 256
  out       text: line1\\nline2
            empty: ""
            none: null
            tokens: 212
            entropy: [0.1, 0.25]
"""

EMPTY = """\
trace tr-2
  user      u1
  session   s1
  domain    finance
  started   2024-05-01T10:00:00.500000Z
  duration  141.5 ms
  verdict   block
  steps     0
  reply     ""
"""

MULTI_LINE_DECISION = """\
step 1: reflect (0.0 ms, from +0.0 ms)
  decision  retry 1 of 2
            failed: no-promise
  out       error: RuntimeError
"""


def test_a_trace() -> None:
    shown = render_trace(
        trace("tr-1", tenant="acme", steps=(RECALL, GENERATE), reply="第一行\n第二行")
    )
    assert shown == FULL
    # the cut prompt: 99 cells, since one more wide character and the ellipsis would make 101
    assert max(cell_len(line) for line in shown.splitlines()) == WIDTH - 1


def test_a_trace_without_steps_or_reply() -> None:
    started = T0.replace(microsecond=500000)
    assert (
        render_trace(trace("tr-2", steps=(), reply="", verdict="block", started_at=started))
        == EMPTY
    )


def test_a_decision_on_several_lines() -> None:
    step = TraceStep(
        "reflect", 0.0, 0.0, {}, {"error": "RuntimeError"}, "retry 1 of 2\nfailed: no-promise"
    )
    shown = render_trace(trace("tr-3", steps=(step,)))
    assert shown.split("\n\n", 1)[1] == MULTI_LINE_DECISION


@pytest.mark.parametrize(
    ("text", "cells", "want"),
    [
        ("abc", 3, "abc"),
        ("abcd", 3, "ab…"),
        ("合同", 4, "合同"),
        ("合同条款", 6, "合同…"),
        ("合同条款", 5, "合同…"),  # a wide character that would stick out is left out
        ("a合同", 4, "a合…"),
        ("", 0, ""),
    ],
)
def test_fit_counts_display_cells(text: str, cells: int, want: str) -> None:
    assert fit(text, cells) == want
    assert cell_len(fit(text, cells)) <= cells


@pytest.mark.parametrize(
    ("ms", "want"),
    [
        (0.0, "0.0 ms"),
        (0.04, "0.0 ms"),
        (12.34, "12.3 ms"),
        (999.9, "999.9 ms"),
        (1000.0, "1.00 s"),
        (61234.0, "61.23 s"),
    ],
)
def test_duration(ms: float, want: str) -> None:
    assert duration(ms) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("合同", "合同"),
        ("a\nb", "a\\nb"),
        ("", '""'),
        (None, "null"),
        (False, "false"),
        (0.72, "0.72"),
        ({"年份": [2020, 2023]}, '{"年份": [2020, 2023]}'),
    ],
)
def test_value_text(value: object, want: str) -> None:
    assert value_text(value) == want


LIST = """\
id                      started               duration  user    session  domain   verdict   steps
tr-1hwsshg800000000001  2024-05-01T10:00:00Z  141.5 ms  用户甲  s1       finance  pass      2
tr-2                    2024-05-01T10:01:30Z  2.50 s    u1      s\\n2     finance  escalate  0
"""


def test_the_list_table() -> None:
    traces = [
        trace("tr-1hwsshg800000000001", user="用户甲"),
        trace(
            "tr-2", minutes=1.5, session="s\n2", duration_ms=2500.0, verdict="escalate", steps=()
        ),
    ]
    assert render_list(traces) == LIST


HOSTILE = "\x1b]0;root@prod\x07\x1b[2J好的\r已转账\x9b31m\u202egnp.exe"


def test_what_a_client_wrote_reaches_the_terminal_escaped() -> None:
    step = TraceStep("understand", 1.0, 0.0, {"text": HOSTILE}, {"intent": None})
    shown = render_trace(trace("tr-4", steps=(step,), reply=HOSTILE, user="u\x1b[31m"))
    assert "  user      u\\x1b[31m\n" in shown
    assert (
        "  reply     \\x1b]0;root@prod\\x07\\x1b[2J好的\\r已转账\\x9b31m\\u202egnp.exe\n" in shown
    )
    assert "  in        text: \\x1b]0;root@prod\\x07" in shown
    listed = render_list([trace("tr-4", user="u\x1b[31m")])
    assert "  u\\x1b[31m  " in listed.splitlines()[1]
    for out in (shown, listed, render_json({"reply": HOSTILE})):
        assert not any(ch in out for ch in "\x1b\x07\r\x9b\u202e"), out
