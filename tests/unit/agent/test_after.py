"""``after.scrubbed``: every text of a trace goes through the scrubber before it is stored —
the reply, each step's inputs and outputs, and its decision (issue 16: the reflect step's
``回答必须包含：6222026815398387、…`` was stored as it was)."""

from __future__ import annotations

from datetime import UTC, datetime

from charter.agent.after import scrubbed
from charter.traces.model import Trace, TraceStep

CARD = "6222026815398387"


def scrub(text: str) -> str:
    return text.replace(CARD, "[BANK_CARD]")


def test_every_text_of_a_trace_is_scrubbed() -> None:
    step = TraceStep(
        "reflect",
        0.0,
        1.0,
        inputs={"query": f"卡号{CARD}", "args": [CARD, {"card": CARD}], "n": 3},
        outputs={"error": f"bad {CARD}"},
        decision=f"回答必须包含：{CARD}、退款",
    )
    trace = Trace(
        "t1", "u1", "s1", "ecommerce", datetime(2024, 5, 1, tzinfo=UTC), 1.0, (step,), CARD, "pass"
    )
    got = scrubbed(trace, scrub)
    assert got.reply == "[BANK_CARD]"
    (s,) = got.steps
    assert s.decision == "回答必须包含：[BANK_CARD]、退款"
    assert s.inputs == {
        "query": "卡号[BANK_CARD]",
        "args": ["[BANK_CARD]", {"card": "[BANK_CARD]"}],
        "n": 3,
    }
    assert s.outputs == {"error": "bad [BANK_CARD]"}
    assert CARD not in str(got.as_dict())
