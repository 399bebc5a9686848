"""Issue 19's probe, request by request: each of these once answered 500, leaked something or could be
spoofed. Every test sends the same request the probe sent and checks the answer a user should get."""

from __future__ import annotations

import logging
import re

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.curation import review_store
from evidenceqa.store import list_users
from tests.curation.samples import sample_candidates
from tests.web.conftest import PASSWORD, SHAVE, Client, logged_in, store_of

SURROGATE = "\ud800"
HUGE_ID = 2**63  # one past the largest id either database can hold
RLO, ZWSP = "\u202e", "\u200b"


def _raw_json(text: str) -> bytes:
    """A JSON body spelling the surrogate as the escape "\\ud800", as a hostile client sends it."""
    return text.encode("ascii")


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/ask", '{"question": "shaving passphrase \\ud800 infection"}'),
        ("POST", "/api/conversations", '{"title": "ward passphrase \\ud800 round"}'),
        ("POST", "/api/tokens", '{"name": "script passphrase \\ud800"}'),
        ("POST", "/api/admin/users",
         '{"email": "new@example.org", "name": "New", "password": "secret \\ud800 passphrase"}'),
    ],
)  # fmt: skip
def test_an_unpaired_surrogate_is_a_422_that_echoes_nothing(
    admin: Client, method: str, path: str, body: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        response = admin.request(
            method, path, content=_raw_json(body),
            headers={"X-CSRF-Token": admin.csrf, "Content-Type": "application/json"},
        )  # fmt: skip
    assert response.status_code == 422, response.text
    assert "surrogate" in response.text and "passphrase" not in response.text  # the value is not echoed
    assert "passphrase" not in caplog.text and "Traceback" not in caplog.text


def test_an_unpaired_surrogate_in_a_feedback_comment_is_a_422(alice: Client) -> None:
    answer = alice.post("/api/ask", json={"question": SHAVE}, headers={"X-CSRF-Token": alice.csrf}).json()
    body = '{"rating": "excellent", "comment": "good \\ud800"}'
    response = alice.post(f"/api/answers/{answer['answer_id']}/feedback", content=_raw_json(body),
                          headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"})  # fmt: skip
    assert response.status_code == 422 and "surrogate" in response.text


def test_an_id_too_large_for_the_database_is_a_422(admin: Client) -> None:
    headers = {"X-CSRF-Token": admin.csrf}
    for method, path, options in [
        ("POST", f"/api/answers/{HUGE_ID}/feedback", {"json": {"rating": "excellent"}}),
        ("DELETE", f"/api/tokens/{HUGE_ID}", {}),
        ("GET", f"/api/conversations/{HUGE_ID}", {}),
        ("POST", f"/tokens/{HUGE_ID}/revoke", {"data": {"csrf_token": admin.csrf}}),
        ("POST", f"/admin/failures/{HUGE_ID}", {"data": {"csrf_token": admin.csrf, "category": "temporal"}}),
        ("GET", f"/conversations/{HUGE_ID}", {}),
    ]:
        response = admin.request(method, path, headers=headers, **options)
        assert response.status_code == 422, (method, path, response.status_code, response.text[:300])
    response = admin.post("/api/ask", json={"question": SHAVE, "conversation_id": HUGE_ID}, headers=headers)
    assert response.status_code == 422


def test_a_report_until_the_last_representable_day_is_answered(admin: Client) -> None:
    response = admin.get("/api/admin/pilot", params={"since": "2025-01-01", "until": "9999-12-31"})
    assert response.status_code == 200, response.text[:300]


def test_filters_are_bounded_in_length(alice: Client) -> None:
    response = alice.post("/api/ask", json={"question": SHAVE, "filters": {"collections": ["x" * 10_000]}},
                          headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert response.status_code == 422 and "200 characters" in response.text


def test_an_invite_link_is_on_the_configured_address_not_the_host_header(admin: Client) -> None:
    response = admin.post("/api/admin/invites", json={"email": "eve@example.org"},
                          headers={"X-CSRF-Token": admin.csrf, "Host": "evil.example"})  # fmt: skip
    assert response.status_code == 201, response.text
    assert response.json()["url"].startswith("http://localhost:8000/invite/")
    page = admin.post("/admin/invites", data={"email": "mallory@example.org", "days": "7",
                      "csrf_token": admin.csrf}, headers={"Host": "evil.example"})  # fmt: skip
    assert (
        re.search(r'value="http://localhost:8000/invite/[\w-]+"', page.text)
        and "evil.example/invite" not in page.text
    )


def test_pages_and_answers_are_not_kept_by_a_shared_computer_s_browser(alice: Client) -> None:
    for path in ("/", "/api/conversations", "/login", "/tokens"):
        assert alice.get(path).headers["cache-control"] == "no-store", path
    assert "no-store" not in alice.get("/static/app.css").headers.get("cache-control", "")


def test_nul_and_invisible_characters_do_not_reach_stored_text(
    admin: Client, alice: Client, app: FastAPI
) -> None:
    headers = {"X-CSRF-Token": admin.csrf}
    nul = admin.post("/api/admin/users", json={"email": "nul\u0000@example.org", "name": "Nul", "password": PASSWORD},
                     headers=headers)  # fmt: skip
    assert nul.status_code in (409, 422) and "nul" not in {u.name.lower() for u in list_users(store_of(app))}
    titled = alice.post("/api/conversations", json={"title": f"Ward{ZWSP} round {RLO}exe.txt"},
                        headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert titled.status_code == 201 and titled.json()["title"] == "Ward round exe.txt"
    asked = alice.post("/api/ask", json={"question": f"Does {RLO}shaving{ZWSP} increase infection?"},
                       headers={"X-CSRF-Token": alice.csrf}).json()  # fmt: skip
    assert asked["question"] == "Does shaving increase infection?"


def test_the_review_page_shows_a_file_s_name_not_where_the_server_keeps_it(app: FastAPI) -> None:
    review_store.load_candidates(store_of(app), "paths", sample_candidates())
    clinician = logged_in(app, "bob@example.org")
    [first, *_] = review_store.review_items(store_of(app), "paths")
    page = clinician.get(f"/review/paths/{first.candidate.candidate_id}").text
    assert f"{first.candidate.doc_id}.xml" in page and "/data/" not in page


def test_the_login_form_is_refused_without_its_csrf_token(app: FastAPI) -> None:
    client = TestClient(app, follow_redirects=False)
    forged = client.post("/login", data={"email": "alice@example.org", "password": PASSWORD})
    assert forged.status_code == 403 and "evidenceqa_session" not in forged.cookies
    form = client.get("/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form).group(1)
    accepted = client.post(
        "/login", data={"email": "alice@example.org", "password": PASSWORD, "csrf_token": token}
    )
    assert accepted.status_code == 303
