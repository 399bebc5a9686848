"""Who is asking: a login session (cookie + CSRF token) or an API token, as route dependencies.

- API routes (`/api/...`, `/openapi.json`) depend on `api_identity`: no valid session or token → 401.
- HTML routes depend on `page_identity`: no valid session → a redirect to /login.
- Unsafe methods (POST…) with a session cookie must echo the session's CSRF token, in the
  `X-CSRF-Token` header (API) or the `csrf_token` form field (HTML forms), else 403. A bearer token
  is exempt: a browser never attaches it on its own, so another site cannot forge a request with it.
- `api_admin` / `page_admin` also require an admin: 403 for anyone else.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote

from fastapi import Depends, HTTPException, Request, Response, status
from starlette.concurrency import run_in_threadpool

from evidenceqa.store import User, session_user, token_owner
from evidenceqa.web.entitlements import Reader, reader_of
from evidenceqa.web.options import AppOptions
from evidenceqa.web.services import Services, services_of

SESSION_COOKIE = "evidenceqa_session"
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


@dataclass(frozen=True)
class Identity:
    user: User
    csrf: str | None  # the login session's CSRF token; None for an API token, which needs none
    session: str | None  # the session cookie's token, to end it at logout
    token_collections: list[str] | None = None  # the API token's collections, when it is held to some


class LoginRequired(Exception):
    """Raised by HTML routes; the app turns it into a redirect to the login page."""

    def __init__(self, next_path: str) -> None:
        self.next_path = next_path


def identify(services: Services, request: Request) -> Identity | None:
    """The request's user by its bearer token, else by its session cookie; None if neither is valid.
    A bearer header that is wrong is not retried as a cookie: the caller meant the token."""
    scheme, _, raw = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        owner = token_owner(services.store, raw.strip()) if raw.strip() else None
        return Identity(owner[0], None, None, owner[1]) if owner is not None else None
    cookie = request.cookies.get(SESSION_COOKIE)
    found = session_user(services.store, cookie) if cookie else None
    return Identity(found[0], found[1], cookie) if found is not None else None


def csrf_ok(identity: Identity, sent: str | None) -> bool:
    if identity.csrf is None:
        return True
    return sent is not None and hmac.compare_digest(sent.encode(), identity.csrf.encode())


async def api_identity(request: Request) -> Identity:
    identity = await run_in_threadpool(identify, services_of(request), request)
    if identity is None:
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED, "log in or send an API token",
            headers={"WWW-Authenticate": "Bearer"},
        )  # fmt: skip
    if request.method not in SAFE_METHODS and not csrf_ok(identity, request.headers.get(CSRF_HEADER)):
        raise HTTPException(status.HTTP_403_FORBIDDEN, f"missing or wrong {CSRF_HEADER} header")
    return identity


async def page_identity(request: Request) -> Identity:
    identity = await run_in_threadpool(identify, services_of(request), request)
    if identity is None:
        raise LoginRequired(request.url.path)
    if request.method not in SAFE_METHODS:
        sent = (await request.form()).get(CSRF_FIELD)
        if not csrf_ok(identity, sent if isinstance(sent, str) else None):
            raise HTTPException(status.HTTP_403_FORBIDDEN, "this form has expired: reload the page")
    return identity


def _admin(identity: Identity) -> Identity:
    if not identity.user.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "for administrators only")
    return identity


async def api_admin(identity: Annotated[Identity, Depends(api_identity)]) -> Identity:
    return _admin(identity)


async def page_admin(identity: Annotated[Identity, Depends(page_identity)]) -> Identity:
    return _admin(identity)


async def reader(identity: Annotated[Identity, Depends(api_identity)], request: Request) -> Reader:
    return await reader_of(services_of(request).store, identity.user, identity.token_collections)


ApiUser = Annotated[Identity, Depends(api_identity)]
ApiReader = Annotated[Reader, Depends(reader)]
ApiAdmin = Annotated[Identity, Depends(api_admin)]
PageUser = Annotated[Identity, Depends(page_identity)]
PageAdmin = Annotated[Identity, Depends(page_admin)]


DEFAULT_PUBLIC_URL = "http://localhost:8000"  # `serve`'s default address


def public_base(settings: AppOptions) -> str:
    """The address links sent to people are built on (the public_url setting), without a final /."""
    return (settings.public_url or DEFAULT_PUBLIC_URL).rstrip("/")


def public_link(request: Request, route: str, **params: str) -> str:
    """An absolute link to `route` for someone else to open (an invite): on the configured address,
    never on the request's Host header, which its sender chose."""
    return public_base(services_of(request).settings) + request.app.url_path_for(route, **params)


def login_url(next_path: str) -> str:
    return "/login" if next_path in ("", "/") else f"/login?next={quote(next_path, safe='/')}"


def safe_next(next_path: str | None) -> str:
    """Where to go after logging in: only a path on this site, never another host (`//evil`, `/\\evil`)."""
    if not next_path or not next_path.startswith("/") or next_path.startswith(("//", "/\\")):
        return "/"
    return next_path


def _secure(request: Request) -> bool:
    secure = services_of(request).settings.session_secure_cookies
    return request.url.scheme == "https" if secure is None else secure


def set_session_cookie(response: Response, request: Request, token: str, max_age_s: int) -> None:
    response.set_cookie(SESSION_COOKIE, token, max_age=max_age_s, path="/", httponly=True, samesite="lax",
                        secure=_secure(request))  # fmt: skip


# Forms sent before there is a session (log in, accept an invite) carry a token that must match this
# cookie: another site can make a browser post the form, but cannot read or set the cookie, so it
# cannot log a clinician into the attacker's account and collect their questions there (login CSRF).
FORM_COOKIE = "evidenceqa_form"


def form_token(request: Request) -> str:
    """This browser's pre-login form token: the one its cookie holds, else a new one."""
    held = request.cookies.get(FORM_COOKIE, "")
    return held if len(held) >= 32 else secrets.token_urlsafe(32)


def set_form_cookie(response: Response, request: Request, token: str) -> None:
    response.set_cookie(
        FORM_COOKIE, token, path="/", httponly=True, samesite="strict", secure=_secure(request)
    )


def form_token_ok(request: Request, sent: str) -> bool:
    held = request.cookies.get(FORM_COOKIE, "")
    return bool(held) and bool(sent) and hmac.compare_digest(sent.encode(), held.encode())


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
