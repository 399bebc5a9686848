"""Accounts: users and passwords, invitations, password-reset links, login sessions (cookie + CSRF
token, an idle timeout) and API tokens.

Passwords are hashed with argon2. Invite, session and API tokens are 256-bit random strings handed
out once; only their SHA-256 is stored (they are unguessable, so a fast hash that can be looked up
is enough), and a database leak gives no one a way in.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import threading
from datetime import datetime, timedelta
from functools import cache
from typing import Any, cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import CursorResult, Delete, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evidenceqa.store.db import Store
from evidenceqa.store.entitlements import check_token_collections
from evidenceqa.store.models import ApiToken, Invite, LoginSession, PasswordReset, User
from evidenceqa.text.characters import is_plain, visible

MIN_PASSWORD_CHARS = 10
API_TOKEN_PREFIX = "eqa_"  # recognisable in logs and secret scanners
LAST_USED_EVERY = timedelta(minutes=1)  # how often a token's last use is written

# Replaceable (tests use cheaper parameters); a stored hash made with other parameters is
# upgraded at the user's next successful login.
password_hasher = PasswordHasher()
# Hashing is CPU- and memory-bound (64 MiB each): more at once than there are cores only adds memory,
# so a burst of logins queues here, outside any transaction, instead of in the thread pool's arenas.
_HASHING = threading.BoundedSemaphore(max(2, len(os.sched_getaffinity(0))))


class AccountError(ValueError):
    """An account operation refused, with a message naming the problem (safe to show the user)."""


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if (
        "@" not in email
        or email.startswith("@")
        or email.endswith("@")
        or " " in email
        or not is_plain(email)
    ):
        raise AccountError(f"not an email address: {email!r}")
    return email


def _name(name: str) -> str:
    """A person's or a token's name as stored: one line of visible text."""
    return " ".join(visible(name).split())


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"password too weak: it needs at least {MIN_PASSWORD_CHARS} characters")


def _user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == email))


def _hashed(password: str) -> str:
    """The password's hash, made before any transaction opens: hashing is slow on purpose."""
    _check_password(password)
    with _HASHING:
        return password_hasher.hash(password)


def _new_user(session: Session, store: Store, email: str, name: str, hashed: str, is_admin: bool) -> User:
    email = normalise_email(email)
    if _user_by_email(session, email) is not None:
        raise AccountError(f"an account with the email {email} already exists")
    user = User(
        email=email,
        name=_name(name),
        password_hash=hashed,
        is_admin=is_admin,
        active=True,
        created_at=store.now(),
    )
    session.add(user)
    try:
        session.flush()  # assigns the id, and meets the unique email if another request just took it
    except IntegrityError:
        raise AccountError(f"an account with the email {email} already exists") from None
    return user


def create_user(store: Store, email: str, name: str, password: str, is_admin: bool = False) -> User:
    normalise_email(email)  # a bad address fails before the slow hash
    hashed = _hashed(password)
    with store.transaction() as session:
        return _new_user(session, store, email, name, hashed, is_admin)


@cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    return hasher.hash("not anyone's password")


def authenticate(store: Store, email: str, password: str) -> User | None:
    """The active user with this email and password, else None. An unknown email costs the same
    argon2 verification as a known one, so response times do not reveal which emails have accounts.

    The hash is verified outside any transaction: it takes a good part of a second on purpose, and a
    shift's worth of logins must not queue for the write lock behind it."""
    try:
        email = normalise_email(email)
    except AccountError:
        email = ""
    with store.read() as session:
        user = _user_by_email(session, email) if email else None
    if not _verify(user.password_hash if user else _dummy_hash(password_hasher), password):
        return None
    if user is None or not user.active:
        return None
    if password_hasher.check_needs_rehash(user.password_hash):
        with _HASHING:
            upgraded = password_hasher.hash(password)
        with store.transaction() as session:
            # Only if the password did not change meanwhile.
            query = update(User).where(User.id == user.id, User.password_hash == user.password_hash)
            session.execute(query.values(password_hash=upgraded))
        user.password_hash = upgraded
    return user


def _verify(hashed: str, password: str) -> bool:
    try:
        with _HASHING:
            return password_hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


def set_password(store: Store, user: User, password: str) -> None:
    """A new password; every login session of the user ends (whoever knew the old one is out)."""
    hashed = _hashed(password)
    with store.transaction() as session:
        stored = session.get_one(User, user.id)
        stored.password_hash = hashed
        session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))


