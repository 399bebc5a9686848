"""API tokens made, used and revoked through the page and the API, on SQLite and on PostgreSQL."""

from __future__ import annotations

import re

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.web.conftest import Client

TOKEN = re.compile(r'id="new-token" class="copy" readonly value="(eqa_[^"]+)"')


def _bearer(app: FastAPI, token: str) -> TestClient:
    return TestClient(app, headers={"Authorization": f"Bearer {token}"})


def test_a_token_made_on_the_page_works_until_it_is_revoked(app: FastAPI, alice: Client) -> None:
    assert 'action="/tokens"' in alice.get("/tokens").text
    made = alice.post("/tokens", data={"name": "nightly export", "csrf_token": alice.csrf})
    assert made.status_code == 201 and "shown only this once" in made.text
    token = TOKEN.search(made.text).group(1)
    assert _bearer(app, token).get("/api/search", params={"q": "clipping"}).status_code == 200
    listed = alice.get("/tokens").text
    assert "nightly export" in listed and token not in listed  # shown once, never again
    assert "never" not in listed  # its last use is recorded
    token_id = re.search(r'action="/tokens/(\d+)/revoke"', listed).group(1)
    revoked = alice.post(f"/tokens/{token_id}/revoke", data={"csrf_token": alice.csrf})
    assert revoked.status_code == 303 and revoked.headers["location"] == "/tokens"
    assert _bearer(app, token).get("/api/search", params={"q": "clipping"}).status_code == 401
    assert "You have no tokens." in alice.get("/tokens").text


def test_the_page_needs_a_name_and_the_form_token(alice: Client) -> None:
    blank = alice.post("/tokens", data={"name": "   ", "csrf_token": alice.csrf})
    assert blank.status_code == 400 and "an API token needs a name" in blank.text
    assert alice.post("/tokens", data={"name": "forged"}).status_code == 403
    assert "forged" not in alice.get("/tokens").text


def test_the_api_makes_lists_and_revokes_only_the_callers_tokens(
    app: FastAPI, alice: Client, bob: Client
) -> None:
    made = alice.post("/api/tokens", json={"name": "ci"}, headers={"X-CSRF-Token": alice.csrf})
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["name"] == "ci" and body["token"].startswith("eqa_") and body["last_used_at"] is None
    listed = alice.get("/api/tokens").json()
    assert [t["name"] for t in listed] == ["ci"] and all("token" not in t for t in listed)
    assert bob.get("/api/tokens").json() == []
    # Someone else's token is not found; the owner's is revoked, and refused from then on.
    assert bob.delete(f"/api/tokens/{body['id']}", headers={"X-CSRF-Token": bob.csrf}).status_code == 404
    assert _bearer(app, body["token"]).get("/api/conversations").status_code == 200
    assert alice.delete(f"/api/tokens/{body['id']}", headers={"X-CSRF-Token": alice.csrf}).status_code == 204
    assert _bearer(app, body["token"]).get("/api/conversations").status_code == 401
    assert alice.get("/api/tokens").json() == []


def test_a_token_cannot_make_list_or_revoke_tokens(app: FastAPI, alice: Client) -> None:
    """A leaked token is ended by revoking it: it cannot have made copies of itself."""
    body = alice.post("/api/tokens", json={"name": "script"}, headers={"X-CSRF-Token": alice.csrf}).json()
    script = _bearer(app, body["token"])
    for response in (
        script.post("/api/tokens", json={"name": "copy"}),
        script.get("/api/tokens"),
        script.delete(f"/api/tokens/{body['id']}"),
        script.get("/tokens"),
    ):
        assert response.status_code == 403 and "managed from a login session" in response.text
    assert [t["name"] for t in alice.get("/api/tokens").json()] == ["script"]
    alice.delete(f"/api/tokens/{body['id']}", headers={"X-CSRF-Token": alice.csrf})


def test_the_api_refuses_a_blank_name_and_a_missing_csrf_header(alice: Client) -> None:
    assert (
        alice.post("/api/tokens", json={"name": " "}, headers={"X-CSRF-Token": alice.csrf}).status_code == 422
    )
    assert alice.post("/api/tokens", json={"name": "x"}).status_code == 403
    assert alice.get("/api/tokens").json() == []
