"""Managing accounts: a password-reset link used once, a user's own password change, logging out
everywhere, and the idle timeout. Each ends the sessions it should, and only those."""

from __future__ import annotations

from datetime import timedelta

import pytest

from evidenceqa.store import (
    AccountError,
    PasswordReset,
    Store,
    authenticate,
    change_password,
    create_password_reset,
    create_user,
    end_all_sessions,
    reset_password,
    session_user,
    set_active,
    start_session,
)
from evidenceqa.store.accounts import token_hash
from evidenceqa.store.models import LoginSession
from tests.store.conftest import Clock

PASSWORD, NEW = "correct horse battery", "a brand new passphrase"


def test_a_reset_link_sets_a_new_password_once_and_ends_every_session(store: Store, clock: Clock) -> None:
    admin = create_user(store, "admin@example.org", "Admin", PASSWORD, is_admin=True)
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    phone, _ = start_session(store, ann)
    token = create_password_reset(store, ann, admin)
    with store.read() as session:
        [row] = session.query(PasswordReset).all()
    assert token not in row.token_hash and row.created_by == admin.id
    assert row.expires_at == clock.now + timedelta(hours=24)
    with pytest.raises(AccountError, match="at least 10 characters"):
        reset_password(store, token, "short")  # a weak password leaves the link usable
    assert reset_password(store, token, NEW).id == ann.id
    assert authenticate(store, "ann@example.org", NEW) is not None
    assert authenticate(store, "ann@example.org", PASSWORD) is None
    assert session_user(store, phone) is None
    with pytest.raises(AccountError, match="already used"):
        reset_password(store, token, "yet another passphrase")


def test_a_newer_link_replaces_an_older_one_and_links_expire(store: Store, clock: Clock) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    first = create_password_reset(store, ann, None)
    second = create_password_reset(store, ann, None, hours=1)
    with pytest.raises(AccountError, match="unknown reset link"):
        reset_password(store, first, NEW)
    clock.advance(hours=1)
    with pytest.raises(AccountError, match="expired"):
        reset_password(store, second, NEW)
    with pytest.raises(AccountError, match="no account"):
        create_password_reset(store, 999_999, None)


def test_a_deactivated_account_cannot_be_reset_back_in(store: Store) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    token = create_password_reset(store, ann, None)
    set_active(store, ann, False)
    with pytest.raises(AccountError, match="deactivated"):
        reset_password(store, token, NEW)


def test_changing_one_s_password_needs_the_current_one_and_ends_every_session(store: Store) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    laptop, _ = start_session(store, ann)
    with pytest.raises(AccountError, match="current password is wrong"):
        change_password(store, ann, "not my password", NEW)
    with pytest.raises(AccountError, match="the same"):
        change_password(store, ann, PASSWORD, PASSWORD)
    assert session_user(store, laptop) is not None  # a refused change logs no one out
    change_password(store, ann, PASSWORD, NEW)
    assert session_user(store, laptop) is None and authenticate(store, "ann@example.org", NEW) is not None


def test_logging_out_everywhere_ends_only_that_user_s_sessions(store: Store) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    bob = create_user(store, "bob@example.org", "Bob", PASSWORD)
    mine = [start_session(store, ann)[0] for _ in range(3)]
    his, _ = start_session(store, bob)
    assert end_all_sessions(store, ann) == 3
    assert [session_user(store, c) for c in mine] == [None, None, None]
    assert session_user(store, his) is not None


def test_a_session_unused_for_the_idle_timeout_ends(store: Store, clock: Clock) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    cookie, _ = start_session(store, ann)
    assert store.settings.session_idle_minutes == 60
    for _ in range(5):  # used every 50 minutes: the session goes on
        clock.advance(minutes=50)
        assert session_user(store, cookie) is not None
    with store.read() as session:
        assert session.get_one(LoginSession, token_hash(cookie)).last_seen_at == clock.now
    clock.advance(minutes=60)
    assert session_user(store, cookie) is None
