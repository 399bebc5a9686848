"""Guards on what comes in: the question's length, each user's rate of answers and searches, failed logins
(per account and per address), and what the server log may keep (docs/reliability.md).

The counters live in this process (one uvicorn worker): a deployment with several workers multiplies
the allowance by their number. They are touched only from the event loop, so they need no lock.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import HTTPException, Request, status

from evidenceqa.config import Settings
from evidenceqa.retrieval.question import QuestionError, clean_question
from evidenceqa.store import User
from evidenceqa.web.services import services_of

log = logging.getLogger(__name__)
Clock = Callable[[], float]
WINDOW_S = 60.0  # the rate limit's window
MAX_LOCKOUT_S = 3600.0  # a lockout doubles up to this
FORGET_AFTER_S = 3600.0  # failed logins older than this (and no lockout running) are forgotten
MAX_KEYS = 10_000  # beyond this many tracked logins the stale ones go: memory stays bounded under a spray


class RateLimiter:
    """At most `per_minute` events per key in any 60 s (a sliding log of their times)."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._events: dict[object, deque[float]] = {}

    def acquire(self, key: object) -> float:
        """0 when the event may happen (and it is counted), else the seconds until it may."""
        if self.per_minute <= 0:
            return 0.0
        now = self.clock()
        events = self._events.setdefault(key, deque())
        while events and events[0] <= now - WINDOW_S:
            events.popleft()
        if len(events) >= self.per_minute:
            return events[0] + WINDOW_S - now
        events.append(now)
        return 0.0


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    locked_until: float = 0.0


@dataclass
class LoginThrottle:
    """After `max_failures` failed logins for one key (an account, or an address), each further attempt waits out
    a lockout: `lockout_s`, doubled with every failure after that, up to an hour. A success clears it."""

    max_failures: int
    lockout_s: float
    clock: Clock = time.monotonic
    _failures: dict[object, _Failures] = field(default_factory=dict)

    def wait(self, key: object) -> float:
        """Seconds left of this key's lockout; 0 when it may try."""
        found = self._failures.get(key)
        return max(0.0, found.locked_until - self.clock()) if found else 0.0

    def failed(self, key: object) -> None:
        now = self.clock()
        found = self._failures.get(key)
        if found is None or (now - found.last > FORGET_AFTER_S and now >= found.locked_until):
            found = self._failures[key] = _Failures()
            self._prune(now)
        found.count, found.last = found.count + 1, now
        if found.count >= self.max_failures:
            doublings = found.count - self.max_failures
            found.locked_until = now + min(self.lockout_s * 2 ** min(doublings, 32), MAX_LOCKOUT_S)

    def succeeded(self, key: object) -> None:
        self._failures.pop(key, None)

    def _prune(self, now: float) -> None:
        if len(self._failures) <= MAX_KEYS:
            return
        for key, found in list(self._failures.items()):
            if now - found.last > FORGET_AFTER_S and now >= found.locked_until:
                del self._failures[key]
        while len(self._failures) > MAX_KEYS:  # a spray of fresh keys: the oldest go first
            del self._failures[next(iter(self._failures))]


@dataclass
class Guards:
    asks: RateLimiter
    searches: RateLimiter
    accounts: LoginThrottle  # failed logins of one account, from anywhere
    addresses: LoginThrottle  # failed logins from one address, to any account

    @classmethod
    def of(cls, settings: Settings, clock: Clock = time.monotonic) -> Guards:
        return cls(
            RateLimiter(settings.ask_rate_per_minute, clock),
            RateLimiter(settings.search_rate_per_minute, clock),
            LoginThrottle(settings.login_max_failures, settings.login_lockout_s, clock),
            LoginThrottle(settings.login_max_failures_per_address, settings.login_lockout_s, clock),
        )


def guards_of(request: Request) -> Guards:
    """The app's guards, made on first use from its settings (tests may set `app.state.guards`)."""
    state = request.app.state
    if getattr(state, "guards", None) is None:
        state.guards = Guards.of(services_of(request).settings)
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


def check_ask_rate(request: Request, user: User) -> None:
    """429 with Retry-After when `user` has had ask_rate_per_minute answers in the last minute."""
    _check_rate(guards_of(request).asks, user, "questions")


def check_search_rate(request: Request, user: User) -> None:
    """429 with Retry-After when `user` has had search_rate_per_minute searches in the last minute."""
    _check_rate(guards_of(request).searches, user, "searches")


def _check_rate(limiter: RateLimiter, user: User, what: str) -> None:
    wait = limiter.acquire(user.id)
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


def login_wait(request: Request, email: str) -> float:
    """Seconds before this email may try to log in again, or anyone from this address; 0: it may now."""
    guards = guards_of(request)
    return max(guards.accounts.wait(email.strip().lower()), guards.addresses.wait(_address(request)))


def login_failed(request: Request, email: str) -> None:
    guards = guards_of(request)
    guards.accounts.failed(email.strip().lower())
    guards.addresses.failed(_address(request))


def login_succeeded(request: Request, email: str) -> None:
    # The account's count only: one good password must not wipe an address's spray of wrong ones.
    guards_of(request).accounts.succeeded(email.strip().lower())


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


def redact_access_log(settings: Settings) -> None:
    """Put the redaction on uvicorn's access logger (once; the setting of the latest app wins)."""
    logger = logging.getLogger("uvicorn.access")
    for old in [f for f in logger.filters if isinstance(f, AccessLogRedaction)]:
        logger.removeFilter(old)
    logger.addFilter(AccessLogRedaction(settings.log_questions))
