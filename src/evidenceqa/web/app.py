"""The web app: `create_app(settings)` opens the data home and the store at startup, closes them at
shutdown, and serves the JSON API (web/api.py) and the pages (web/pages.py). `evidenceqa serve` runs it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, status
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from evidenceqa.config import Settings
from evidenceqa.store import NotFound, open_store
from evidenceqa.web import api, pages
from evidenceqa.web.auth import ApiUser, LoginRequired, login_url
from evidenceqa.web.library import Library
from evidenceqa.web.services import Services

STATIC = Path(__file__).parent / "static"


def create_app(settings: Settings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        store = await run_in_threadpool(open_store, settings)
        try:
            library = await Library.open(settings)
        except BaseException:
            store.close()
            raise
        app.state.services = services = Services(settings, store, library)
        try:
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

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi(identity: ApiUser) -> dict[str, Any]:
        return app.openapi()

    app.middleware("http")(_security_headers)
    app.add_exception_handler(LoginRequired, _to_login)
    app.add_exception_handler(NotFound, _not_found)
    app.add_exception_handler(HTTPException, _http_error)
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
    return response


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path in ("/openapi.json", "/healthz")


async def _to_login(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, LoginRequired)
    return RedirectResponse(login_url(exc.next_path), status.HTTP_303_SEE_OTHER)


async def _not_found(request: Request, exc: Exception) -> Response:
    return await _http_error(request, HTTPException(status.HTTP_404_NOT_FOUND, "not found"))


async def _http_error(request: Request, exc: Exception) -> Response:
    """JSON for the API; a page for a person, with the reason and a way back."""
    assert isinstance(exc, HTTPException)
    if _is_api(request):
        return await http_exception_handler(request, exc)
    return pages.render(
        request, "error.html", status_code=exc.status_code, status=exc.status_code, detail=exc.detail
    )
