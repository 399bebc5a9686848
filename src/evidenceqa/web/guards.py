"""Guards on what comes in: the question's length, each user's rate of answers and searches, failed logins
(per account and per address), and what the server log may keep (docs/reliability.md).

The counts live where `guard_counters` says (evidenceqa.store.counters): this process for one worker,
the database or Redis when several workers or servers must share them. What a count means is here;
the counters only keep it. Keys are hashed before they are stored: no email or address in the clear.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request, status
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool

from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.store import Store, User
from evidenceqa.store.counters import Changed, Counters, open_counters
from evidenceqa.web.options import AppOptions
from evidenceqa.web.services import Services, services_of

log = logging.getLogger(__name__)
# Seconds since the epoch by default: the same in every worker, which a monotonic clock is not.
Clock = Callable[[], float]
WINDOW_S = 60.0  # the rate limit's window
MAX_LOCKOUT_S = 3600.0  # a lockout doubles up to this
FORGET_AFTER_S = 3600.0  # failed logins older than this (and no lockout running) are forgotten


def counter_key(scope: str, key: object) -> str:
    return f"{scope}:{hashlib.sha256(str(key).encode()).hexdigest()[:40]}"


@dataclass
class RateLimiter:
    """At most `per_minute` events per key in any 60 s. The state: the times of the last minute's events."""

    counters: Counters
    scope: str
    per_minute: int
    clock: Clock = time.time

    def acquire(self, key: object) -> float:
        """0 when the event may happen (and it is counted), else the seconds until it may."""
        if self.per_minute <= 0:
            return 0.0
        now = self.clock()

        def change(state: Any) -> Changed[float]:
            recent = [at for at in state or () if at > now - WINDOW_S]
            if len(recent) >= self.per_minute:
                return Changed(recent, recent[-1] + WINDOW_S - now, recent[0] + WINDOW_S - now)
            return Changed([*recent, now], WINDOW_S, 0.0)

        return self.counters.update(counter_key(self.scope, key), now, change)


@dataclass
class LoginThrottle:
    """After `max_failures` failed logins for one key (an account, or an address), each further attempt waits out
    a lockout: `lockout_s`, doubled with every failure after that, up to an hour. A success clears it.
    The state: [failures, time of the last, end of the lockout]."""

    counters: Counters
    scope: str
    max_failures: int
    lockout_s: float
    clock: Clock = time.time

    def wait(self, key: object) -> float:
        """Seconds left of this key's lockout; 0 when it may try."""
        now = self.clock()
        state = self.counters.get(counter_key(self.scope, key), now)
        return max(0.0, state[2] - now) if state else 0.0

    def failed(self, key: object) -> None:
        now = self.clock()

        def change(state: Any) -> Changed[None]:
            forgotten = not state or (now - state[1] > FORGET_AFTER_S and now >= state[2])
            count, locked_until = (0, 0.0) if forgotten else (state[0], state[2])
            count += 1
            if count >= self.max_failures:
                doublings = count - self.max_failures
                locked_until = now + min(self.lockout_s * 2 ** min(doublings, 32), MAX_LOCKOUT_S)
            return Changed([count, now, locked_until], max(FORGET_AFTER_S, locked_until - now), None)

        self.counters.update(counter_key(self.scope, key), now, change)

    def succeeded(self, key: object) -> None:
        self.counters.update(counter_key(self.scope, key), self.clock(), lambda _: Changed(None, 0.0, None))


@dataclass
class Guards:
    asks: RateLimiter
    searches: RateLimiter
    accounts: LoginThrottle  # failed logins of one account, from anywhere
    addresses: LoginThrottle  # failed logins from one address, to any account

    @classmethod
    def of(cls, settings: AppOptions, counters: Counters, clock: Clock = time.time) -> Guards:
        return cls(
            RateLimiter(counters, "asks", settings.ask_rate_per_minute, clock),
            RateLimiter(counters, "searches", settings.search_rate_per_minute, clock),
            LoginThrottle(counters, "account", settings.login_max_failures, settings.login_lockout_s, clock),
            LoginThrottle(counters, "address", settings.login_max_failures_per_address, settings.login_lockout_s,
                          clock),
        )  # fmt: skip

    @classmethod
    def open(cls, settings: AppOptions, store: Store) -> Guards:
        """The guards on the counters the settings name (`AppOptions.counter_kind`)."""
        return cls.of(settings, open_counters(settings.counter_kind, store, settings.redis_url))