def get_user(store: Store, user_id: int) -> User | None:
    with store.read() as session:
        return session.get(User, user_id)


def list_users(store: Store) -> list[User]:
    with store.read() as session:
        return list(session.scalars(select(User).order_by(User.email)))


def set_active(store: Store, user: User | int, active: bool) -> None:
    """Deactivating keeps the user's conversations and feedback but ends their sessions and tokens' use."""
    user_id = user if isinstance(user, int) else user.id
    with store.transaction() as session:
        session.get_one(User, user_id).active = active
        if not active:
            session.execute(delete(LoginSession).where(LoginSession.user_id == user_id))


def create_invite(
    store: Store, email: str, is_admin: bool, created_by: User | int | None, days: int = 7
) -> str:
    """A single-use invitation for `email`; returns the raw token for the link (it is not stored)."""
    email = normalise_email(email)
    token = secrets.token_urlsafe(32)
    inviter = created_by.id if isinstance(created_by, User) else created_by
    with store.transaction() as session:
        if _user_by_email(session, email) is not None:
            raise AccountError(f"an account with the email {email} already exists")
        now = store.now()
        session.add(
            Invite(
                token_hash=token_hash(token),
                email=email,
                is_admin=is_admin,
                created_by=inviter,
                created_at=now,
                expires_at=now + timedelta(days=days),
            )
        )
    return token


def accept_invite(store: Store, token: str, name: str, password: str) -> User:
    """The invited user's new account. A weak password or taken email leaves the invite usable."""
    hashed = _hashed(password)
    with store.transaction() as session:
        # Locked (PostgreSQL) so that two tabs accepting at once cannot both use it.
        invite = session.get(Invite, token_hash(token), with_for_update=True)
        if invite is None:
            raise AccountError("unknown invite: the link is wrong or was replaced")
        if invite.used_at is not None:
            raise AccountError("invite already used: log in, or ask an administrator for a new one")
        if invite.expires_at <= store.now():
            raise AccountError("invite expired: ask an administrator for a new one")
        user = _new_user(session, store, invite.email, name, hashed, invite.is_admin)
        invite.used_at = store.now()
        return user


def start_session(store: Store, user: User) -> tuple[str, str]:
    """A login: (token for the cookie, CSRF token for forms). Lasts `settings.session_days`."""
    cookie_token, csrf_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = store.now()
    with store.transaction() as session:
        session.execute(_dead_sessions(store, now))
        session.add(
            LoginSession(
                id=token_hash(cookie_token),
                user_id=user.id,
                csrf_token=csrf_token,
                created_at=now,
                expires_at=now + timedelta(days=store.settings.session_days),
            )
        )
    return cookie_token, csrf_token


def session_user(store: Store, cookie_token: str) -> tuple[User, str] | None:
    """The logged-in user and the session's CSRF token; None for an unknown, expired, idle or inactive
    one. Reads, and writes the session's last use at most once a minute: every page and API call
    passes here. Expired sessions are deleted at the next login."""
    now = store.now()
    with store.read() as session:
        login = session.get(LoginSession, token_hash(cookie_token))
        if login is None or login.expires_at <= now:
            return None
        seen = login.last_seen_at or login.created_at
        if now - seen >= timedelta(minutes=store.settings.session_idle_minutes):
            return None
        user = session.get(User, login.user_id)
        if user is None or not user.active:
            return None
    if now - seen >= LAST_USED_EVERY:
        with store.transaction() as session:
            session.execute(update(LoginSession).where(LoginSession.id == login.id).values(last_seen_at=now))
    return user, login.csrf_token


def end_session(store: Store, cookie_token: str) -> None:
    with store.transaction() as session:
        session.execute(delete(LoginSession).where(LoginSession.id == token_hash(cookie_token)))


def end_all_sessions(store: Store, user: User | int) -> int:
    """Log the user out everywhere (every browser and device); returns how many sessions ended."""
    user_id = user if isinstance(user, int) else user.id
    with store.transaction() as session:
        query = delete(LoginSession).where(LoginSession.user_id == user_id)
        return cast(CursorResult[Any], session.execute(query)).rowcount


def change_password(store: Store, user: User, current: str, new: str) -> None:
    """The user's own change: the current password must be right; every session of theirs ends."""
    if authenticate(store, user.email, current) is None:
        raise AccountError("the current password is wrong")
    if new == current:
        raise AccountError("the new password is the same as the current one")
    set_password(store, user, new)


