"""``charter serve``: the agent behind HTTP (ARCHITECTURE §12, §13).

One agent per process, built when the application starts and shared by every request; a turn
runs on a worker thread (``Agent.aturn``), so the event loop keeps accepting requests while the
model generates. Beside the requests the process runs the goal sweeper and the memory lifecycle
(``charter.serve.jobs``: ``serve.sweep_every``, ``serve.maintain_every``). Several processes
(``uvicorn --workers``, several hosts) share state through the database named by the
configuration: PostgreSQL for that.

Every request but ``/healthz`` carries a tenant's bearer token, and every user id is scoped to
that tenant before a store sees it (``charter.serve.auth``): another tenant's user is a 404,
exactly like a user who never existed.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from charter._version import __version__
from charter.agent import Agent
from charter.config import Config
from charter.config.specs import every_seconds
from charter.contracts.registry import Registry
from charter.llm.errors import LLMError
from charter.serve import views
from charter.serve.auth import Tenants, scoped, tenant_problems
from charter.serve.body import parse_turn
from charter.serve.errors import ApiError, ErrorBody, install
from charter.serve.faults import RETRY_AFTER_S, database_error, database_failure, read_retried
from charter.serve.ids import (
    check_id,
    check_user_id,
)
from charter.serve.jobs import Background, agent_jobs
from charter.serve.middleware import BODY_TIMEOUT_S, AccessLog, BodyLimit
from charter.serve.models import (
    Alive,
    Facts,
    Forgotten,
    Goals,
    Health,
    MemoryExport,
    TraceOut,
    Traces,
    TurnReply,
    TurnRequest,
)
from charter.serve.params import SessionFilter, TraceId, UserFilter, UserId, known_query
from charter.store.clock import Clock
from charter.store.migrations import SchemaError

log = logging.getLogger("charter.serve")
AgentFactory = Callable[[], Agent]
DESCRIPTION = """\
Charter's agent over HTTP. Every endpoint but `/healthz` needs `Authorization: Bearer <token>`,
a tenant's token; user ids are scoped to that tenant. Errors are
`{"error": {"code": ..., "message": ...}}`."""


@dataclass
class Service:
    config: Config
    tenants: Tenants
    factory: AgentFactory
    agent: Agent | None = None
    # changed on the event loop's thread only: no lock
    counts: dict[str, int] = field(
        default_factory=lambda: {"turns": 0, "turn_errors": 0, "in_flight": 0}
    )

    def ready(self) -> Agent:
        if self.agent is None:  # a request racing start-up or shutdown
            raise ApiError(503, "unavailable", "the agent is not running")
        return self.agent


def default_agent(
    config: Config,
    environ: Mapping[str, str],
    registry: Registry | None = None,
    clock: Clock | None = None,
) -> Agent:
    """The agent the configuration describes, ``[model.options]`` given to its backend, on
    ``clock`` (``charter serve --now``: the turns' clock, and so their skills') or the wall
    clock."""
    from charter.agent.configured import agent_from_config, make_llm
    from charter.plugins.host import default_host

    registry = registry or default_host().registry
    llm = make_llm(config, registry, config.model.options)
    return agent_from_config(config, llm=llm, registry=registry, environ=environ, clock=clock)


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


_bearer = HTTPBearer(auto_error=False, description="The tenant's bearer token.")


async def _tenant(
    request: Request,
    # declared for the OpenAPI document; the header is parsed below, to tell its faults apart
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> str:
    tenant = _service(request).tenants.authenticate(request.headers.get("authorization"))
    request.state.tenant = tenant
    return tenant


Tenant = Annotated[str, Depends(_tenant)]


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": ErrorBody} for s in statuses}


def _user(request: Request, tenant: str, user_id: str) -> tuple[Agent, str]:
    """The agent and the stored id of a user of this tenant; 404 for anyone else."""
    check_user_id("user_id", user_id)
    agent = _service(request).ready()
    stored = scoped(tenant, user_id)
    if not views.known(agent.parts, stored, tenant):
        raise ApiError(404, "not_found", f"no user '{user_id}'")
    return agent, stored


def create_app(
    config: Config,
    *,
    agent_factory: AgentFactory | None = None,
    environ: Mapping[str, str] | None = None,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> FastAPI:
    """The application for a configuration that passes ``Config.check_serve`` (else
    ValueError). ``agent_factory`` makes the agent when the application starts (default:
    the configured pack, model backend and database); the application closes it at shutdown.
    ``body_timeout_s`` bounds the time a request's body may take to arrive (408 after)."""
    env = os.environ if environ is None else environ
    problems = [d for d in (*config.check_serve(env), *tenant_problems(config)) if d.is_error]
    if problems:
        raise ValueError(
            "the configuration cannot serve:\n" + "\n".join(d.headline() for d in problems)
        )
    service = Service(
        config,
        Tenants.from_config(config, env),
        agent_factory or (lambda: default_agent(config, env)),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # a pack compiles and stores migrate here: off the event loop
        try:
            service.agent = await asyncio.to_thread(service.factory)
        except (ImportError, sa.exc.SQLAlchemyError, SchemaError) as exc:
            # uvicorn logs the exception by its type only (logs.JsonFormatter): say why here
            log.error(database_failure(config.database.url, exc))
            raise
        serve = config.serve
        jobs = Background(
            agent_jobs(
                service.agent, every_seconds(serve.sweep_every), every_seconds(serve.maintain_every)
            )
        )
        app.state.jobs = jobs
        jobs.start()
        try:
            yield
        finally:
            await jobs.stop()  # before the stores close: a pass in progress finishes first
            agent, service.agent = service.agent, None
            agent.close()

    app = FastAPI(
        title="Charter",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(known_query)],
    )
    app.state.service = service
    install(app)
    app.add_exception_handler(sa.exc.SQLAlchemyError, database_error)
    app.add_middleware(BodyLimit, max_bytes=config.serve.max_body_bytes, timeout_s=body_timeout_s)
    app.add_middleware(AccessLog)  # the outermost: it sees the 413s too
    _routes(app, service)
    return app


