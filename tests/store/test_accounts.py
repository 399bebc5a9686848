"""Users and passwords, invitations, login sessions and API tokens, on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from evidenceqa.store import (
    AccountError,
    ApiToken,
    Invite,
    LoginSession,
    Store,
    User,
    accept_invite,
    accounts,
    api_tokens_of,
    authenticate,
    create_api_token,
    create_invite,
    create_user,
    end_session,
    purge_expired_sessions,
    revoke_api_token,
    session_user,
    set_active,
    set_password,
    start_session,
    token_user,
)
from tests.store.conftest import Clock

PASSWORD = "correct horse battery"


def _stored(store: Store, model: type, **where: object) -> list:
    with store.transaction() as session:
        query = select(model).filter_by(**where)
        return list(session.scalars(query))


def test_a_user_logs_in_with_their_password_only(store: Store) -> None:
    user = create_user(store, "  Surgeon@Hospital.ORG ", " Dr Ann ", PASSWORD)
    assert (user.email, user.name, user.is_admin, user.active) == (
        "surgeon@hospital.org",
        "Dr Ann",
        False,
        True,
    )
    assert user.created_at == store.now()
    row = _stored(store, User, id=user.id)[0]
    assert PASSWORD not in row.password_hash and row.password_hash.startswith("$argon2id$")
    found = authenticate(store, "SURGEON@hospital.org ", PASSWORD)
    assert found is not None and found.id == user.id
    assert authenticate(store, "surgeon@hospital.org", PASSWORD + "!") is None
    assert authenticate(store, "nobody@hospital.org", PASSWORD) is None
    assert authenticate(store, "not an email", PASSWORD) is None


def test_duplicate_email_is_refused_whatever_its_case(store: Store) -> None:
    create_user(store, "a@example.org", "A", PASSWORD)
    with pytest.raises(AccountError, match="already exists"):
        create_user(store, " A@EXAMPLE.org", "Another A", PASSWORD)
    assert len(_stored(store, User)) == 1


@pytest.mark.parametrize("password", ["", "short", "123456789"])
def test_weak_passwords_are_refused(store: Store, password: str) -> None:
    with pytest.raises(AccountError, match="at least 10 characters"):
        create_user(store, "a@example.org", "A", password)
    assert _stored(store, User) == []


def test_an_email_must_look_like_one(store: Store) -> None:
    with pytest.raises(AccountError, match="not an email address"):
        create_user(store, "surgeon", "A", PASSWORD)


def test_a_hash_made_with_old_parameters_is_upgraded_at_login(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    old_hash = _stored(store, User, id=user.id)[0].password_hash
    stronger = PasswordHasher(time_cost=2, memory_cost=16, parallelism=1)
    monkeypatch.setattr(accounts, "password_hasher", stronger)
    assert authenticate(store, "a@example.org", PASSWORD) is not None
    new_hash = _stored(store, User, id=user.id)[0].password_hash
    assert new_hash != old_hash and not stronger.check_needs_rehash(new_hash)
    assert authenticate(store, "a@example.org", PASSWORD) is not None


def test_an_inactive_user_cannot_log_in_or_use_a_session_or_token(store: Store) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    cookie, _ = start_session(store, user)
    _, token = create_api_token(store, user, "script")
    set_active(store, user, False)
    assert authenticate(store, "a@example.org", PASSWORD) is None
    assert session_user(store, cookie) is None
    assert token_user(store, token) is None
    set_active(store, user.id, True)
    assert authenticate(store, "a@example.org", PASSWORD) is not None
    assert token_user(store, token) is not None


def test_changing_the_password_ends_sessions(store: Store) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    cookie, _ = start_session(store, user)
    set_password(store, user, "a new long password")
    assert session_user(store, cookie) is None
    assert authenticate(store, "a@example.org", PASSWORD) is None
    assert authenticate(store, "a@example.org", "a new long password") is not None


def test_an_invite_makes_one_account_once(store: Store) -> None:
    admin = create_user(store, "admin@example.org", "Admin", PASSWORD, is_admin=True)
    token = create_invite(store, " New@Example.org", is_admin=False, created_by=admin)
    invite = _stored(store, Invite)[0]
    assert invite.token_hash == hashlib.sha256(token.encode()).hexdigest() and token not in invite.token_hash
    assert (invite.email, invite.created_by, invite.used_at) == ("new@example.org", admin.id, None)
    user = accept_invite(store, token, "New Person", PASSWORD)
    assert (user.email, user.name, user.is_admin) == ("new@example.org", "New Person", False)
    assert authenticate(store, "new@example.org", PASSWORD) is not None
    with pytest.raises(AccountError, match="already used"):
        accept_invite(store, token, "Someone Else", "another long password")
    assert _stored(store, Invite)[0].used_at == store.now()


def test_an_admin_invite_makes_an_admin(store: Store) -> None:
    token = create_invite(store, "boss@example.org", is_admin=True, created_by=None)
    assert accept_invite(store, token, "Boss", PASSWORD).is_admin


def test_an_invite_expires(store: Store, clock: Clock) -> None:
    token = create_invite(store, "late@example.org", is_admin=False, created_by=None, days=7)
    clock.advance(days=6, hours=23)
    still = create_invite(store, "late2@example.org", is_admin=False, created_by=None, days=7)
    assert accept_invite(store, token, "In time", PASSWORD).email == "late@example.org"
    clock.advance(days=7)
    with pytest.raises(AccountError, match="expired"):
        accept_invite(store, still, "Too late", PASSWORD)


def test_unknown_invites_and_weak_passwords_are_named(store: Store) -> None:
    with pytest.raises(AccountError, match="unknown invite"):
        accept_invite(store, "made-up-token", "X", PASSWORD)
    token = create_invite(store, "n@example.org", is_admin=False, created_by=None)
    with pytest.raises(AccountError, match="at least 10"):
        accept_invite(store, token, "N", "short")
    assert accept_invite(store, token, "N", PASSWORD).email == "n@example.org"  # still usable


def test_no_invite_for_an_existing_account(store: Store) -> None:
    create_user(store, "a@example.org", "A", PASSWORD)
    with pytest.raises(AccountError, match="already exists"):
        create_invite(store, "A@example.org", is_admin=False, created_by=None)


def test_a_session_identifies_its_user_until_it_expires(store: Store, clock: Clock) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    cookie, csrf = start_session(store, user)
    row = _stored(store, LoginSession)[0]
    assert row.id == hashlib.sha256(cookie.encode()).hexdigest()
    assert (row.created_at, row.expires_at) == (clock.now, clock.now + timedelta(days=14))
    assert cookie not in row.id and len(csrf) >= 40
    found = session_user(store, cookie)
    assert found is not None and (found[0].id, found[1]) == (user.id, csrf)
    assert session_user(store, cookie + "x") is None
    for _ in range(2 * (13 * 24 + 23)):  # used every half hour (the idle timeout has its own test)
        clock.advance(minutes=30)
        assert session_user(store, cookie) is not None
    clock.advance(hours=1)
    assert session_user(store, cookie) is None
    start_session(store, user)  # the next login deletes expired sessions; reading them writes nothing
    assert [r.id for r in _stored(store, LoginSession)] != [row.id] and len(_stored(store, LoginSession)) == 1


def test_end_session_logs_out_that_session_only(store: Store) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    (laptop, _), (phone, _) = start_session(store, user), start_session(store, user)
    end_session(store, laptop)
    end_session(store, "never-issued")
    assert session_user(store, laptop) is None
    assert session_user(store, phone) is not None


def test_purging_removes_only_expired_and_idle_sessions(store: Store, clock: Clock) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    start_session(store, user)
    clock.advance(minutes=30)
    in_use, _ = start_session(store, user)  # also purges: nothing is dead yet
    clock.advance(minutes=40)  # the first has been idle for 70 minutes, the second for 40
    assert purge_expired_sessions(store) == 1
    assert session_user(store, in_use) is not None
    clock.advance(days=15)
    assert purge_expired_sessions(store) == 1  # expired (and idle)


def test_api_tokens_store_only_a_hash(store: Store, clock: Clock) -> None:
    user = create_user(store, "a@example.org", "A", PASSWORD)
    record, raw = create_api_token(store, user, " nightly export ")
    assert raw.startswith("eqa_") and len(raw) > 40
    row = _stored(store, ApiToken)[0]
    assert row.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in repr(row.__dict__)  # nowhere in the row
    assert (row.name, row.user_id, row.last_used_at) == ("nightly export", user.id, None)
    assert (record.id, record.name) == (row.id, "nightly export")  # the record returned is the one stored
    clock.advance(minutes=5)
    found = token_user(store, raw)
    assert found is not None and found.id == user.id
    assert _stored(store, ApiToken)[0].last_used_at == clock.now
    assert token_user(store, raw[:-1]) is None
    assert token_user(store, row.token_hash) is None  # the stored hash is not itself a token


def test_an_api_token_needs_a_name(store: Store) -> None:
    user = create_user(store, "n@example.org", "N", PASSWORD)
    with pytest.raises(AccountError, match="an API token needs a name"):
        create_api_token(store, user, "   ")
    assert _stored(store, ApiToken) == []


def test_api_tokens_are_listed_and_revoked_by_their_owner(store: Store) -> None:
    ann = create_user(store, "ann@example.org", "Ann", PASSWORD)
    bob = create_user(store, "bob@example.org", "Bob", PASSWORD)
    _, raw = create_api_token(store, ann, "script")
    [token] = api_tokens_of(store, ann)
    assert api_tokens_of(store, bob) == []
    assert not revoke_api_token(store, bob, token.id)
    assert token_user(store, raw) is not None
    assert revoke_api_token(store, ann, token.id)
    assert token_user(store, raw) is None
