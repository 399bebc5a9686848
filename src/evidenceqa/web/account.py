"""Managing accounts: a user changes their own password or logs out everywhere; an administrator makes
a one-time password-reset link (no e-mail server needed: the link is shown once, to hand over) and
deactivates or reactivates accounts. Page routes, and the administrator's two as API routes.

A changed or reset password ends every session of that user at once, and so does deactivation; the
browser that changed its own password gets a new session, so only the others are logged out.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, HTTPException, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from evidenceqa.store import User, accounts, entitlements
from evidenceqa.web.auth import (
    ApiAdmin,
    Identity,
    PageAdmin,
    PageUser,
    clear_session_cookie,
    public_link,
)
from evidenceqa.web.pages import admin_page_with, render, render_form, start_login, use_link
from evidenceqa.web.records import user_out
from evidenceqa.web.schemas import ActiveIn, ResetLinkOut, RowId, UserOut
from evidenceqa.web.services import services_of

router = APIRouter()
RESET_HOURS = 24  # how long a reset link works
Password = Annotated[str, Form(max_length=1000)]


@router.get("/account", response_class=HTMLResponse, include_in_schema=False)
async def account_page(request: Request, identity: PageUser, changed: bool = False) -> Response:
    notice = "Password changed. Every other session of yours has ended." if changed else None
    return render(request, "account.html", identity, notice=notice)


@router.post("/account/password", response_class=HTMLResponse, include_in_schema=False)
async def change_password(
    request: Request, identity: PageUser, current: Password, new: Password, confirm: Password
) -> Response:
    store = services_of(request).store
    error = "The two new passwords differ." if new != confirm else None
    if error is None:
        try:
            await run_in_threadpool(accounts.change_password, store, identity.user, current, new)
        except accounts.AccountError as exc:
            error = str(exc).capitalize() + "."
        else:
            return await start_login(request, identity.user, "/account?changed=1")
    return render(request, "account.html", identity, status.HTTP_400_BAD_REQUEST, error=error)


@router.post("/account/logout-everywhere", include_in_schema=False)
async def logout_everywhere(request: Request, identity: PageUser) -> Response:
    await run_in_threadpool(accounts.end_all_sessions, services_of(request).store, identity.user)
    response = RedirectResponse("/login", status.HTTP_303_SEE_OTHER)
    clear_session_cookie(response)
    return response


@router.get("/reset/{token}", response_class=HTMLResponse, name="reset_page", include_in_schema=False)
async def reset_page(request: Request, token: str) -> Response:
    return render_form(request, "reset.html", token=token)


@router.post("/reset/{token}", response_class=HTMLResponse, include_in_schema=False)
async def reset(
    request: Request,
    token: str,
    password: Password,
    confirm: Password,
    csrf_token: Annotated[str, Form(max_length=200)] = "",
) -> Response:
    """The link's token is the credential, as an invite's is: whoever holds it sets the password once."""
    store = services_of(request).store
    done = await use_link(
        request, csrf_token, password, confirm, lambda: accounts.reset_password(store, token, password)
    )
    if isinstance(done, User):
        return await start_login(request, done, "/")
    error = done
    return render_form(request, "reset.html", status.HTTP_400_BAD_REQUEST, token=token, error=error)


async def _reset_link(request: Request, admin: Identity, user_id: int) -> str:
    try:
        token = await run_in_threadpool(
            accounts.create_password_reset, services_of(request).store, user_id, admin.user, RESET_HOURS
        )
    except accounts.AccountError as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
    return public_link(request, "reset_page", token=token)


async def _set_active(request: Request, admin: Identity, user_id: int, active: bool) -> User:
    if user_id == admin.user.id and not active:
        raise HTTPException(status.HTTP_409_CONFLICT, "you cannot deactivate your own account")
    store = services_of(request).store
    user = await run_in_threadpool(accounts.get_user, store, user_id)
    if user is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no account {user_id}")
    await run_in_threadpool(accounts.set_active, store, user_id, active)
    user.active = active
    return user


@router.post("/admin/users/{user_id}/reset-link", response_class=HTMLResponse, include_in_schema=False)
async def admin_reset_link_page(request: Request, user_id: RowId, identity: PageAdmin) -> Response:
    link = await _reset_link(request, identity, user_id)
    user = await run_in_threadpool(accounts.get_user, services_of(request).store, user_id)
    email = user.email if user else ""
    return await admin_page_with(request, identity, status.HTTP_201_CREATED, reset_link=link, reset_email=email,
                                 reset_hours=RESET_HOURS)  # fmt: skip


@router.post("/admin/users/{user_id}/active", response_class=HTMLResponse, include_in_schema=False)
async def admin_active_page(
    request: Request, user_id: RowId, identity: PageAdmin, active: Annotated[bool, Form()]
) -> Response:
    try:
        user = await _set_active(request, identity, user_id, active)
    except HTTPException as exc:
        return await admin_page_with(
            request, identity, exc.status_code, error=str(exc.detail).capitalize() + "."
        )
    done = "reactivated" if active else "deactivated: its sessions have ended and its API tokens are refused"
    return await admin_page_with(request, identity, notice=f"{user.email} {done}.")


@router.post("/api/admin/users/{user_id}/reset-link", response_model=ResetLinkOut,
             status_code=status.HTTP_201_CREATED, tags=["admin"])  # fmt: skip
async def admin_reset_link(request: Request, user_id: RowId, identity: ApiAdmin) -> ResetLinkOut:
    """A one-time link for the user to set a new password, valid for 24 hours; the response is the only
    time it is shown. An earlier unused link of theirs stops working."""
    return ResetLinkOut(url=await _reset_link(request, identity, user_id), hours=RESET_HOURS)


@router.post("/api/admin/users/{user_id}/active", response_model=UserOut, tags=["admin"])
async def admin_set_active(request: Request, user_id: RowId, body: ActiveIn, identity: ApiAdmin) -> UserOut:
    """Deactivate (logins and API tokens refused, sessions ended; conversations kept) or reactivate."""
    return user_out(await _set_active(request, identity, user_id, body.active))


# Restricted collections (entitlements): only the accounts granted one may read it --------------------

CollectionName = Annotated[str, Form(min_length=1, max_length=200)]


@router.post("/admin/collections/restrict", response_class=HTMLResponse, include_in_schema=False)
async def admin_restrict_page(request: Request, identity: PageAdmin, collection: CollectionName) -> Response:
    changed = await run_in_threadpool(entitlements.restrict, services_of(request).store, collection.strip())
    notice = f"{collection} is restricted: only the accounts granted it may read it."
    return await admin_page_with(
        request, identity, notice=notice if changed else f"{collection} already was restricted."
    )


@router.post("/admin/collections/open", response_class=HTMLResponse, include_in_schema=False)
async def admin_open_page(request: Request, identity: PageAdmin, collection: CollectionName) -> Response:
    await run_in_threadpool(entitlements.open_to_all, services_of(request).store, collection)
    return await admin_page_with(request, identity, notice=f"{collection} is open to every account.")


@router.post("/admin/collections/{change}", response_class=HTMLResponse, include_in_schema=False)
async def admin_grant_page(
    request: Request,
    identity: PageAdmin,
    change: Literal["grant", "withdraw"],
    collection: CollectionName,
    email: Annotated[str, Form(max_length=320)],
) -> Response:
    """Grant a restricted collection to an account, or withdraw it."""
    return await _change_grant(request, identity, collection, email, granted=change == "grant")


async def _change_grant(
    request: Request, identity: Identity, collection: str, email: str, granted: bool
) -> Response:
    store = services_of(request).store

    def change() -> str:
        wanted = accounts.normalise_email(email)
        user = next((u for u in accounts.list_users(store) if u.email == wanted), None)
        if user is None:
            raise entitlements.EntitlementError(f"no account with the email {email!r}")
        if granted:
            entitlements.grant(store, user, collection)
            return f"{user.email} may read {collection}."
        entitlements.withdraw(store, user, collection)
        return f"{user.email} may no longer read {collection}, through any of their tokens."

    try:
        notice = await run_in_threadpool(change)
    except (entitlements.EntitlementError, accounts.AccountError) as exc:
        return await admin_page_with(request, identity, status.HTTP_400_BAD_REQUEST, error=str(exc))
    return await admin_page_with(request, identity, notice=notice)
