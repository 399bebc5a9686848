"""Account pages and the administrator's account actions, through HTTP on SQLite and PostgreSQL: a
password change, logging out everywhere, a one-time reset link, deactivation. Each test makes its own
account, so the module's shared clinicians are not disturbed."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.store import create_user, list_users
from evidenceqa.web.simulate import FORM_TOKEN, log_in
from tests.web.conftest import PASSWORD, Client, logged_in, store_of

NEW = "a brand new passphrase"


def _person(app: FastAPI, name: str) -> int:
    return create_user(store_of(app), f"{name}@example.org", name.title(), PASSWORD).id


def _chat_works(client: TestClient) -> bool:
    return client.get("/", follow_redirects=False).status_code == 200


def test_a_password_change_keeps_this_browser_and_logs_out_the_others(app: FastAPI) -> None:
    _person(app, "hana")
    here, elsewhere = logged_in(app, "hana@example.org"), logged_in(app, "hana@example.org")
    form = {"csrf_token": here.csrf, "current": PASSWORD, "new": NEW, "confirm": NEW}
    assert here.post("/account/password", data=form | {"csrf_token": ""}).status_code == 403
    wrong = here.post("/account/password", data=form | {"current": "not my password"})
    assert wrong.status_code == 400 and "The current password is wrong." in wrong.text
    differ = here.post("/account/password", data=form | {"confirm": "something else entirely"})
    assert differ.status_code == 400 and "The two new passwords differ." in differ.text
    changed = here.post("/account/password", data=form)
    assert changed.status_code == 303 and changed.headers["location"] == "/account?changed=1"
    assert "Every other session of yours has ended." in here.get("/account?changed=1").text
    assert _chat_works(here) and not _chat_works(elsewhere)
    assert log_in(TestClient(app, follow_redirects=False), "hana@example.org", PASSWORD).status_code == 401
    assert log_in(TestClient(app, follow_redirects=False), "hana@example.org", NEW).status_code == 303


def test_logging_out_everywhere_ends_every_session(app: FastAPI) -> None:
    _person(app, "ivan")
    laptop, phone = logged_in(app, "ivan@example.org"), logged_in(app, "ivan@example.org")
    response = phone.post("/account/logout-everywhere", data={"csrf_token": phone.csrf})
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert not _chat_works(laptop) and not _chat_works(phone)


def test_an_admin_reset_link_works_once_and_ends_the_old_sessions(app: FastAPI, admin: Client) -> None:
    user_id = _person(app, "jana")
    forgotten = logged_in(app, "jana@example.org")
    page = admin.post(f"/admin/users/{user_id}/reset-link", data={"csrf_token": admin.csrf})
    assert page.status_code == 201 and "Give this link to jana@example.org" in page.text
    link = re.search(r'id="reset-link" class="copy" readonly value="([^"]+)"', page.text).group(1)
    path = link.removeprefix("http://localhost:8000")
    assert path.startswith("/reset/")
    jana = TestClient(app, follow_redirects=False)
    token = FORM_TOKEN.search(jana.get(path).text).group(1)
    forged = jana.post(path, data={"password": NEW, "confirm": NEW, "csrf_token": "forged"})
    assert forged.status_code == 400 and "expired" in forged.text
    done = jana.post(path, data={"password": NEW, "confirm": NEW, "csrf_token": token})
    assert done.status_code == 303 and _chat_works(jana) and not _chat_works(forgotten)
    again = TestClient(app, follow_redirects=False)
    token = FORM_TOKEN.search(again.get(path).text).group(1)
    reused = again.post(path, data={"password": "yet another passphrase", "confirm": "yet another passphrase",
                                    "csrf_token": token})  # fmt: skip
    assert reused.status_code == 400 and "already used" in reused.text


def test_an_admin_deactivates_and_reactivates_an_account(app: FastAPI, admin: Client) -> None:
    user_id = _person(app, "karl")
    karl = logged_in(app, "karl@example.org")
    off = admin.post(f"/admin/users/{user_id}/active", data={"csrf_token": admin.csrf, "active": "false"})
    assert off.status_code == 200 and "karl@example.org deactivated" in off.text
    assert not _chat_works(karl)
    assert log_in(TestClient(app, follow_redirects=False), "karl@example.org", PASSWORD).status_code == 401
    admin.post(f"/admin/users/{user_id}/active", data={"csrf_token": admin.csrf, "active": "true"})
    assert log_in(TestClient(app, follow_redirects=False), "karl@example.org", PASSWORD).status_code == 303
    me = next(u.id for u in list_users(store_of(app)) if u.email == "admin@example.org")
    own = admin.post(f"/admin/users/{me}/active", data={"csrf_token": admin.csrf, "active": "false"})
    assert own.status_code == 409 and "You cannot deactivate your own account." in own.text


def test_the_admin_api_makes_reset_links_and_deactivates(app: FastAPI, admin: Client, alice: Client) -> None:
    user_id = _person(app, "lena")
    headers = {"X-CSRF-Token": admin.csrf}
    link = admin.post(f"/api/admin/users/{user_id}/reset-link", headers=headers)
    assert link.status_code == 201 and link.json()["url"].startswith("http://localhost:8000/reset/")
    assert link.json()["hours"] == 24
    off = admin.post(f"/api/admin/users/{user_id}/active", json={"active": False}, headers=headers)
    assert (
        off.status_code == 200 and off.json()["active"] is False and off.json()["email"] == "lena@example.org"
    )
    assert admin.post("/api/admin/users/999999/reset-link", headers=headers).status_code == 404
    assert (
        admin.post("/api/admin/users/999999/active", json={"active": True}, headers=headers).status_code
        == 404
    )
    clinician = alice.post(f"/api/admin/users/{user_id}/active", json={"active": True},
                           headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert clinician.status_code == 403
