"""The HTML pages: login, invite acceptance, the chat, the admin page. Server-rendered with Jinja2
(autoescaped: document text is untrusted); static/app.js adds streaming answers and feedback."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader
from starlette.concurrency import run_in_threadpool

from evidenceqa import DISCLAIMER, evidence_types
from evidenceqa.answer.base import NEAREST_NOTE
from evidenceqa.documents import doc_type_name
from evidenceqa.store import User, accounts, conversations, restricted_collections
from evidenceqa.web.auth import (
    SESSION_COOKIE,
    Identity,
    PageAdmin,
    PageUser,
    clear_session_cookie,
    form_token,
    form_token_ok,
    identify,
    public_link,
    safe_next,
    set_form_cookie,
    set_session_cookie,
)
from evidenceqa.web.entitlements import reader_of
from evidenceqa.web.guards import login_failed, login_succeeded, login_wait, retry_after
from evidenceqa.web.records import conversation_detail, conversation_markdown
from evidenceqa.web.schemas import RowId
from evidenceqa.web.services import Services, services_of

router = APIRouter(include_in_schema=False)
CITATION_MARK = re.compile(r"\[(\d+)\]")


def cite_parts(text: str) -> list[tuple[str, int | None]]:
    """An answer's text as pieces: plain text (n None) and citation markers [n], to link each marker."""
    parts: list[tuple[str, int | None]] = []
    last = 0
    for match in CITATION_MARK.finditer(text):
        parts += [(text[last : match.start()], None), (match.group(0), int(match.group(1)))]
        last = match.end()
    return [*parts, (text[last:], None)]


def highlight(body: str | None, passage: str) -> tuple[str, str, str] | None:
    """The chunk body split around the supporting passage (before, passage, after); None if absent."""
    if not (body and passage):
        return None
    at = body.find(passage)
    if at < 0:
        return None
    return body[:at], passage, body[at + len(passage) :]


def _environment() -> Environment:
    # autoescape=True for every template, whatever its name: document text is untrusted.
    env = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True)
    env.filters["cite_parts"] = cite_parts
    env.filters["highlight"] = highlight
    env.filters["doc_type_name"] = doc_type_name
    # A file's name without its folders: where a server keeps its data is not the clinicians' business.
    env.filters["file_name"] = lambda path: Path(str(path)).name
    env.globals["disclaimer"] = DISCLAIMER
    env.globals["nearest_note"] = NEAREST_NOTE
    return env


templates = Jinja2Templates(env=_environment())


def render(
    request: Request, template: str, identity: Identity | None = None, status_code: int = 200, **context: Any
) -> HTMLResponse:
    return templates.TemplateResponse(
        request, template, {"identity": identity, **context}, status_code=status_code
    )


def _session_days_s(services: Services) -> int:
    return services.settings.session_days * 24 * 3600


async def start_login(request: Request, user: User, to: str) -> Response:
    """A new session for `user`; one this browser held before ends (no session outlives a re-login)."""
    services = services_of(request)
    if previous := request.cookies.get(SESSION_COOKIE):
        await run_in_threadpool(accounts.end_session, services.store, previous)
    cookie, _ = await run_in_threadpool(accounts.start_session, services.store, user)
    response = RedirectResponse(to, status.HTTP_303_SEE_OTHER)
    set_session_cookie(response, request, cookie, _session_days_s(services))
    return response


