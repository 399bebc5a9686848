"""Abuse and hostile input through HTTP: HTML in documents and questions stays text, each user's rate of
answers is limited, failed logins lock out (exponentially), questions are bounded and cleaned, secrets
never reach the log, and questions reach it only when the settings say so."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from evidenceqa.store import create_api_token, create_user, list_users
from evidenceqa.store.counters import MemoryCounters
from evidenceqa.web.app import SECURITY_HEADERS, create_app
from evidenceqa.web.guards import AccessLogRedaction, Guards
from evidenceqa.web.simulate import FORM_TOKEN, log_in
from tests.answer.openai_server import OpenAIServer, answer, failure, llm_settings
from tests.conftest import write_library
from tests.web.conftest import PASSWORD, Client, logged_in, server_events, store_of

IMG = "<img src=x onerror=\"document.title='pwned'\">"
DOCS = [
    ("cefazolin", 2020, f"Cefazolin given within sixty minutes before incision {IMG} reduced surgical site "
                        "infection after hip replacement."),
    ("shave", 2007, "Shaving the incision site before spinal surgery increased the rate of infection."),
]  # fmt: skip
CEFAZOLIN = "Does cefazolin before incision reduce surgical site infection after hip replacement?"
KEY = "sk-abuse-secret-0815"


def server_log(caplog: pytest.LogCaptureFixture) -> str:
    """Everything the server logged, messages, arguments and tracebacks; the test client's own request
    lines (its logger is httpx2, which the server never uses) are the harness, not the server."""
    records = [r for r in caplog.records if not r.name.startswith("httpx2")]
    formatter = logging.Formatter()
    return "\n".join(formatter.format(r) + json.dumps(r.args, default=str) for r in records)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def hostile_settings(tmp_path_factory: pytest.TempPathFactory, models_dir: Path) -> Settings:
    root = tmp_path_factory.mktemp("hostile-web")
    settings = Settings(home=root / "data", models_dir=models_dir,
                        database_url=f"sqlite:///{root / 'app.sqlite3'}")  # fmt: skip
    with Engine.open(settings) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(write_library(root / "lib.jsonl", DOCS))
        engine.sync()
    return settings


def _started(settings: Settings) -> Iterator[FastAPI]:
    application = create_app(settings)
    with TestClient(application):
        for name in ("alice", "bob"):
            create_user(store_of(application), f"{name}@example.org", name.title(), PASSWORD)
        create_user(store_of(application), "admin@example.org", "Admin", PASSWORD, is_admin=True)
        yield application


@pytest.fixture(scope="module")
def hostile_app(hostile_settings: Settings) -> Iterator[FastAPI]:
    yield from _started(hostile_settings)


@pytest.fixture
def clock(hostile_app: FastAPI) -> Iterator[Clock]:
    """Fresh guards on a hand-moved clock, three answers and five searches a minute, for one test."""
    moved = Clock()
    settings = hostile_app.state.services.settings.model_copy(
        update={"ask_rate_per_minute": 3, "search_rate_per_minute": 5}
    )
    hostile_app.state.guards = Guards.of(settings, MemoryCounters(), moved)
    yield moved
    hostile_app.state.guards = None


def _ask(client: Client, question: str, stream: bool = False) -> object:
    headers = {"X-CSRF-Token": client.csrf, **({"Accept": "text/event-stream"} if stream else {})}
    return client.post("/api/ask", json={"question": question}, headers=headers)


def test_html_in_a_document_and_in_a_question_stays_text(hostile_app: FastAPI) -> None:
    alice = logged_in(hostile_app, "alice@example.org")
    response = _ask(alice, f"{CEFAZOLIN} {IMG}")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    record = response.json()
    assert record["question"].endswith(IMG)  # kept as the user typed it: data, not markup
    assert any(IMG in c["body"] for c in record["citations"])
    page = alice.get(f"/conversations/{record['conversation_id']}")
    assert "<img" not in page.text  # neither the question nor the cited passage became an element
    assert page.text.count("&lt;img src=x onerror=") >= 2
    assert page.headers["content-security-policy"] == SECURITY_HEADERS["Content-Security-Policy"]
    assert "unsafe-inline" not in page.headers["content-security-policy"]  # no inline handler could run
    streamed = _ask(alice, f"{CEFAZOLIN} {IMG}", stream=True)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert server_events(streamed.text)[-1][1]["question"].endswith(IMG)


def test_each_user_gets_a_limited_rate_of_answers(hostile_app: FastAPI, clock: Clock) -> None:
    alice, bob = logged_in(hostile_app, "alice@example.org"), logged_in(hostile_app, "bob@example.org")
    for _ in range(3):
        assert _ask(alice, CEFAZOLIN).status_code == 200
    limited = _ask(alice, CEFAZOLIN)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "60"
    assert limited.json()["detail"] == "too many questions: at most 3 a minute; try again in 60 s"
    assert _ask(alice, CEFAZOLIN, stream=True).status_code == 429  # the chat's stream too
    user = next(u for u in list_users(store_of(hostile_app)) if u.email == "alice@example.org")
    _, token = create_api_token(store_of(hostile_app), user, "script")
    by_token = TestClient(hostile_app).post("/api/ask", json={"question": CEFAZOLIN},
                                            headers={"Authorization": f"Bearer {token}"})  # fmt: skip
    assert by_token.status_code == 429  # the limit is the user's, however they come in
    assert _ask(bob, CEFAZOLIN).status_code == 200  # others are not held up
    clock.now += 20
    assert _ask(alice, CEFAZOLIN).headers["retry-after"] == "40"
    clock.now += 41
    assert _ask(alice, CEFAZOLIN).status_code == 200


def _login(app: FastAPI, email: str, password: str, address: str = "testclient") -> object:
    client = TestClient(app, follow_redirects=False, client=(address, 50000))
    return log_in(client, email, password)


def test_failed_logins_lock_out_for_longer_each_time(hostile_app: FastAPI, clock: Clock) -> None:
    for _ in range(5):
        assert _login(hostile_app, "bob@example.org", "wrong").status_code == 401
    locked = _login(hostile_app, "bob@example.org", PASSWORD)  # even the right password waits
    assert locked.status_code == 429 and locked.headers["retry-after"] == "30"
    assert "Too many failed logins: try again in 30 s." in locked.text
    assert _login(hostile_app, " BOB@example.org", PASSWORD).status_code == 429  # one email, however typed
    assert _login(hostile_app, "alice@example.org", PASSWORD).status_code == 303  # another account
    assert _login(hostile_app, "bob@example.org", PASSWORD, "10.0.0.7").status_code == 429  # from anywhere
    clock.now += 31
    assert _login(hostile_app, "bob@example.org", "wrong").status_code == 401
    assert _login(hostile_app, "bob@example.org", PASSWORD).headers["retry-after"] == "60"  # doubled
    clock.now += 61
    assert _login(hostile_app, "bob@example.org", "wrong").status_code == 401
    assert _login(hostile_app, "bob@example.org", PASSWORD).headers["retry-after"] == "120"
    clock.now += 121
    assert _login(hostile_app, "bob@example.org", PASSWORD).status_code == 303  # a success clears it
    assert _login(hostile_app, "bob@example.org", "wrong").status_code == 401


def test_a_password_spray_from_one_address_is_locked_out(hostile_app: FastAPI, clock: Clock) -> None:
    """Wrong passwords for many accounts from one address: each account stays under its own limit, but
    the address is stopped at login_max_failures_per_address, whatever account it tries next."""
    sprayer = "198.51.100.9"
    for n in range(20):
        assert _login(hostile_app, f"nobody{n}@example.org", "wrong", sprayer).status_code == 401
    assert _login(hostile_app, "alice@example.org", PASSWORD, sprayer).status_code == 429
    assert _login(hostile_app, "alice@example.org", PASSWORD, "10.0.0.8").status_code == 303  # elsewhere
    clock.now += 31
    assert _login(hostile_app, "alice@example.org", PASSWORD, sprayer).status_code == 303
    assert _login(hostile_app, "nobody0@example.org", "wrong", sprayer).status_code == 401
    assert _login(hostile_app, "alice@example.org", PASSWORD, sprayer).headers["retry-after"] == "60"


def test_searches_are_rate_limited_per_user(hostile_app: FastAPI, clock: Clock) -> None:
    alice, bob = logged_in(hostile_app, "alice@example.org"), logged_in(hostile_app, "bob@example.org")
    for _ in range(5):
        assert alice.get("/api/search", params={"q": CEFAZOLIN}).status_code == 200
    limited = alice.get("/api/search", params={"q": CEFAZOLIN})
    assert limited.status_code == 429 and limited.headers["retry-after"] == "60"
    assert "too many searches: at most 5 a minute" in limited.json()["detail"]
    assert bob.get("/api/search", params={"q": CEFAZOLIN}).status_code == 200  # others go on
    clock.now += 60
    assert alice.get("/api/search", params={"q": CEFAZOLIN}).status_code == 200


def test_questions_are_bounded_by_the_setting_and_cleaned(hostile_app: FastAPI) -> None:
    alice = logged_in(hostile_app, "alice@example.org")
    for stream in (False, True):
        response = _ask(alice, "x" * 2001, stream=stream)
        assert response.status_code == 422
        assert response.json()["detail"] == (
            "the question is 2,001 characters long; the limit is 2,000 (setting max_question_chars)"
        )
    assert _ask(alice, " \x00\x1b ").json()["detail"] == "the question is empty"
    assert alice.get("/api/search", params={"q": "y" * 2001}).status_code == 422
    record = _ask(alice, "\x00Cefazolin\x1b[31m before incision?\x07").json()
    assert record["question"] == "Cefazolin [31m before incision?"


def test_the_limit_is_the_setting_not_the_schema(hostile_settings: Settings, tmp_path: Path) -> None:
    settings = hostile_settings.model_copy(
        update={"max_question_chars": 3000, "database_url": f"sqlite:///{tmp_path / 'app.sqlite3'}"}
    )
    for app in _started(settings):
        alice = logged_in(app, "alice@example.org")
        assert _ask(alice, "Cefazolin? " + "x" * 2500).status_code == 200
        assert "the limit is 3,000" in _ask(alice, "x" * 3001).json()["detail"]


def test_control_characters_are_stored_on_every_database(app: FastAPI, alice: Client) -> None:
    """PostgreSQL refuses NUL in text: questions and comments are cleaned before they are stored."""
    response = alice.post("/api/ask", json={"question": "Shaving\x00 before spinal surgery?"},
                          headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert response.status_code == 200 and response.json()["question"] == "Shaving  before spinal surgery?"
    feedback = alice.post(f"/api/answers/{response.json()['answer_id']}/feedback",
                          json={"rating": "excellent", "comment": "fine\x00"}, headers={"X-CSRF-Token": alice.csrf})  # fmt: skip
    assert (feedback.status_code, feedback.json()["comment"]) == (200, "fine")


def test_questions_reach_the_log_only_when_the_settings_say_so(
    hostile_app: FastAPI, caplog: pytest.LogCaptureFixture
) -> None:
    alice = logged_in(hostile_app, "alice@example.org")
    question = "Does cefazolin QX-4471 before incision reduce infection?"
    with caplog.at_level(logging.DEBUG):
        assert _ask(alice, question).status_code == 200
        assert alice.get("/api/search", params={"q": question}).status_code == 200
    assert "QX-4471" not in server_log(caplog)
    services = hostile_app.state.services
    original = services.settings
    services.settings = original.model_copy(update={"log_questions": True})
    caplog.clear()
    try:
        with caplog.at_level(logging.INFO):
            assert _ask(alice, question).status_code == 200
    finally:
        services.settings = original
    [logged] = [r for r in caplog.records if "QX-4471" in r.getMessage()]
    assert logged.name == "evidenceqa.web.guards" and logged.getMessage().endswith(question)


@pytest.fixture(scope="module")
def llm_app(
    hostile_settings: Settings, llm: OpenAIServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FastAPI]:
    database = f"sqlite:///{tmp_path_factory.mktemp('db') / 'a.db'}"
    settings = llm_settings(hostile_settings, f"{llm.url}/v1", KEY, database_url=database)
    yield from _started(settings)


def test_secrets_never_reach_the_log(
    llm_app: FastAPI, llm: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A whole session at DEBUG: invitation, logins (a wrong one too), answers by cookie and by token,
    the LLM failing with a message that echoes its key, logout."""
    new_password = "a brand new passphrase 77"
    with caplog.at_level(logging.DEBUG):
        admin = logged_in(llm_app, "admin@example.org")
        invite = admin.post("/api/admin/invites", json={"email": "carol@example.org"},
                            headers={"X-CSRF-Token": admin.csrf}).json()  # fmt: skip
        invite_token = invite["url"].rsplit("/", 1)[1]
        carol = Client(llm_app, follow_redirects=False)
        form = FORM_TOKEN.search(carol.get(f"/invite/{invite_token}").text).group(1)
        accepted = carol.post(f"/invite/{invite_token}", data={"name": "Carol", "password": new_password,
                                                                "confirm": new_password, "csrf_token": form})  # fmt: skip
        assert accepted.status_code == 303
        assert _login(llm_app, "carol@example.org", "not her password").status_code == 401
        carol = logged_in_with(llm_app, "carol@example.org", new_password)
        llm.script(answer("Cefazolin before incision reduced infection [1]."))
        assert _ask(carol, CEFAZOLIN).status_code == 200
        user = next(u for u in list_users(store_of(llm_app)) if u.email == "carol@example.org")
        _, api_token = create_api_token(store_of(llm_app), user, "script")
        llm.script(failure(500, f"bad upstream, key {KEY}"), failure(500, f"bad upstream, key {KEY}"))
        failed = TestClient(llm_app).post("/api/ask", json={"question": "Is shaving before spinal surgery safe?"},
                                          headers={"Authorization": f"Bearer {api_token}"})  # fmt: skip
        assert failed.status_code == 502 and "500" in failed.json()["detail"] and KEY not in failed.text
        assert carol.post("/logout", data={"csrf_token": carol.csrf}).status_code == 303
    secrets = {"llm key": KEY, "password": PASSWORD, "new password": new_password, "invite": invite_token,
               "api token": api_token, "session": carol.session_token,
               "csrf": carol.csrf, "admin session": admin.cookies["evidenceqa_session"]}  # fmt: skip
    logged = server_log(caplog)
    assert "HTTP Request: POST" in logged, "the LLM calls are logged (else this checks nothing)"
    assert [name for name, value in secrets.items() if value and value in logged] == []


