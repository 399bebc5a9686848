"""The API and pages through HTTP, on a real small home, on SQLite and on PostgreSQL."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import text
from starlette.routing import BaseRoute, Route

from evidenceqa.analytics.report import build_report, report_markdown
from evidenceqa.store import (
    answers_between,
    conversations,
    create_api_token,
    feedback_of,
    list_users,
    lookups_between,
    messages_of,
)
from evidenceqa.web.simulate import FORM_TOKEN, log_in
from tests.web.conftest import (
    CEFAZOLIN,
    DOCS,
    PASSWORD,
    SCRIPT,
    SHAVE,
    Client,
    logged_in,
    server_events,
    store_of,
)

PUBLIC = {"/healthz", "/readyz", "/login", "/invite/{token}", "/reset/{token}"}


def _flat(routes: list[BaseRoute]) -> list[BaseRoute]:
    # Newer FastAPI keeps an included router as one entry; older ones copy its routes in.
    found = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        found += _flat(inner.routes) if inner is not None else [route]
    return found


def _routes(app: FastAPI) -> list[tuple[str, str]]:
    """Every (method, path) the app serves, path parameters filled in: new routes are covered too."""
    found = []
    for route in _flat(app.routes):
        if isinstance(route, Route) and route.methods:  # the API's, the pages' and /mcp's
            path = re.sub(r"\{[^}]+\}", "1", route.path)
            found += [(method, path) for method in sorted(route.methods) if route.path not in PUBLIC]
    return found


def _user(app: FastAPI, email: str):
    return next(u for u in list_users(store_of(app)) if u.email == email)


def _ask(client: Client, question: str = SHAVE, **body: object) -> dict:
    response = client.post(
        "/api/ask", json={"question": question, **body}, headers={"X-CSRF-Token": client.csrf}
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_every_private_route_needs_a_login(app: FastAPI, anonymous: TestClient) -> None:
    routes = _routes(app)
    assert ("POST", "/api/ask") in routes and ("GET", "/") in routes and ("GET", "/openapi.json") in routes
    assert ("POST", "/v1/chat/completions") in routes and ("POST", "/mcp") in routes
    for method, path in routes:
        response = anonymous.request(method, path)
        if path.startswith(("/api/", "/v1/", "/mcp")) or path == "/openapi.json":
            assert response.status_code == 401, (method, path)
            assert response.headers["www-authenticate"] == "Bearer"
        else:
            assert response.status_code == 303, (method, path)
            assert response.headers["location"].startswith("/login"), (method, path)


def test_a_wrong_api_token_is_refused_and_not_retried_as_the_cookie(app: FastAPI, alice: Client) -> None:
    response = alice.get("/api/conversations", headers={"Authorization": "Bearer eqa_not-a-token"})
    assert response.status_code == 401


def test_public_routes_need_no_login(anonymous: TestClient) -> None:
    assert anonymous.get("/healthz").json() == {"ok": True}
    ready = anonymous.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": "ok", "embedder": "ok", "index": "ok"}
    assert ready.json()["ready"] is True and ready.json()["documents"] == len(DOCS)
    assert ready.json()["index_version"] >= 1
    assert anonymous.get("/login").status_code == 200
    assert anonymous.get("/invite/some-token").status_code == 200
    assert anonymous.get("/static/app.js").status_code == 200


def test_the_notice_is_on_every_page(anonymous: TestClient, alice: Client) -> None:
    notice = "evidenceqa is a research and familiarisation tool. It is not for real-time clinical decisions."
    for client, path in [(anonymous, "/login"), (anonymous, "/invite/x"), (alice, "/")]:
        assert notice in client.get(path).text, path


def test_admin_routes_are_forbidden_to_clinicians(app: FastAPI, alice: Client, admin: Client) -> None:
    admin_routes = [(m, p) for m, p in _routes(app) if p.startswith(("/api/admin", "/admin"))]
    # Every admin route, whoever added it; at least the core ones exist.
    assert {"/admin", "/api/admin/status", "/api/admin/users", "/api/admin/invites"} <= {
        p for _, p in admin_routes
    }
    for method, path in admin_routes:
        response = alice.request(
            method, path, headers={"X-CSRF-Token": alice.csrf}, data={"csrf_token": alice.csrf}
        )
        assert response.status_code == 403, (method, path)
    assert admin.get("/admin").status_code == 200
    status = admin.get("/api/admin/status").json()
    assert status["documents"] == len(DOCS) and status["index_current"] and status["pending_chunks"] == 0


def test_cookie_posts_need_the_csrf_token_and_api_tokens_do_not(app: FastAPI, alice: Client) -> None:
    question = {"question": SHAVE}
    assert alice.post("/api/ask", json=question).status_code == 403
    assert alice.post("/api/ask", json=question, headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert alice.post("/logout").status_code == 403  # the form without its hidden field
    assert alice.get("/api/conversations").status_code == 200  # still logged in
    token = conversations_token(app)
    response = TestClient(app).post("/api/conversations", json={"title": "From a script"},
                                    headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert response.status_code == 201 and response.json()["title"] == "From a script"


def conversations_token(app: FastAPI) -> str:
    from evidenceqa.store import create_api_token

    return create_api_token(store_of(app), _user(app, "alice@example.org"), "script")[1]


def test_login_sets_a_safe_cookie_and_logout_ends_the_session(app: FastAPI, anonymous: TestClient) -> None:
    wrong = log_in(anonymous, "alice@example.org", "nope")
    assert wrong.status_code == 401 and "Wrong email or password." in wrong.text
    assert "evidenceqa_session" not in wrong.headers.get("set-cookie", "")
    client = Client(app, follow_redirects=False)
    response = log_in(client, "alice@example.org", PASSWORD, next="//evil.example/steal")
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "secure" not in cookie
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/").text).group(1)
    stolen = client.cookies["evidenceqa_session"]
    assert client.post("/logout", data={"csrf_token": csrf}).headers["location"] == "/login"
    assert not _still_logged_in(app, stolen)  # the session itself ended, not only the cookie


def _still_logged_in(app: FastAPI, cookie: str) -> bool:
    client = TestClient(app, follow_redirects=False, cookies={"evidenceqa_session": cookie})
    return client.get("/").status_code == 200


def test_logging_in_again_ends_the_previous_session(app: FastAPI) -> None:
    client = logged_in(app, "bob@example.org")
    first = client.cookies["evidenceqa_session"]
    assert _still_logged_in(app, first)
    _log_in_again(client, "bob@example.org")
    assert client.cookies["evidenceqa_session"] != first
    assert not _still_logged_in(app, first) and _still_logged_in(app, client.cookies["evidenceqa_session"])


def test_cookies_are_secure_over_https(app: FastAPI) -> None:
    client = logged_in(app, "bob@example.org", base_url="https://testserver")
    response = _log_in_again(client, "bob@example.org")
    assert "secure" in response.headers["set-cookie"].lower()


def _log_in_again(client: Client, email: str) -> Any:
    """Send a login form this browser opened before it logged in (another tab): the form's token is
    the one its cookie still holds, since /login itself now redirects to the chat."""
    token = client.cookies["evidenceqa_form"]
    return client.post("/login", data={"email": email, "password": PASSWORD, "csrf_token": token})


def test_login_returns_to_the_page_asked_for(app: FastAPI, anonymous: TestClient) -> None:
    assert anonymous.get("/admin").headers["location"] == "/login?next=/admin"
    response = log_in(anonymous, "admin@example.org", PASSWORD, next="/admin")
    assert response.headers["location"] == "/admin"


def test_ask_returns_a_cited_answer_stored_with_its_id(app: FastAPI, alice: Client) -> None:
    answer = _ask(alice)
    first = answer["citations"][0]
    assert not answer["abstained"] and first["doc_id"] == "shave"
    assert f"[{first['n']}]" in answer["answer"]
    assert first["text"] in first["body"]  # the exact supporting text, inside the passage shown
    assert first["title"] == "Hair removal before spinal surgery" and first["year"] == 2007
    assert first["url"] == "https://example.org/shave"
    stored = messages_of(store_of(app), answer["conversation_id"], _user(app, "alice@example.org"))
    assert [m.role for m in stored] == ["user", "assistant"]
    assert stored[1].answer.id == answer["answer_id"] and stored[1].text == answer["answer"]
    shown = alice.get(f"/api/conversations/{answer['conversation_id']}").json()
    assert shown["messages"][1]["answer"] == answer
    again = _ask(alice, conversation_id=answer["conversation_id"])  # the same conversation continues
    assert again["conversation_id"] == answer["conversation_id"] and again["answer_id"] != answer["answer_id"]


def test_a_follow_up_is_resolved_against_its_conversation_and_says_what_was_searched(
    app: FastAPI, alice: Client
) -> None:
    first = _ask(alice, "Does tranexamic acid reduce blood loss after knee arthroplasty?")
    follow = _ask(alice, "Is it safe after knee arthroplasty?", conversation_id=first["conversation_id"])
    assert follow["question"] == "Is it safe after knee arthroplasty?"
    assert follow["searched_for"] == "Is tranexamic acid safe after knee arthroplasty?"
    assert follow["citations"][0]["doc_id"] == "txa"
    # Stored, shown on the page, and what the next follow-up leans on.
    user = _user(app, "alice@example.org")
    assert conversations.searched_questions(store_of(app), first["conversation_id"], user) == [
        first["question"],
        follow["searched_for"],
    ]
    page = alice.get(f"/conversations/{first['conversation_id']}").text
    assert "Searched for: <q>Is tranexamic acid safe after knee arthroplasty?</q>" in page
    # The same words in a new conversation have nothing to lean on.
    alone = _ask(alice, "Is it safe after knee arthroplasty?")
    assert alone["searched_for"] is None


def test_an_abstention_shows_the_closest_passages_as_not_answering(app: FastAPI, alice: Client) -> None:
    abstained = _ask(alice, "What humidity should an operating room have?")
    assert abstained["abstained"] and abstained["citations"] == []
    nearest = abstained["nearest"]
    assert 1 <= len(nearest) <= 3 and all(
        n["text"] in n["body"] for n in nearest
    )  # each marked in its passage
    assert {n["doc_id"] for n in nearest} <= {d["doc_id"] for d in DOCS}
    page = alice.get(f"/conversations/{abstained['conversation_id']}").text  # stored, and shown again
    assert "The closest passages the library holds. They do not answer the question." in page
    assert (
        f'id="near-{abstained["answer_id"]}-1"' in page and "cite-n" not in page.split('class="nearest"')[1]
    )
    answered = _ask(alice)
    assert answered["nearest"] == []  # an answer shows its citations only


def test_a_reader_tells_the_library_team_what_is_missing_and_the_pilot_report_lists_it(
    app: FastAPI, alice: Client, bob: Client
) -> None:
    abstained = _ask(alice, "What humidity should an operating room have?")
    url = f"/api/answers/{abstained['answer_id']}/gap"
    sent = alice.post(
        url, json={"comment": "ASHRAE 170 ranges for theatres"}, headers={"X-CSRF-Token": alice.csrf}
    )
    assert sent.status_code == 200 and sent.json() == {
        "answer_id": abstained["answer_id"],
        "comment": "ASHRAE 170 ranges for theatres",
    }
    assert bob.post(url, json={}, headers={"X-CSRF-Token": bob.csrf}).status_code == 404  # not bob's answer
    too_long = alice.post(url, json={"comment": "x" * 4001}, headers={"X-CSRF-Token": alice.csrf})
    assert too_long.status_code == 422
    page = alice.get(f"/conversations/{abstained['conversation_id']}").text
    assert 'class="gap-report"' in page and "Tell the library team" in page
    report = build_report(store_of(app), None, None, "feedback", 5.0)
    [row] = [r for r in report.reported if r.answer_id == abstained["answer_id"]]
    assert row.question == "What humidity should an operating room have?"
    assert row.comment == "ASHRAE 170 ranges for theatres"
    assert "| ASHRAE 170 ranges for theatres |" in report_markdown(report)


def test_each_answer_records_whether_the_chat_or_a_script_asked(app: FastAPI, alice: Client) -> None:
    from_chat = _ask(alice, CEFAZOLIN)
    _, token = create_api_token(store_of(app), _user(app, "alice@example.org"), "script")
    script = TestClient(app, headers={"Authorization": f"Bearer {token}"})
    from_script = script.post("/api/ask", json={"question": CEFAZOLIN}).json()
    channels = {
        stored.answer_id: stored.channel
        for stored in answers_between(
            store_of(app), datetime.now(UTC) - timedelta(hours=1), datetime.now(UTC)
        )
    }
    assert channels[from_chat["answer_id"]] == "chat" and channels[from_script["answer_id"]] == "api"


def test_ask_applies_filters(alice: Client) -> None:
    answer = _ask(alice, filters={"year_min": 2010})
    assert answer["filters"]["year_min"] == 2010
    assert all(c["year"] >= 2010 for c in answer["citations"])
    bad = alice.post("/api/ask", json={"question": SHAVE, "filters": {"year_min": "soon"}},
                     headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert bad.status_code == 422
    # Each limit, as the chat shows it, and what its chip's × takes away.
    assert answer["applied_filters"] == [{"label": "Years from 2010", "limit": "years", "value": None}]


def test_ask_filters_by_evidence_type_and_each_citation_says_its_type(alice: Client) -> None:
    question = "Does ondansetron reduce postoperative nausea and vomiting?"
    answer = _ask(alice, question, filters={"evidence_types": ["guideline"], "prefer_evidence": True})
    assert (
        answer["filters"]["evidence_types"] == ["guideline"] and answer["filters"]["prefer_evidence"] is True
    )
    assert answer["citations"] and {c["doc_id"] for c in answer["citations"]} == {"ponv"}
    assert {(c["evidence_type"], c["evidence_name"]) for c in answer["citations"]} == {
        ("guideline", "Guideline or consensus statement")
    }
    assert [(c["label"], c["limit"], c["value"]) for c in answer["applied_filters"]] == [
        ("Evidence: Guideline or consensus statement", "evidence_types", "guideline"),
        ("Stronger evidence ranked first", "prefer_evidence", None),
    ]
    bad = alice.post("/api/ask", json={"question": question, "filters": {"evidence_types": ["level-1a"]}},
                     headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert bad.status_code == 422
    assert "unknown evidence type 'level-1a'; the types are guideline, systematic-review" in bad.text


def test_a_year_range_that_holds_no_year_is_refused_and_the_questions_own_years_are_shown(
    app: FastAPI, alice: Client
) -> None:
    before = len(answers_between(store_of(app), datetime.now(UTC) - timedelta(days=1), datetime.now(UTC)))
    empty = alice.post("/api/ask", json={"question": SHAVE, "filters": {"year_min": 2022, "year_max": 2019}},
                       headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert empty.status_code == 422
    assert (
        empty.json()["detail"]
        == "the earliest year (2022) is after the latest (2019): no year is in that range"
    )
    now = datetime.now(UTC)
    assert len(answers_between(store_of(app), now - timedelta(days=1), now)) == before
    parsed = _ask(
        alice,
        "Does tranexamic acid reduce blood loss after knee arthroplasty, in studies published since 2015?",
    )
    assert [(c["label"], c["limit"]) for c in parsed["applied_filters"]] == [
        ("Years from 2015", "years"),
        ("Read from the question: year ≥ 2015 (from 'published since 2015')", "years"),
    ]
    # Its chip removed: asked again without the question's own years.
    lifted = _ask(alice, parsed["question"], question_years=False)
    assert lifted["applied_filters"] == [] and "year_min" not in lifted["filters"]
    assert not lifted["cache_hit"]  # another search than the one with the years
    overruled = _ask(alice, "Does shaving increase infection after spinal surgery, in studies published before 2010?",
                     filters={"year_min": 2015})  # fmt: skip
    assert [(c["label"], c["limit"]) for c in overruled["applied_filters"]] == [
        ("Years from 2015", "years"),  # a note only: the question's years did not apply
        (
            "Read from the question: 'published before 2010' not applied: it leaves no year within the year filter",
            None,
        ),
    ]


def test_the_answer_streams_as_server_sent_events(app: FastAPI, alice: Client) -> None:
    with alice.stream("POST", "/api/ask", json={"question": "Is chlorhexidine safe on mucous membranes?"},
                      headers={"X-CSRF-Token": alice.csrf, "Accept": "text/event-stream"}) as response:  # fmt: skip
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        response.read()
    events = server_events(response.text)
    names = [name for name, _ in events]
    assert names[0] == "delta" and names[-1] == "answer" and set(names[:-1]) == {"delta"}
    record = events[-1][1]
    assert "".join(data["text"] for name, data in events[:-1]) == record["answer"]
    assert record["citations"][0]["doc_id"] == "chg" and isinstance(record["answer_id"], int)
    stored = messages_of(store_of(app), record["conversation_id"], _user(app, "alice@example.org"))
    assert stored[-1].answer.id == record["answer_id"]


def test_feedback_is_validated_and_stored(app: FastAPI, alice: Client) -> None:
    answer = _ask(alice)
    url = f"/api/answers/{answer['answer_id']}/feedback"
    headers = {"X-CSRF-Token": alice.csrf}
    assert alice.post(url, json={"rating": "great"}, headers=headers).status_code == 422
    assert alice.post(url, json={"rating": "acceptable", "extra": 1}, headers=headers).status_code == 422
    response = alice.post(url, json={"rating": "very_poor", "comment": " Missed the 2019 guideline. "},
                          headers=headers)  # fmt: skip
    assert response.status_code == 200
    assert response.json() == {"answer_id": answer["answer_id"], "rating": "very_poor", "score": 0.2,
                               "comment": "Missed the 2019 guideline."}  # fmt: skip
    alice_user = _user(app, "alice@example.org")
    stored = feedback_of(store_of(app), answer["answer_id"], alice_user)
    assert stored.rating == 0.2 and stored.comment == "Missed the 2019 guideline."
    assert alice.post(url, json={"rating": "excellent"}, headers=headers).json()["score"] == 1.0
    assert feedback_of(store_of(app), answer["answer_id"], alice_user).rating == 1.0  # replaced
    shown = alice.get(f"/api/conversations/{answer['conversation_id']}").json()
    assert shown["messages"][1]["answer"]["rating"] == "excellent"
    assert (
        alice.post("/api/answers/999999/feedback", json={"rating": "excellent"}, headers=headers).status_code
        == 404
    )


def test_conversations_are_private_to_their_owner(app: FastAPI, alice: Client, bob: Client) -> None:
    answer = _ask(alice)
    conversation = answer["conversation_id"]
    assert conversation in [c["id"] for c in alice.get("/api/conversations").json()]
    assert conversation not in [c["id"] for c in bob.get("/api/conversations").json()]
    assert bob.get(f"/api/conversations/{conversation}").status_code == 404
    assert bob.get(f"/conversations/{conversation}").status_code == 404
    taking_over = bob.post("/api/ask", json={"question": SHAVE, "conversation_id": conversation},
                           headers={"X-CSRF-Token": bob.csrf})  # fmt: skip
    assert taking_over.status_code == 404
    rating = bob.post(f"/api/answers/{answer['answer_id']}/feedback", json={"rating": "very_poor"},
                      headers={"X-CSRF-Token": bob.csrf})  # fmt: skip
    assert rating.status_code == 404
    assert feedback_of(store_of(app), answer["answer_id"], _user(app, "bob@example.org")) is None
    assert len(messages_of(store_of(app), conversation, _user(app, "alice@example.org"))) == 2


def test_document_text_is_escaped_in_the_page(app: FastAPI, alice: Client) -> None:
    answer = _ask(alice, CEFAZOLIN)
    cited = next(c for c in answer["citations"] if c["doc_id"] == "xss")
    assert SCRIPT in cited["text"] and SCRIPT in cited["title"]
    assert cited["url"] is None  # a javascript: address is never offered as a link
    page = alice.get(f"/conversations/{answer['conversation_id']}").text
    assert SCRIPT not in page and "alert(1)" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "javascript:" not in page
    assert re.search(r"<mark>[^<]*&lt;script&gt;alert\(1\)&lt;/script&gt;[^<]*</mark>", page)
    policy = alice.get(f"/conversations/{answer['conversation_id']}").headers["content-security-policy"]
    assert "default-src 'self'" in policy  # and were anything to slip through, no inline script would run


def test_the_conversation_page_shows_cited_passages_and_feedback(app: FastAPI, alice: Client) -> None:
    answer = _ask(alice)
    page = alice.get(f"/conversations/{answer['conversation_id']}").text
    first = answer["citations"][0]
    assert f'id="cite-{answer["answer_id"]}-{first["n"]}"' in page
    assert f'href="#cite-{answer["answer_id"]}-{first["n"]}"' in page  # the marker in the text links to it
    assert f"<mark>{first['text']}</mark>" in page
    assert 'href="https://example.org/shave"' in page
    assert f'<form class="feedback" data-answer-id="{answer["answer_id"]}">' in page
    assert 'aria-current="page"' in page and SHAVE[:40] in page  # listed, and marked, in the sidebar
    rated = alice.post(f"/api/answers/{answer['answer_id']}/feedback", json={"rating": "acceptable",
                       "comment": "Cite the <newer> guideline"}, headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert rated.status_code == 200
    again = alice.get(f"/conversations/{answer['conversation_id']}").text  # the comment is shown back
    assert ">Cite the &lt;newer&gt; guideline</textarea>" in again
    shown = alice.get(f"/api/conversations/{answer['conversation_id']}").json()["messages"][1]["answer"]
    assert shown["rating"] == "acceptable" and shown["feedback_comment"] == "Cite the <newer> guideline"


def test_search(app: FastAPI, alice: Client) -> None:
    now = datetime.now(UTC)
    before = lookups_between(store_of(app), now - timedelta(days=1), now + timedelta(days=1))
    response = alice.get("/api/search", params={"q": "tranexamic acid blood loss knee", "k": 2})
    assert response.status_code == 200
    body = response.json()
    assert len(body["results"]) == 2 and body["results"][0]["doc_id"] == "txa"
    assert alice.get("/api/search", params={"q": ""}).status_code == 422
    counted = lookups_between(store_of(app), now - timedelta(days=1), now + timedelta(days=1)) - before
    assert counted == {("api", "search"): 1}  # the refused one is not


def test_a_search_the_database_will_not_count_still_returns_its_results(
    app: FastAPI, alice: Client, caplog: pytest.LogCaptureFixture
) -> None:
    store = store_of(app)
    with store.transaction() as session:  # the table gone: every insert into it fails
        session.execute(text("ALTER TABLE lookups RENAME TO lookups_away"))
    try:
        question = "tranexamic acid blood loss knee"
        response = alice.get("/api/search", params={"q": question})
    finally:
        with store.transaction() as session:
            session.execute(text("ALTER TABLE lookups_away RENAME TO lookups"))
    assert response.status_code == 200 and response.json()["results"][0]["doc_id"] == "txa"
    warned = [r.getMessage() for r in caplog.records if "not counted" in r.getMessage()]
    assert len(warned) == 1 and question not in warned[0] and "api search" in warned[0]


def test_conversations_can_be_started_and_listed(alice: Client) -> None:
    created = alice.post(
        "/api/conversations", json={"title": "Ward round"}, headers={"X-CSRF-Token": alice.csrf}
    )
    assert created.status_code == 201
    listed = alice.get("/api/conversations").json()
    assert listed[0]["id"] == created.json()["id"] and listed[0]["title"] == "Ward round"
    assert alice.get(f"/api/conversations/{created.json()['id']}").json()["messages"] == []


def test_admin_creates_accounts_and_invitations(app: FastAPI, admin: Client, anonymous: TestClient) -> None:
    headers = {"X-CSRF-Token": admin.csrf}
    user = {"email": "carol@example.org", "name": "Carol", "password": PASSWORD}
    created = admin.post("/api/admin/users", json=user, headers=headers)
    assert created.status_code == 201 and created.json()["is_admin"] is False
    assert admin.post("/api/admin/users", json=user, headers=headers).status_code == 409
    assert (
        admin.post("/api/admin/users", json=user | {"password": "short"}, headers=headers).status_code == 422
    )
    logged_in(app, "carol@example.org")

    invite = admin.post("/api/admin/invites", json={"email": "dan@example.org"}, headers=headers).json()
    path = invite["url"].removeprefix("http://localhost:8000")  # the public_url default
    assert path.startswith("/invite/")
    form = FORM_TOKEN.search(anonymous.get(path).text).group(1)
    dan = {"name": "Dan", "password": PASSWORD, "csrf_token": form}
    assert anonymous.post(path, data=dan | {"confirm": "other"}).status_code == 400
    assert anonymous.post(path, data=dan | {"csrf_token": "forged", "confirm": PASSWORD}).status_code == 400
    accepted = anonymous.post(path, data=dan | {"confirm": PASSWORD})
    assert accepted.status_code == 303 and "evidenceqa_session" in accepted.headers["set-cookie"]
    eve = TestClient(app)
    form = FORM_TOKEN.search(eve.get(path).text).group(1)
    again = eve.post(
        path, data={"name": "Eve", "password": PASSWORD, "confirm": PASSWORD, "csrf_token": form}
    )
    assert again.status_code == 400 and "already used" in again.text


def test_admin_page_forms_need_the_csrf_field(admin: Client) -> None:
    form = {"email": "frank@example.org", "days": "3"}
    assert admin.post("/admin/invites", data=form).status_code == 403
    response = admin.post("/admin/invites", data=form | {"csrf_token": admin.csrf})
    assert response.status_code == 201
    assert re.search(r'value="http://localhost:8000/invite/[\w-]+"', response.text)
    created = admin.post("/admin/users", data={"email": "gina@example.org", "name": "Gina", "password": PASSWORD,
                                               "is_admin": "true", "csrf_token": admin.csrf})  # fmt: skip
    assert created.status_code == 201 and "Account created for gina@example.org." in created.text


def test_the_openapi_spec_describes_the_typed_api(alice: Client) -> None:
    spec = alice.get("/openapi.json").json()
    assert {"/api/ask", "/api/search", "/api/conversations", "/api/answers/{answer_id}/feedback",
            "/healthz", "/readyz", "/api/admin/status", "/api/admin/users", "/api/admin/invites"} <= set(spec["paths"])  # fmt: skip
    assert "/login" not in spec["paths"]  # pages are not part of the API
    ask = spec["paths"]["/api/ask"]["post"]
    assert ask["responses"]["200"]["content"].keys() == {"application/json", "text/event-stream"}
    assert spec["components"]["schemas"]["FeedbackIn"]["properties"]["rating"]["enum"] == [
        "excellent", "acceptable", "very_poor"]  # fmt: skip


@pytest.mark.parametrize("question", ["", "x" * 2001])
def test_questions_are_bounded(alice: Client, question: str) -> None:
    response = alice.post("/api/ask", json={"question": question}, headers={"X-CSRF-Token": alice.csrf})
    assert response.status_code == 422


def test_the_store_records_each_exchange_once(app: FastAPI, bob: Client) -> None:
    before = len(conversations.conversations_of(store_of(app), _user(app, "bob@example.org")))
    _ask(bob, "Does tranexamic acid reduce blood loss after knee arthroplasty?")
    after = conversations.conversations_of(store_of(app), _user(app, "bob@example.org"))
    assert len(after) == before + 1 and after[0].title.startswith("Does tranexamic acid")


def test_a_reader_renames_searches_and_deletes_their_conversations(alice: Client, bob: Client) -> None:
    headers = {"X-CSRF-Token": alice.csrf}
    asked = _ask(alice, "Is chlorhexidine safe on mucous membranes before surgery?")
    path = f"/api/conversations/{asked['conversation_id']}"
    renamed = alice.patch(path, json={"title": "Antisepsis, ward 4"}, headers=headers)
    assert renamed.status_code == 200 and renamed.json()["title"] == "Antisepsis, ward 4"
    assert alice.patch(path, json={"title": "\u200b"}, headers=headers).status_code == 422
    assert bob.patch(path, json={"title": "Bob's"}, headers={"X-CSRF-Token": bob.csrf}).status_code == 404
    assert alice.patch(path, json={"title": "No token"}).status_code == 403  # a session writes with CSRF
    found = alice.get("/api/conversations", params={"q": "WARD 4"}).json()
    assert [c["id"] for c in found] == [asked["conversation_id"]]
    assert asked["conversation_id"] in {
        c["id"] for c in alice.get("/api/conversations", params={"q": "mucous"}).json()
    }
    page = alice.get("/", params={"q": "ward 4"}).text  # the chat's list, searched without a script
    assert "Antisepsis, ward 4" in page and 'value="ward 4"' in page
    assert bob.delete(path, headers={"X-CSRF-Token": bob.csrf}).status_code == 404
    assert alice.delete(path, headers=headers).status_code == 204
    assert (
        alice.get(path).status_code == 404
        and alice.get(f"/conversations/{asked['conversation_id']}").status_code == 404
    )
    assert asked["conversation_id"] not in {c["id"] for c in alice.get("/api/conversations").json()}
    # A question sent into it now starts nothing and stores nothing.
    gone = alice.post(
        "/api/ask", json={"question": SHAVE, "conversation_id": asked["conversation_id"]}, headers=headers
    )
    assert gone.status_code == 404


def test_a_conversation_exports_as_markdown_and_prints_with_its_references(
    alice: Client, bob: Client
) -> None:
    asked = _ask(alice, SHAVE)
    exported = alice.get(f"/conversations/{asked['conversation_id']}/export.md")
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/markdown")
    assert (
        exported.headers["content-disposition"]
        == f'attachment; filename="conversation-{asked["conversation_id"]}.md"'
    )
    text = exported.text
    assert f"## {SHAVE}" in text and asked["answer"] in text and "_evidenceqa is a research" in text
    assert (
        "References:\n\n1. Hair removal before spinal surgery. 2007. https://example.org/shave\n   > Results: “"
        in text
    )
    printed = alice.get(f"/conversations/{asked['conversation_id']}/print").text
    assert (
        "Hair removal before spinal surgery. 2007. https://example.org/shave" in printed
        and "<form" not in printed.split("<main")[1]
    )
    assert bob.get(f"/conversations/{asked['conversation_id']}/export.md").status_code == 404
