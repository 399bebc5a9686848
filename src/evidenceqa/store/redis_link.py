"""A Redis connection that survives outages (the `redis` extra), shared by the answer cache and the
web app's guard counters: both must keep the app answering while Redis is down.

Any Redis error marks the server down: calls take their fallback at once, without touching the
network, until `retry_interval_s` has passed; then the next call tries again. So an outage costs one
short socket timeout every few seconds rather than one per request, and one warning, not one per call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

T = TypeVar("T")


def without_credentials(url: str) -> str:
    """The URL as it may appear in logs: no user name or password."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


class RedisLink:
    """`call(operation, fallback)` runs `operation(client)`, or returns `fallback` while Redis is down.
    `log` gets the outage's warning and the recovery's notice, saying `meanwhile` (what the caller
    does instead) and `recovered` (what works again)."""

    def __init__(
        self,
        url: str,
        log: logging.Logger,
        meanwhile: str,
        recovered: str,
        timeout_s: float = 0.25,
        retry_interval_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # No client-side retries, whatever this redis-py version's default (Redis() retries ten times
        # with backoff): the retry interval below decides when to try a failed server again.
        self.client = redis.Redis.from_url(
            url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        self.where = without_credentials(url)
        self._log, self._meanwhile, self._recovered = log, meanwhile, recovered
        self._retry_interval_s = retry_interval_s
        self._clock = clock
        self._down_until: float | None = None  # None while Redis answers
        self._lock = threading.Lock()

    def call(self, operation: Callable[[redis.Redis], T], fallback: Callable[[], T]) -> T:
        if not self._should_try():
            return fallback()
        try:
            result = operation(self.client)
        except redis.RedisError as error:
            self._mark_down(error)
            return fallback()
        self._mark_up()
        return result

    def _should_try(self) -> bool:
        with self._lock:
            return self._down_until is None or self._clock() >= self._down_until

    def _mark_down(self, error: redis.RedisError) -> None:
        with self._lock:
            new_outage = self._down_until is None
            self._down_until = self._clock() + self._retry_interval_s
        if new_outage:
            self._log.warning(
                "Redis at %s is unavailable (%s); %s, retrying every %g s",
                self.where, error, self._meanwhile, self._retry_interval_s,
            )  # fmt: skip

    def _mark_up(self) -> None:
        with self._lock:
            recovered = self._down_until is not None
            self._down_until = None
        if recovered:
            self._log.info("Redis at %s is back; %s", self.where, self._recovered)