def create_password_reset(store: Store, user: User | int, created_by: User | None, hours: int = 24) -> str:
    """A one-time link's token to set a new password for `user`, valid for `hours`; returned only now
    (its hash is kept). An earlier unused link of the same user stops working."""
    user_id = user if isinstance(user, int) else user.id
    token, now = secrets.token_urlsafe(32), store.now()
    with store.transaction() as session:
        if session.get(User, user_id) is None:
            raise AccountError(f"no account {user_id}")
        session.execute(
            delete(PasswordReset).where(PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None))
        )
        session.add(PasswordReset(token_hash=token_hash(token), user_id=user_id,
                                  created_by=created_by.id if created_by else None, created_at=now,
                                  expires_at=now + timedelta(hours=hours)))  # fmt: skip
    return token


def reset_password(store: Store, token: str, password: str) -> User:
    """Use a reset link: the new password, every session of the user ended, the link spent. A weak
    password leaves the link usable."""
    hashed = _hashed(password)
    now = store.now()
    with store.transaction() as session:
        reset = session.get(PasswordReset, token_hash(token), with_for_update=True)
        if reset is None:
            raise AccountError("unknown reset link: it is wrong, or a newer one replaced it")
        if reset.used_at is not None:
            raise AccountError("reset link already used: log in, or ask an administrator for a new one")
        if reset.expires_at <= now:
            raise AccountError("reset link expired: ask an administrator for a new one")
        user = session.get_one(User, reset.user_id)
        if not user.active:
            raise AccountError("this account is deactivated: ask an administrator")
        user.password_hash, reset.used_at = hashed, now
        session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))
        return user


def _dead_sessions(store: Store, now: datetime) -> Delete:
    idle_since = now - timedelta(minutes=store.settings.session_idle_minutes)
    last_use = func.coalesce(LoginSession.last_seen_at, LoginSession.created_at)
    return delete(LoginSession).where(or_(LoginSession.expires_at <= now, last_use <= idle_since))


def purge_expired_sessions(store: Store) -> int:
    """Delete expired and idle logins (they are refused anyway); returns how many."""
    with store.transaction() as session:
        # Session.execute is typed to return a Result; a DELETE's is a CursorResult, which has rowcount.
        return cast(CursorResult[Any], session.execute(_dead_sessions(store, store.now()))).rowcount


def create_api_token(
    store: Store, user: User, name: str, collections: list[str] | None = None
) -> tuple[ApiToken, str]:
    """A token for scripts (`Authorization: Bearer …`): its record, and the token itself, which is
    returned only now (only its hash is kept). `name` says what uses it, so it can be revoked.
    `collections` holds it to those (each one its account may read); None: all its account may."""
    name = _name(name)
    if not name:
        raise AccountError("an API token needs a name: what will use it?")
    if collections is not None:
        collections = check_token_collections(store, user, collections)
    raw = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.transaction() as session:
        token = ApiToken(user_id=user.id, name=name, token_hash=token_hash(raw), created_at=store.now(),
                         collections=collections)  # fmt: skip
        session.add(token)
        session.flush()  # its id, for the caller to show and revoke by
    return token, raw


def token_user(store: Store, raw: str) -> User | None:
    """The active user an API token belongs to, else None."""
    found = token_owner(store, raw)
    return found[0] if found is not None else None


def token_owner(store: Store, raw: str) -> tuple[User, list[str] | None] | None:
    """The active user an API token belongs to and the collections it is held to (None: all its
    owner may read), else None. Records when the token was last used, at most once a minute, so a
    script's stream of calls is not a stream of writes."""
    with store.read() as session:
        token = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(raw)))
        user = session.get(User, token.user_id) if token is not None else None
    if token is None or user is None or not user.active:
        return None
    now = store.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_EVERY:
        with store.transaction() as session:
            session.execute(update(ApiToken).where(ApiToken.id == token.id).values(last_used_at=now))
    return user, token.collections


def api_tokens_of(store: Store, user: User) -> list[ApiToken]:
    with store.read() as session:
        query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)
        return list(session.scalars(query))


def revoke_api_token(store: Store, user: User, token_id: int) -> bool:
    """Delete one of the user's own tokens; False when they have no such token."""
    with store.transaction() as session:
        query = delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user.id)
        return cast(CursorResult[Any], session.execute(query)).rowcount > 0  # as in purge_expired_sessions
