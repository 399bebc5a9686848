"""PostgreSQL going down under a running app: a clear 503 (JSON for the API, a page for a person), and
everything works again once it is back, the same login included, without restarting the app."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.settings import Settings
from evidenceqa.store import create_user
from evidenceqa.web.app import DATABASE_DOWN, create_app
from evidenceqa.web.simulate import log_in
from tests.store.postgres import PostgresServer, start_postgres
from tests.web.conftest import PASSWORD, SHAVE, Client, logged_in, store_of


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresServer]:
    server = start_postgres()  # its own: this module stops and starts it
    yield server
    server.stop()


@pytest.fixture(scope="module")
def app(web_settings: Settings, cluster: PostgresServer) -> Iterator[FastAPI]:
    application = create_app(web_settings.model_copy(update={"database_url": cluster.create_database()}))
    with TestClient(application):
        create_user(store_of(application), "alice@example.org", "Alice", PASSWORD)
        yield application


def _ask(client: Client) -> object:
    return client.post("/api/ask", json={"question": SHAVE}, headers={"X-CSRF-Token": client.csrf})


def test_a_database_outage_is_a_clear_503_and_passes(
    app: FastAPI, cluster: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    alice = logged_in(app, "alice@example.org")
    assert _ask(alice).status_code == 200
    cluster.pause()
    try:
        api = alice.get("/api/conversations")
        assert api.status_code == 503 and api.json() == {"detail": DATABASE_DOWN}
        assert api.headers["retry-after"] == "5"
        page = alice.get("/")
        assert page.status_code == 503 and DATABASE_DOWN in page.text and "<html" in page.text
        login = log_in(TestClient(app, follow_redirects=False), "alice@example.org", PASSWORD)
        assert login.status_code == 503
        assert _ask(alice).status_code == 503
        assert TestClient(app).get("/healthz").status_code == 200  # alive: no restart for an outage
        ready = TestClient(app).get("/readyz")
        assert ready.status_code == 503  # but not ready: no questions sent here
        assert ready.json()["checks"] == {
            "database": "unavailable (OperationalError)", "embedder": "ok", "index": "ok"}  # fmt: skip
    finally:
        cluster.resume()
    assert TestClient(app).get("/readyz").json()["ready"] is True
    assert alice.get("/api/conversations").status_code == 200  # the same session, no restart
    assert _ask(alice).status_code == 200
    assert "database unavailable (OperationalError): GET /api/conversations answered 503" in caplog.text
