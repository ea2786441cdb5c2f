"""Structured logs: one JSON object per line, through the standard ``logging`` module.

A record's message and the fields in ``FIELDS`` (passed as ``extra=``) are written; nothing
else of the record is, so a field added by a library cannot leak into the log. The access log
(``charter.serve.access``) has one line per request: method, path (the route's template, such
as ``/v1/users/{user_id}/memory``, so no user id is logged: ``logged_path``), status,
duration, tenant and the turn's trace id. Tokens, bodies and user text are never logged; an
exception is logged by its type and its frames, not its message, which may quote the user.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import traceback
from collections.abc import Mapping
from typing import Any

from charter.text.display import shown_json

FIELDS = (
    "method",
    "path",
    "status",
    "duration_ms",
    "tenant",
    "trace_id",
    "error",
    "fault",
    "domain",
)
ACCESS = "charter.serve.access"
UNKNOWN_SEGMENT = "{?}"


def logged_path(scope: Mapping[str, Any]) -> str:
    """The path a log line may show: the template of the route that matched
    (``/v1/users/{user_id}/memory``), else the path with every segment that is no literal
    segment of a route replaced by ``{?}`` (``/v1/users/{?}/{?}/memory`` for an id with a
    ``/``): a path no route matched still never puts an id in the log."""
    template = getattr(scope.get("route"), "path", None)
    if isinstance(template, str) and template:
        return template
    literals = {
        segment
        for route in getattr(scope.get("app"), "routes", ())
        for segment in str(getattr(route, "path", "")).split("/")
        if "{" not in segment
    }
    return "/".join(
        s if s in literals else UNKNOWN_SEGMENT for s in str(scope.get("path", "")).split("/")
    )


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in FIELDS:
            if name in record.__dict__:
                out[name] = record.__dict__[name]
        if record.exc_info and record.exc_info[0] is not None:
            out.setdefault("error", record.exc_info[0].__name__)
            out["frames"] = traceback.format_tb(record.exc_info[2])
        # a user id or a path may hold C1 controls or direction overrides: escaped, still JSON
        return shown_json(json.dumps(out, ensure_ascii=False, default=str))


def logging_config(level: str = "info") -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for ``charter serve``: Charter's and uvicorn's loggers
    write JSON lines to stderr (uvicorn's own access log is off: ours replaces it)."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    named = {"handlers": ["stderr"], "level": level.upper(), "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {name: dict(named) for name in ("charter", "uvicorn", "uvicorn.error")},
    }
