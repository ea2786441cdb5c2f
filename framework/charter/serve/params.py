"""The parameters of the endpoints: ids in paths and queries, each published with the
pattern ``charter.serve.ids`` checks it with, and query parameters an endpoint does not declare
refused rather than ignored."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request
from fastapi.routing import APIRoute

from charter.diagnostics import did_you_mean
from charter.serve.errors import ApiError
from charter.serve.ids import ID_PATTERN, MAX_ID, USER_ID_PATTERN, USER_ID_RULE

# the ids are checked by check_id / check_user_id, with messages a client can act on; the
# patterns are published for clients and generators (pydantic's engine reads no lookahead)
_ID = {"pattern": ID_PATTERN}
_USER_ID = {"pattern": USER_ID_PATTERN}
UserId = Annotated[
    str,
    Path(
        min_length=1,
        max_length=MAX_ID,
        description=f"The user, within the caller's tenant: {USER_ID_RULE}.",
        json_schema_extra=_USER_ID,
    ),
]
TraceId = Annotated[str, Path(min_length=1, max_length=MAX_ID, json_schema_extra=_ID)]
SessionFilter = Annotated[
    str | None,
    Query(min_length=1, max_length=MAX_ID, description="Only this session.", json_schema_extra=_ID),
]
UserFilter = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=MAX_ID,
        description=f"Only this user: {USER_ID_RULE}.",
        json_schema_extra=_USER_ID,
    ),
]


def known_query(request: Request) -> None:
    """A 422 for a query parameter the endpoint does not declare: a misspelt filter
    (``?sesion_id=``) would otherwise widen what a client reads, silently."""
    route = request.scope.get("route")
    declared = (
        {p.alias for p in route.dependant.query_params} if isinstance(route, APIRoute) else set()
    )
    for name in request.query_params:
        if name not in declared:
            hint = did_you_mean(name, declared) if declared else "it takes no query parameter"
            message = f"unknown query parameter '{name}'" + (f" ({hint})" if hint else "")
            raise ApiError(422, "invalid_request", message)
