"""The web app: `create_app(settings)` opens the data home and the store at startup, closes them at
shutdown, and serves the JSON API (web/api.py) and the pages (web/pages.py). `evidenceqa serve` runs it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import DataError, InterfaceError, OperationalError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.routing import Route

from evidenceqa.store import NotFound, open_store
from evidenceqa.web import account, api, dashboard, mcp, openai_api, pages, review, tokens
from evidenceqa.web.agent_access import AgentAccess
from evidenceqa.web.auth import ApiUser, LoginRequired, login_url
from evidenceqa.web.guards import redact_access_log
from evidenceqa.web.library import Library
from evidenceqa.web.options import AppOptions
from evidenceqa.web.services import Services

STATIC = Path(__file__).parent / "static"
DATABASE_DOWN = "the database is unavailable; try again in a moment"
UNSTORABLE = "a value in this request cannot be stored (a NUL character, for instance)"
log = logging.getLogger(__name__)


def create_app(settings: AppOptions) -> FastAPI:
    # The MCP server's tools reach this app's library and guards once the lifespan has opened them.
    mcp_endpoint, mcp_sessions = mcp.http_app(
        mcp.build_server(lambda: AgentAccess.of(app), mcp.http_reader), lambda: AgentAccess.of(app)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await run_in_threadpool(open_store, settings)
        try:
            library = await Library.open(settings)
        except BaseException:
            store.close()
            raise
        app.state.services = services = Services(settings, store, library)
        redact_access_log(settings)  # after uvicorn has set up its loggers
        try:
            async with mcp_sessions.run():
                yield
        finally:
            # Answers whose client left are still being stored: let them finish first.
            await asyncio.gather(*services.tasks, return_exceptions=True)
            library.close()
            store.close()

    # The spec is served below behind a login like every other route; the interactive docs would
    # load their scripts from a CDN, which a self-hosted install cannot reach.
    app = FastAPI(
        title="evidenceqa",
        summary="Evidence-based answers from your own medical library, with citations.",
        lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None,
    )  # fmt: skip
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(dashboard.router)
    app.include_router(review.router)
    app.include_router(tokens.router)
    app.include_router(account.router)
    app.include_router(openai_api.router)
    app.router.routes.append(Route(mcp.PATH, mcp_endpoint, methods=["GET", "POST", "DELETE"]))

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(identity: ApiUser) -> dict[str, Any]:
        return app.openapi()

    app.middleware("http")(_security_headers)
    app.add_exception_handler(LoginRequired, _to_login)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(HTTPException, _http_error)
    for unavailable in (OperationalError, InterfaceError):
        app.add_exception_handler(unavailable, _database_down)
    app.add_exception_handler(DataError, _unstorable)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    return app


# Defence in depth behind escaping: no script but our own file runs, no page frames this one.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


async def _security_headers(
    request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    response = await call_next(request)
    response.headers.update(SECURITY_HEADERS)
    # A ward's computers are shared: no page or answer is kept by the browser or a proxy, so the back
    # button after a logout shows nothing. Only the app's own scripts and styles may be cached.
    if not request.url.path.startswith("/static/"):
        response.headers["Cache-Control"] = "no-store"
    return response


def _is_openai(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path in (
        "/openapi.json",
        "/healthz",
        "/readyz",
    )


async def _to_login(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, LoginRequired)
    return RedirectResponse(login_url(exc.next_path), status.HTTP_303_SEE_OTHER)


async def _not_found(request: Request, exc: Exception) -> Response:
    return await _http_error(request, HTTPException(status.HTTP_404_NOT_FOUND, "not found"))


async def _database_down(request: Request, exc: Exception) -> Response:
    """The database is down or unreachable (restarting, network cut): 503 until it is back; the
    engine's pre-ping reconnects on its own. Only the driver's error type is logged: SQLAlchemy's
    message quotes the statement's parameters."""
    cause = getattr(exc, "orig", None) or exc
    route = getattr(request.scope.get("route"), "path", "?")  # the template: no token from an invite link
    log.warning("database unavailable (%s): %s %s answered 503", type(cause).__name__, request.method, route)
    return await _http_error(
        request,
        HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, DATABASE_DOWN, headers={"Retry-After": "5"}),
    )


async def _unstorable(request: Request, exc: Exception) -> Response:
    """A value the database refuses (PostgreSQL stores no NUL in text): the request's fault, not a crash."""
    return await _http_error(request, HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, UNSTORABLE))


async def _invalid_request(request: Request, exc: Exception) -> Response:
    """422 naming each field and what is wrong with it, without echoing the value sent: it may be a
    password, and one that is not text (an unpaired surrogate) could not even be encoded."""
    assert isinstance(exc, RequestValidationError)
    problems = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))}
        for e in exc.errors()
    ]
    if _is_openai(request):
        # OpenAI answers a malformed request 400, naming the first bad parameter.
        fields = [".".join(map(str, p["loc"][1:])) or "body" for p in problems]
        message = "; ".join(f"{field}: {p['msg']}" for field, p in zip(fields, problems, strict=True))
        refusal = openai_api.OpenAIError(status.HTTP_400_BAD_REQUEST, message, param=fields[0])
        return openai_api.error_response(refusal.status_code, message, exc=refusal)
    if _is_api(request):
        return JSONResponse({"detail": problems}, status.HTTP_422_UNPROCESSABLE_CONTENT)
    detail = "; ".join(f"{' › '.join(str(part) for part in p['loc'])}: {p['msg']}" for p in problems)
    return pages.render(request, "error.html", status_code=422, status=422, detail=detail)


async def _http_error(request: Request, exc: Exception) -> Response:
    """JSON for the API; a page for a person, with the reason and a way back."""
    assert isinstance(exc, HTTPException)
    if _is_openai(request):
        return openai_api.error_response(exc.status_code, str(exc.detail), exc.headers, exc)
    if _is_api(request):
        return await http_exception_handler(request, exc)
    return pages.render(
        request, "error.html", status_code=exc.status_code, status=exc.status_code, detail=exc.detail
    )