def guards_of(request: Request) -> Guards:
    return app_guards(request.app)


def app_guards(app: Starlette) -> Guards:
    """The app's guards, made on first use from its settings (tests may set `app.state.guards`)."""
    state = app.state
    if getattr(state, "guards", None) is None:
        services: Services = state.services
        state.guards = Guards.open(services.settings, services.store)
    return state.guards


def retry_after(seconds: float) -> dict[str, str]:
    """The Retry-After header: whole seconds, at least one."""
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def checked_question(request: Request, question: str) -> str:
    """The question cleaned (control characters out), or 422 saying why it cannot be asked."""
    try:
        return clean_question(question, services_of(request).settings.max_question_chars)
    except QuestionError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc


async def check_ask_rate(request: Request, user: User) -> None:
    """429 with Retry-After when `user` has had ask_rate_per_minute answers in the last minute."""
    await check_rate(guards_of(request).asks, user, "questions")


async def check_search_rate(request: Request, user: User) -> None:
    """429 with Retry-After when `user` has had search_rate_per_minute searches in the last minute."""
    await check_rate(guards_of(request).searches, user, "searches")


async def check_rate(limiter: RateLimiter, user: User, what: str) -> None:
    """429 with Retry-After when `user` has used this limiter's allowance for the last minute."""
    # In a thread: the counters may be the database, whose write lock can be held for a moment.
    wait = await run_in_threadpool(limiter.acquire, user.id)
    if wait:
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many {what}: at most {limiter.per_minute} a minute; try again in {math.ceil(wait)} s",
            headers=retry_after(wait),
        )


def log_question(request: Request, user: User, question: str) -> None:
    """Questions are personal data: logged only when the deployment says so (log_questions)."""
    if services_of(request).settings.log_questions:
        log.info("question from user %d: %s", user.id, question)


def _address(request: Request) -> str:
    # uvicorn sets the client from X-Forwarded-For only when it comes from a trusted proxy (serve).
    return request.client.host if request.client else ""


def _account(email: str) -> str:
    return email.strip().lower()


async def login_wait(request: Request, email: str) -> float:
    """Seconds before this email may try to log in again, or anyone from this address; 0: it may now."""
    guards = guards_of(request)

    def longest() -> float:
        return max(guards.accounts.wait(_account(email)), guards.addresses.wait(_address(request)))

    return await run_in_threadpool(longest)


async def login_failed(request: Request, email: str) -> None:
    guards = guards_of(request)

    def count() -> None:
        guards.accounts.failed(_account(email))
        guards.addresses.failed(_address(request))

    await run_in_threadpool(count)


async def login_succeeded(request: Request, email: str) -> None:
    # The account's count only: one good password must not wipe an address's spray of wrong ones.
    await run_in_threadpool(guards_of(request).accounts.succeeded, _account(email))


# The access log -------------------------------------------------------------------------------------

_LINK_TOKEN = re.compile(r"^(/(?:invite|reset)/)[^/?]+")  # links whose token is the credential


class AccessLogRedaction(logging.Filter):
    """uvicorn's access log line without secrets or questions: an invitation or reset link's token is
    masked always, and query strings (a search's `q` is a question) unless log_questions is set."""

    def __init__(self, keep_queries: bool) -> None:
        super().__init__()
        self.keep_queries = keep_queries

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        # uvicorn's args: (client address, method, path with query, HTTP version, status code)
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            path, _, query = args[2].partition("?")
            path = _LINK_TOKEN.sub(r"\1***", path)
            shown = f"{path}?{query}" if query and self.keep_queries else path
            record.args = (args[0], args[1], shown, *args[3:])
        return True


def redact_access_log(settings: AppOptions) -> None:
    """Put the redaction on uvicorn's access logger (once; the setting of the latest app wins)."""
    logger = logging.getLogger("uvicorn.access")
    for old in [f for f in logger.filters if isinstance(f, AccessLogRedaction)]:
        logger.removeFilter(old)
    logger.addFilter(AccessLogRedaction(settings.log_questions))
