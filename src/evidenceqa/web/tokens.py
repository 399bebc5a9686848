"""API tokens for scripts and integrations: each user makes, lists and revokes their own.

A token is shown once, when it is made; only its hash is stored. Tokens are managed from a login
session only, never with a token: a leaked token is ended by revoking it, and cannot have made
copies of itself that outlive it.

- `GET /tokens`: the user's tokens (name, made, last used) and a form to make one.
- `POST /tokens`: make one; the page shows it once. `POST /tokens/{id}/revoke`: revoke one.
- `GET /api/tokens`, `POST /api/tokens` (201, the token in the body, once),
  `DELETE /api/tokens/{id}` (204; 404 for a token of someone else's).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, HTTPException, Request, Response, status
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from evidenceqa.store import EntitlementError, accounts
from evidenceqa.web.auth import ApiUser, Identity, PageUser, public_base
from evidenceqa.web.pages import render
from evidenceqa.web.schemas import NewTokenOut, RowId, TokenIn, TokenOut
from evidenceqa.web.services import services_of

router = APIRouter()
SESSION_ONLY = "API tokens are managed from a login session, not with a token"


def _session_only(identity: Identity) -> Identity:
    if identity.session is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, SESSION_ONLY)
    return identity


async def _api_session(identity: ApiUser) -> Identity:
    return _session_only(identity)


async def _page_session(identity: PageUser) -> Identity:
    return _session_only(identity)


ApiSession = Annotated[Identity, Depends(_api_session)]
PageSession = Annotated[Identity, Depends(_page_session)]


@router.get("/tokens", response_class=HTMLResponse, include_in_schema=False)
async def tokens_page(request: Request, identity: PageSession) -> Response:
    return await _page(request, identity)


@router.post("/tokens", response_class=HTMLResponse, include_in_schema=False)
async def make_token_page(
    request: Request,
    identity: PageSession,
    name: Annotated[str, Form(max_length=200)],
    collections: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    store = services_of(request).store
    held = [c.strip() for c in collections.split(",") if c.strip()] or None
    try:
        record, raw = await run_in_threadpool(accounts.create_api_token, store, identity.user, name, held)
    except (accounts.AccountError, EntitlementError) as exc:
        return await _page(request, identity, status.HTTP_400_BAD_REQUEST, error=str(exc))
    return await _page(request, identity, status.HTTP_201_CREATED, new_token=raw, new_name=record.name)


@router.post("/tokens/{token_id}/revoke", include_in_schema=False)
async def revoke_token_page(request: Request, token_id: RowId, identity: PageSession) -> Response:
    store = services_of(request).store
    if not await run_in_threadpool(accounts.revoke_api_token, store, identity.user, token_id):
        return await _page(request, identity, status.HTTP_404_NOT_FOUND, error="No such token of yours.")
    return RedirectResponse("/tokens", status_code=status.HTTP_303_SEE_OTHER)


async def _page(request: Request, identity: Identity, status_code: int = 200, **context: Any) -> Response:
    tokens = await run_in_threadpool(accounts.api_tokens_of, services_of(request).store, identity.user)
    base = public_base(services_of(request).settings)
    return render(request, "tokens.html", identity, status_code, tokens=tokens, base_url=base, **context)


@router.get("/api/tokens", response_model=list[TokenOut], tags=["tokens"])
async def list_tokens(request: Request, identity: ApiSession) -> list[TokenOut]:
    """The caller's API tokens (never the tokens themselves: only their hashes are kept)."""
    found = await run_in_threadpool(accounts.api_tokens_of, services_of(request).store, identity.user)
    return [TokenOut.model_validate(token) for token in found]


@router.post("/api/tokens", response_model=NewTokenOut, status_code=status.HTTP_201_CREATED, tags=["tokens"])
async def make_token(body: TokenIn, request: Request, identity: ApiSession) -> NewTokenOut:
    """A new token for scripts; the response is the only time it is shown."""
    store = services_of(request).store
    try:
        record, raw = await run_in_threadpool(
            accounts.create_api_token, store, identity.user, body.name, body.collections
        )
    except (accounts.AccountError, EntitlementError) as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    return NewTokenOut(**TokenOut.model_validate(record).model_dump(), token=raw)


@router.delete("/api/tokens/{token_id}", status_code=status.HTTP_204_NO_CONTENT, tags=["tokens"])
async def revoke_token(token_id: RowId, request: Request, identity: ApiSession) -> Response:
    """Revoke one of the caller's tokens: requests with it are refused from now on."""
    store = services_of(request).store
    if not await run_in_threadpool(accounts.revoke_api_token, store, identity.user, token_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, "no such token of yours")
    return Response(status_code=status.HTTP_204_NO_CONTENT)