def render_form(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """A page whose form is sent before a login: it carries this browser's form token (auth.FORM_COOKIE)."""
    token = form_token(request)
    response = render(request, template, status_code=status_code, form_token=token, **context)
    set_form_cookie(response, request, token)
    return response


EXPIRED_FORM = "This form had expired, so nothing was sent; please send it again."


@router.get("/login", response_class=HTMLResponse)
async def login_page(request: Request, next: str = "/") -> Response:
    if await run_in_threadpool(identify, services_of(request), request) is not None:
        return RedirectResponse(safe_next(next), status.HTTP_303_SEE_OTHER)
    return render_form(request, "login.html", next=safe_next(next))


@router.post("/login", response_class=HTMLResponse)
async def login(
    request: Request,
    email: Annotated[str, Form(max_length=320)],
    password: Annotated[str, Form(max_length=1000)],
    next: Annotated[str, Form()] = "/",
    csrf_token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    if not form_token_ok(request, csrf_token):
        return render_form(request, "login.html", status.HTTP_403_FORBIDDEN, next=safe_next(next), email=email,
                           error=EXPIRED_FORM)  # fmt: skip
    if wait := await login_wait(request, email):  # locked out after failures: not even the right password
        response = render_form(request, "login.html", status.HTTP_429_TOO_MANY_REQUESTS, next=safe_next(next),
                               email=email, error=f"Too many failed logins: try again in {math.ceil(wait)} s.")  # fmt: skip
        response.headers.update(retry_after(wait))
        return response
    user = await run_in_threadpool(accounts.authenticate, services_of(request).store, email, password)
    if user is None:
        await login_failed(request, email)
        return render_form(request, "login.html", status.HTTP_401_UNAUTHORIZED, next=safe_next(next),
                           email=email, error="Wrong email or password.")  # fmt: skip
    await login_succeeded(request, email)
    return await start_login(request, user, safe_next(next))


@router.post("/logout")
async def logout(request: Request, identity: PageUser) -> Response:
    if identity.session:
        await run_in_threadpool(accounts.end_session, services_of(request).store, identity.session)
    response = RedirectResponse("/login", status.HTTP_303_SEE_OTHER)
    clear_session_cookie(response)
    return response


@router.get("/invite/{token}", response_class=HTMLResponse, name="invite_page")
async def invite_page(request: Request, token: str) -> Response:
    return render_form(request, "invite.html", token=token)


async def use_link(
    request: Request, csrf_token: str, password: str, confirm: str, use: Callable[[], User]
) -> User | str:
    """A form sent from a link whose token is the credential (an invite, a password reset): the user
    `use` made, or why nothing was done (the passwords differ, the form expired, the link is spent)."""
    if password != confirm:
        return "The two passwords differ."
    if not form_token_ok(request, csrf_token):
        return EXPIRED_FORM
    try:
        return await run_in_threadpool(use)
    except accounts.AccountError as exc:
        return str(exc)


@router.post("/invite/{token}", response_class=HTMLResponse)
async def accept_invite(
    request: Request,
    token: str,
    name: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    confirm: Annotated[str, Form(max_length=1000)],
    csrf_token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """The invite's token is the credential here: whoever holds the link may create the account once."""
    store = services_of(request).store
    done = await use_link(
        request, csrf_token, password, confirm, lambda: accounts.accept_invite(store, token, name, password)
    )
    if isinstance(done, User):
        return await start_login(request, done, "/")
    error = done
    return render_form(
        request, "invite.html", status.HTTP_400_BAD_REQUEST, token=token, name=name, error=error
    )


@router.get("/", response_class=HTMLResponse)
async def chat(
    request: Request, identity: PageUser, q: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """The chat; `q` lists only the conversations whose title or a question holds it."""
    return await _chat(request, identity, None, q)


@router.get("/conversations/{conversation_id}", response_class=HTMLResponse)
async def conversation_page(request: Request, conversation_id: RowId, identity: PageUser) -> Response:
    return await _chat(request, identity, conversation_id)


@router.get("/conversations/{conversation_id}/export.md")
async def conversation_export(request: Request, conversation_id: RowId, identity: PageUser) -> Response:
    """The conversation as Markdown, downloaded: questions, answers, references."""
    detail = await conversation_detail(services_of(request), identity.user, conversation_id)
    headers = {"Content-Disposition": f'attachment; filename="conversation-{conversation_id}.md"'}
    return Response(conversation_markdown(detail), media_type="text/markdown; charset=utf-8", headers=headers)


@router.get("/conversations/{conversation_id}/print", response_class=HTMLResponse)
async def conversation_print(request: Request, conversation_id: RowId, identity: PageUser) -> Response:
    """The conversation on one plain page to print or save as PDF, every source open."""
    detail = await conversation_detail(services_of(request), identity.user, conversation_id)
    return render(request, "print.html", identity, current=detail)


async def _chat(
    request: Request, identity: Identity, conversation_id: int | None, matching: str = ""
) -> Response:
    services = services_of(request)
    listed = await run_in_threadpool(conversations.conversations_of, services.store, identity.user, matching)
    current = await conversation_detail(services, identity.user, conversation_id) if conversation_id else None
    # The filters offer what the reader may read: a collection they may not is never named.
    reader = await reader_of(services.store, identity.user, None)
    held = {
        c: kinds for c, kinds in (await services.library.doc_types()).items() if reader.access.may_read(c)
    }
    evidence = {
        k
        for c, kinds in (await services.library.evidence_types()).items()
        if reader.access.may_read(c)
        for k in kinds
    }
    return render(request, "chat.html", identity, conversations=listed, current=current, matching=matching,
                  collections=sorted(held), doc_types=sorted({k for kinds in held.values() for k in kinds}),
                  evidence_types=[t for t in evidence_types.TYPES if t.key in evidence])  # fmt: skip


@router.get("/admin", response_class=HTMLResponse)
async def admin_page(request: Request, identity: PageAdmin) -> Response:
    return await admin_page_with(request, identity)


async def admin_page_with(
    request: Request, identity: Identity, status_code: int = 200, **context: Any
) -> Response:
    """The admin page, with what an action just did (a notice, an error, a link to hand over)."""
    services = services_of(request)
    users = await run_in_threadpool(accounts.list_users, services.store)
    restricted = await run_in_threadpool(restricted_collections, services.store)
    library = await services.library.status()
    return render(request, "admin.html", identity, status_code, users=users, library=library,
                  restricted=restricted, **context)  # fmt: skip


@router.post("/admin/users", response_class=HTMLResponse)
async def admin_create_user(
    request: Request,
    identity: PageAdmin,
    email: Annotated[str, Form(max_length=320)],
    name: Annotated[str, Form(max_length=200)],
    password: Annotated[str, Form(max_length=1000)],
    is_admin: Annotated[bool, Form()] = False,
) -> Response:
    store = services_of(request).store
    try:
        user = await run_in_threadpool(accounts.create_user, store, email, name, password, is_admin)
    except accounts.AccountError as exc:
        return await admin_page_with(request, identity, status.HTTP_400_BAD_REQUEST, error=str(exc))
    return await admin_page_with(
        request, identity, status.HTTP_201_CREATED, notice=f"Account created for {user.email}."
    )


@router.post("/admin/invites", response_class=HTMLResponse)
async def admin_create_invite(
    request: Request,
    identity: PageAdmin,
    email: Annotated[str, Form(max_length=320)],
    is_admin: Annotated[bool, Form()] = False,
    days: Annotated[int, Form(ge=1, le=90)] = 7,
) -> Response:
    store = services_of(request).store
    try:
        token = await run_in_threadpool(accounts.create_invite, store, email, is_admin, identity.user, days)
    except accounts.AccountError as exc:
        return await admin_page_with(request, identity, status.HTTP_400_BAD_REQUEST, error=str(exc))
    link = public_link(request, "invite_page", token=token)
    return await admin_page_with(request, identity, status.HTTP_201_CREATED, invite_link=link, invite_email=email,
                        invite_days=days)  # fmt: skip
