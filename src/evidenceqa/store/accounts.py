"""Accounts: users and passwords, invitations, login sessions (cookie + CSRF token) and API tokens.

Passwords are hashed with argon2. Invite, session and API tokens are 256-bit random strings handed
out once; only their SHA-256 is stored (they are unguessable, so a fast hash that can be looked up
is enough), and a database leak gives no one a way in.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from functools import cache
from typing import Any, cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import CursorResult, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evidenceqa.store.db import Store
from evidenceqa.store.models import ApiToken, Invite, LoginSession, User

MIN_PASSWORD_CHARS = 10
API_TOKEN_PREFIX = "eqa_"  # recognisable in logs and secret scanners

# Replaceable (tests use cheaper parameters); a stored hash made with other parameters is
# upgraded at the user's next successful login.
password_hasher = PasswordHasher()


class AccountError(ValueError):
    """An account operation refused, with a message naming the problem (safe to show the user)."""


def normalise_email(email: str) -> str:
    email = email.strip().lower()
    if "@" not in email or email.startswith("@") or email.endswith("@") or " " in email:
        raise AccountError(f"not an email address: {email!r}")
    return email


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_CHARS:
        raise AccountError(f"password too weak: it needs at least {MIN_PASSWORD_CHARS} characters")


def _user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == email))


def _new_user(session: Session, store: Store, email: str, name: str, password: str, is_admin: bool) -> User:
    email = normalise_email(email)
    _check_password(password)
    if _user_by_email(session, email) is not None:
        raise AccountError(f"an account with the email {email} already exists")
    user = User(
        email=email,
        name=name.strip(),
        password_hash=password_hasher.hash(password),
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
    with store.transaction() as session:
        return _new_user(session, store, email, name, password, is_admin)


@cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    return hasher.hash("not anyone's password")


def authenticate(store: Store, email: str, password: str) -> User | None:
    """The active user with this email and password, else None. An unknown email costs the same
    argon2 verification as a known one, so response times do not reveal which emails have accounts."""
    try:
        email = normalise_email(email)
    except AccountError:
        email = ""
    with store.transaction() as session:
        user = _user_by_email(session, email) if email else None
        if not _verify(user.password_hash if user else _dummy_hash(password_hasher), password):
            return None
        if user is None or not user.active:
            return None
        if password_hasher.check_needs_rehash(user.password_hash):
            user.password_hash = password_hasher.hash(password)
        return user


def _verify(hashed: str, password: str) -> bool:
    try:
        return password_hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


def set_password(store: Store, user: User, password: str) -> None:
    _check_password(password)
    with store.transaction() as session:
        stored = session.get_one(User, user.id)
        stored.password_hash = password_hasher.hash(password)
        # Everyone logged in with the old password is logged out.
        session.execute(delete(LoginSession).where(LoginSession.user_id == user.id))


def get_user(store: Store, user_id: int) -> User | None:
    with store.transaction() as session:
        return session.get(User, user_id)


def list_users(store: Store) -> list[User]:
    with store.transaction() as session:
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
    with store.transaction() as session:
        # Locked (PostgreSQL) so that two tabs accepting at once cannot both use it.
        invite = session.get(Invite, token_hash(token), with_for_update=True)
        if invite is None:
            raise AccountError("unknown invite: the link is wrong or was replaced")
        if invite.used_at is not None:
            raise AccountError("invite already used: log in, or ask an administrator for a new one")
        if invite.expires_at <= store.now():
            raise AccountError("invite expired: ask an administrator for a new one")
        user = _new_user(session, store, invite.email, name, password, invite.is_admin)
        invite.used_at = store.now()
        return user


def start_session(store: Store, user: User) -> tuple[str, str]:
    """A login: (token for the cookie, CSRF token for forms). Lasts `settings.session_days`."""
    cookie_token, csrf_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = store.now()
    with store.transaction() as session:
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
    """The logged-in user and the session's CSRF token; None for an unknown, expired or inactive one."""
    with store.transaction() as session:
        login = session.get(LoginSession, token_hash(cookie_token))
        if login is None:
            return None
        if login.expires_at <= store.now():
            session.delete(login)
            return None
        user = session.get(User, login.user_id)
        if user is None or not user.active:
            return None
        return user, login.csrf_token


def end_session(store: Store, cookie_token: str) -> None:
    with store.transaction() as session:
        session.execute(delete(LoginSession).where(LoginSession.id == token_hash(cookie_token)))


def purge_expired_sessions(store: Store) -> int:
    """Delete expired logins (expired ones are refused anyway); returns how many."""
    with store.transaction() as session:
        query = delete(LoginSession).where(LoginSession.expires_at <= store.now())
        # Session.execute is typed to return a Result; a DELETE's is a CursorResult, which has rowcount.
        return cast(CursorResult[Any], session.execute(query)).rowcount


def create_api_token(store: Store, user: User, name: str) -> tuple[ApiToken, str]:
    """A token for scripts (`Authorization: Bearer …`): its record, and the token itself, which is
    returned only now (only its hash is kept). `name` says what uses it, so it can be revoked."""
    name = name.strip()
    if not name:
        raise AccountError("an API token needs a name: what will use it?")
    raw = API_TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.transaction() as session:
        token = ApiToken(user_id=user.id, name=name, token_hash=token_hash(raw), created_at=store.now())
        session.add(token)
        session.flush()  # its id, for the caller to show and revoke by
    return token, raw


def token_user(store: Store, raw: str) -> User | None:
    """The active user an API token belongs to, else None; records when the token was last used."""
    with store.transaction() as session:
        token = session.scalar(select(ApiToken).where(ApiToken.token_hash == token_hash(raw)))
        if token is None:
            return None
        user = session.get(User, token.user_id)
        if user is None or not user.active:
            return None
        token.last_used_at = store.now()
        return user


def api_tokens_of(store: Store, user: User) -> list[ApiToken]:
    with store.transaction() as session:
        query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id)
        return list(session.scalars(query))


def revoke_api_token(store: Store, user: User, token_id: int) -> bool:
    """Delete one of the user's own tokens; False when they have no such token."""
    with store.transaction() as session:
        query = delete(ApiToken).where(ApiToken.id == token_id, ApiToken.user_id == user.id)
        return cast(CursorResult[Any], session.execute(query)).rowcount > 0  # as in purge_expired_sessions