def _routes(app: FastAPI, service: Service) -> None:
    turn_body = {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": TurnRequest.model_json_schema()}},
        }
    }

    @app.post(
        "/v1/turns",
        summary="Run one turn",
        tags=["turns"],
        responses={200: {"model": TurnReply}, **_errors(400, 401, 408, 413, 422, 502, 503)},
        openapi_extra=turn_body,
    )
    async def turn(request: Request, tenant: Tenant) -> JSONResponse:
        # parsed here, after authentication: a malformed body from a stranger is a 401
        req = parse_turn(await request.body())
        agent = service.ready()
        stored = scoped(tenant, req.user_id)
        counts = service.counts
        counts["turns"] += 1
        counts["in_flight"] += 1
        try:
            reply = await agent.aturn(
                stored, req.session_id, req.text, role=req.role, consent=req.consent, tenant=tenant
            )
        except LLMError as exc:
            counts["turn_errors"] += 1
            # the type only: a backend's message may quote what the user wrote
            raise ApiError(
                502, "model_unavailable", f"the model backend failed ({type(exc).__name__})"
            ) from None
        except BaseException:
            counts["turn_errors"] += 1
            raise
        finally:
            counts["in_flight"] -= 1
        request.state.trace_id = reply.trace_id
        return JSONResponse(views.unscope(reply.as_dict(), stored, req.user_id))

    @app.get(
        "/v1/users/{user_id}/memory",
        summary="List a user's active facts",
        tags=["memory"],
        responses={200: {"model": Facts}, **_errors(401, 404, 422, 503)},
    )
    def memory(request: Request, tenant: Tenant, user_id: UserId) -> JSONResponse:
        def read() -> JSONResponse:
            agent, stored = _user(request, tenant, user_id)
            return JSONResponse(views.facts(agent.parts, stored, user_id))

        return read_retried(read)

    @app.get(
        "/v1/users/{user_id}/memory/export",
        summary="Export everything held about a user",
        tags=["memory"],
        responses={200: {"model": MemoryExport}, **_errors(401, 404, 422, 503)},
    )
    def export(request: Request, tenant: Tenant, user_id: UserId) -> JSONResponse:
        def read() -> JSONResponse:
            agent, stored = _user(request, tenant, user_id)
            return JSONResponse(views.export(agent.parts, stored, user_id))

        return read_retried(read)

    @app.delete(
        "/v1/users/{user_id}",
        summary="Forget a user: facts, summaries, turns and traces",
        tags=["memory"],
        responses={200: {"model": Forgotten}, **_errors(401, 404, 422, 503)},
    )
    def forget(request: Request, tenant: Tenant, user_id: UserId) -> JSONResponse:
        agent, stored = _user(request, tenant, user_id)
        deleted = agent.forget(stored, tenant=tenant)
        return JSONResponse({"user_id": user_id, "deleted": deleted})

    @app.get(
        "/v1/users/{user_id}/goals",
        summary="A user's goal trees",
        tags=["goals"],
        responses={200: {"model": Goals}, **_errors(401, 404, 422, 503)},
    )
    def goals(
        request: Request,
        tenant: Tenant,
        user_id: UserId,
        session_id: SessionFilter = None,
    ) -> JSONResponse:
        if session_id is not None:
            check_id("session_id", session_id)

        def read() -> JSONResponse:
            agent, stored = _user(request, tenant, user_id)
            return JSONResponse(views.goals(agent.parts, stored, user_id, session_id))

        return read_retried(read)

    @app.get(
        "/v1/traces/{trace_id}",
        summary="One turn's trace",
        tags=["traces"],
        responses={200: {"model": TraceOut}, **_errors(401, 404, 422, 503)},
    )
    def trace(
        request: Request,
        tenant: Tenant,
        trace_id: TraceId,
    ) -> JSONResponse:
        check_id("trace_id", trace_id)
        store = service.ready().parts.traces
        found = (
            read_retried(lambda: store.get(trace_id, tenant=tenant)) if store is not None else None
        )
        if found is None:
            raise ApiError(404, "not_found", f"no trace '{trace_id}'")
        request.state.trace_id = found.id
        return JSONResponse(views.trace(found.as_dict(), tenant))

    @app.get(
        "/v1/traces",
        summary="The newest traces, of one user or of the tenant",
        tags=["traces"],
        responses={200: {"model": Traces}, **_errors(401, 404, 422, 503)},
    )
    def traces(
        request: Request,
        tenant: Tenant,
        user_id: UserFilter = None,
        session_id: SessionFilter = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
    ) -> JSONResponse:
        if session_id is not None:
            check_id("session_id", session_id)

        def read() -> JSONResponse:
            if user_id is not None:
                agent, stored = _user(request, tenant, user_id)
            else:
                agent, stored = service.ready(), None
            store = agent.parts.traces
            found = (
                []
                if store is None
                else store.list(user_id=stored, session_id=session_id, limit=limit, tenant=tenant)
            )
            return JSONResponse({"traces": [views.trace(t.as_dict(), tenant) for t in found]})

        return read_retried(read)

    @app.get(
        "/v1/health",
        summary="What is loaded and whether it works",
        tags=["health"],
        responses={200: {"model": Health}, 503: {"model": Health}, **_errors(401)},
    )
    def health(request: Request, tenant: Tenant) -> JSONResponse:
        agent = service.ready()
        data, ok = views.health(agent, tenant, service.config.model.backend, service.counts)
        if ok:
            return JSONResponse(data)
        return JSONResponse(data, status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.get(
        "/healthz",
        summary="Liveness: the process answers",
        tags=["health"],
        responses={200: {"model": Alive}},
    )
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @app.head(
        "/healthz",
        summary="Liveness, headers only",
        tags=["health"],
        responses={200: {"description": "The process answers."}},
    )
    async def healthz_head() -> Response:
        # the GET's headers without its body (a HEAD's body would break the connection)
        length = len(JSONResponse({"status": "ok"}).body)
        return Response(media_type="application/json", headers={"content-length": str(length)})
