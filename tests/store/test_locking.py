"""SQLite's one write lock: logins, page views and API calls must not queue behind it.

Each test holds something that used to take the write lock (a slow password check, another writer)
and checks the other side goes on at once instead of waiting out the 10 s busy timeout.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from evidenceqa.settings import Settings
from evidenceqa.store import (
    Store,
    accounts,
    authenticate,
    create_api_token,
    create_user,
    open_store,
    session_user,
    start_session,
    token_user,
)
from evidenceqa.store.db import database_url
from evidenceqa.store.models import ApiToken
from tests.store.conftest import Clock

PASSWORD = "correct horse battery"
PROMPT_S = 3.0  # well under the busy timeout (10 s): what "at once" means on a busy machine


@pytest.fixture
def sqlite_store(tmp_path: Path, clock: Clock) -> Iterator[Store]:
    opened = open_store(Settings(home=tmp_path / "home"))
    opened.clock = clock
    yield opened
    opened.close()


class SlowHasher(PasswordHasher):
    """argon2 whose verification waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.entered, self.release = threading.Event(), threading.Event()

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:
        self.entered.set()
        self.release.wait(30)
        return super().verify(hash, password)


def test_a_password_check_does_not_hold_the_write_lock(
    sqlite_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_user(sqlite_store, "ann@example.org", "Ann", PASSWORD)
    slow = SlowHasher()
    monkeypatch.setattr(accounts, "password_hasher", slow)
    found: list[object] = []
    login = threading.Thread(
        target=lambda: found.append(authenticate(sqlite_store, "ann@example.org", PASSWORD))
    )
    login.start()
    try:
        assert slow.entered.wait(10)
        started = time.monotonic()
        start_session(sqlite_store, create_user(sqlite_store, "bob@example.org", "Bob", PASSWORD))
        took = time.monotonic() - started
    finally:
        slow.release.set()
        login.join(30)
    assert took < PROMPT_S, f"another write waited {took:.1f} s behind a password check"
    assert [getattr(u, "email", None) for u in found] == ["ann@example.org"]


def test_reading_a_session_or_a_token_goes_on_while_another_writer_holds_the_lock(
    sqlite_store: Store, clock: Clock
) -> None:
    user = create_user(sqlite_store, "ann@example.org", "Ann", PASSWORD)
    cookie, _ = start_session(sqlite_store, user)
    _, raw = create_api_token(sqlite_store, user, "script")
    assert token_user(sqlite_store, raw) is not None  # its first use is written now
    path = database_url(sqlite_store.settings).removeprefix("sqlite:///")
    other = sqlite3.connect(path, isolation_level=None, timeout=0)  # another process's writer
    other.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        clock.advance(seconds=30)
        assert session_user(sqlite_store, cookie) is not None
        assert token_user(sqlite_store, raw) is not None  # used again within the minute: no write
        took = time.monotonic() - started
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert took < PROMPT_S, f"reads waited {took:.1f} s for another writer"


def test_a_token_records_its_last_use_at_most_once_a_minute(sqlite_store: Store, clock: Clock) -> None:
    user = create_user(sqlite_store, "ann@example.org", "Ann", PASSWORD)
    token, raw = create_api_token(sqlite_store, user, "script")

    def last_used() -> object:
        with sqlite_store.read() as session:
            return session.get_one(ApiToken, token.id).last_used_at

    assert last_used() is None
    token_user(sqlite_store, raw)
    first = clock.now
    assert last_used() == first
    clock.advance(seconds=59)
    token_user(sqlite_store, raw)
    assert last_used() == first
    clock.advance(seconds=1)
    token_user(sqlite_store, raw)
    assert last_used() == clock.now


def test_a_read_commits_nothing(sqlite_store: Store) -> None:
    user = create_user(sqlite_store, "ann@example.org", "Ann", PASSWORD)
    with sqlite_store.read() as session:
        session.get_one(type(user), user.id).name = "Changed"
        session.flush()
    with sqlite_store.read() as session:
        assert session.get_one(type(user), user.id).name == "Ann"
