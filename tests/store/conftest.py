"""Every storage test runs on SQLite and on a real PostgreSQL (one throwaway cluster per session)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import text

from evidenceqa.settings import Settings
from evidenceqa.store import Store, accounts, open_store
from evidenceqa.store.models import Base
from tests.store.postgres import PostgresServer, start_postgres

START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    """The store's time, moved by hand."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def cheap_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Real argon2 with the smallest parameters: the suite hashes dozens of passwords on a busy machine.
    monkeypatch.setattr(
        accounts, "password_hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    )


@pytest.fixture(scope="session")
def shared_postgres_url(postgres: PostgresServer) -> str:
    """One database that `store` tests share on PostgreSQL, emptied after each (a fresh database
    per test costs ~0.3 s more; migration tests use `settings`, which does make one)."""
    return postgres.create_database("shared")


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def settings(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Settings for a new, empty database (PostgreSQL only started when a test needs it)."""
    if backend == "sqlite":
        return Settings(home=tmp_path / "home")
    server: PostgresServer = request.getfixturevalue("postgres")
    return Settings(home=tmp_path / "home", database_url=server.create_database())


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[Store]:
    """An open store with an empty, migrated database, whose time is `clock`."""
    url = request.getfixturevalue("shared_postgres_url") if backend == "postgresql" else None
    opened = open_store(Settings(home=tmp_path / "home", database_url=url))
    opened.clock = clock
    try:
        yield opened
    finally:
        if backend == "postgresql":
            empty_tables(opened)
        opened.close()


def empty_tables(store: Store) -> None:
    """Delete every row, leaving the schema (and Alembic's version) in place. DELETE rather than
    TRUNCATE: on tables this small it is several times faster. Ids keep counting; no test minds."""
    with store.engine.begin() as connection:
        connection.execute(text("SET LOCAL lock_timeout = '10s'"))  # a leaked transaction fails, not hangs
        for table in reversed(Base.metadata.sorted_tables):
            connection.execute(table.delete())