def logged_in_with(app: FastAPI, email: str, password: str) -> Client:
    client = Client(app, follow_redirects=False)
    assert log_in(client, email, password).status_code == 303
    client.csrf = re.search(r'<meta name="csrf-token" content="([^"]+)">', client.get("/").text).group(1)
    client.session_token = client.cookies["evidenceqa_session"]
    return client


@pytest.mark.parametrize(
    ("path", "keep", "shown"),
    [("/api/search?q=does+shaving+hurt", False, "/api/search"),
     ("/api/search?q=does+shaving+hurt", True, "/api/search?q=does+shaving+hurt"),
     ("/invite/Zx81_secret-token", True, "/invite/***"),
     ("/invite/Zx81_secret-token?next=/", False, "/invite/***"),
     ("/reset/Zx81_secret-token", True, "/reset/***")],
)  # fmt: skip
def test_the_access_log_keeps_no_question_and_no_invitation(path: str, keep: bool, shown: str) -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", path, "1.1", 200), None)  # fmt: skip
    assert AccessLogRedaction(keep_queries=keep).filter(record)
    assert record.getMessage() == f'127.0.0.1:5000 - "GET {shown} HTTP/1.1" 200'


def test_a_claim_its_passage_does_not_make_is_flagged_in_the_api_and_the_chat(
    llm_app: FastAPI, llm: OpenAIServer
) -> None:
    alice = logged_in(llm_app, "alice@example.org")
    llm.script(
        answer(
            "Cefazolin before incision cut infection by 73% [1]. ", "Cefazolin is given before incision [1]."
        )
    )
    # A question of its own: an answer to CEFAZOLIN may already be in the cache.
    record = _ask(
        alice, "By how much does cefazolin before incision cut infection after hip replacement?"
    ).json()
    assert record["cache_hit"] is False
    assert record["unsupported_sentences"] == ["Cefazolin before incision cut infection by 73%."]
    page = alice.get(f"/conversations/{record['conversation_id']}")
    flagged = re.search(r'<aside class="flagged" role="note">(.*?)</aside>', page.text, re.S)
    assert flagged and "cut infection by 73%" in flagged.group(1)
    assert "Cefazolin is given before incision." not in flagged.group(1)
