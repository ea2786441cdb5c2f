"""Traces (ARCHITECTURE §12, issue 7): every step of a turn with its inputs, outputs, timing and
decision, recorded by the turn loop, stored next to the goals and read by ``charter trace ID``.

The model and the recorder import nothing heavy, so the turn loop can record without loading
SQLAlchemy; the store lives in ``charter.traces.store``."""

from charter.traces.model import Trace, TraceStep, jsonable
from charter.traces.recorder import StepHandle, TraceIds, TraceRecorder, new_trace_id

__all__ = [
    "StepHandle",
    "Trace",
    "TraceIds",
    "TraceRecorder",
    "TraceStep",
    "jsonable",
    "new_trace_id",
]
