"""Several workers share their guards: two app instances on one database (SQLite, a real PostgreSQL)
or one Redis, as two uvicorn worker processes would be, see each other's failed logins and rate
limits. With counters in each process (the old way), every test here lets the second one through."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from evidenceqa.settings import Settings
from evidenceqa.store import create_user
from evidenceqa.web.app import create_app
from evidenceqa.web.simulate import log_in
from tests.store.postgres import PostgresServer
from tests.web.conftest import PASSWORD, logged_in, store_of

BOB = "bob@example.org"


@pytest.fixture(params=["sqlite", "postgresql", "redis"])
def workers(request: pytest.FixtureRequest, web_settings: Settings, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[FastAPI, FastAPI]]:  # fmt: skip
    """Two apps on one database, three failed logins a lockout, four searches a minute; counters in the
    database ("auto" with two workers) or in Redis (redis_url set)."""
    update: dict[str, object] = {"web_workers": 2, "login_max_failures": 3, "search_rate_per_minute": 4}
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        update["database_url"] = server.create_database()
    else:
        update["database_url"] = f"sqlite:///{tmp_path_factory.mktemp('workers') / 'app.sqlite3'}"
    if request.param == "redis":
        update["redis_url"] = request.getfixturevalue("redis_url")
    settings = Settings.model_validate({**web_settings.model_dump(), **update})
    first, second = create_app(settings), create_app(settings)
    with TestClient(first), TestClient(second):
        create_user(store_of(first), BOB, "Bob", PASSWORD)
        yield first, second


def _login(app: FastAPI, password: str) -> int:
    return log_in(TestClient(app, follow_redirects=False), BOB, password).status_code


def test_failed_logins_on_one_worker_lock_the_account_on_the_other(workers: tuple[FastAPI, FastAPI]) -> None:
    first, second = workers
    assert [_login(first, "wrong"), _login(second, "wrong"), _login(first, "wrong")] == [401, 401, 401]
    assert {app.state.guards.accounts.counters.name for app in workers} <= {"database", "redis"}
    assert _login(second, PASSWORD) == 429  # the third failure was on the other worker
    assert _login(first, PASSWORD) == 429


def test_searches_on_both_workers_count_against_one_limit(workers: tuple[FastAPI, FastAPI]) -> None:
    first, second = workers
    on_first, on_second = logged_in(first, BOB), logged_in(second, BOB)
    codes = [client.get("/api/search", params={"q": "cefazolin"}).status_code
             for client in (on_first, on_second, on_first, on_second)]  # fmt: skip
    assert codes == [200] * 4
    assert on_first.get("/api/search", params={"q": "cefazolin"}).status_code == 429
    assert on_second.get("/api/search", params={"q": "cefazolin"}).status_code == 429
