"""The answer cache in Redis (the `redis` extra): one cache for every worker that points at the server.

An outage makes it a no-op cache that logs one warning and recovers by itself when Redis comes back.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from evidenceqa.answer.cache import KEY_PREFIX, Clock, check_ttl

log = logging.getLogger(__name__)

T = TypeVar("T")


def _without_credentials(url: str) -> str:
    """The URL as it may appear in logs: no user name or password."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


class RedisCache:
    """Answers in Redis as JSON under `prefix`, shared by every worker that points at the same server.

    Any Redis error marks the server down: calls return at once without touching the network until
    `retry_interval_s` has passed, then the next call tries again. So an outage costs one short socket
    timeout every few seconds rather than one per question.
    """

    name = "redis"

    def __init__(
        self,
        url: str,
        prefix: str = KEY_PREFIX,
        timeout_s: float = 0.25,
        retry_interval_s: float = 5.0,
        clock: Clock = time.monotonic,
    ) -> None:
        # No client-side retries, whatever this redis-py version's default (Redis() retries ten times
        # with backoff): the retry interval below decides when to try a failed server again.
        self._client = redis.Redis.from_url(
            url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        self._where = _without_credentials(url)
        self._prefix = prefix
        self._retry_interval_s = retry_interval_s
        self._clock = clock
        self._down_until: float | None = None  # None while Redis answers
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        payload = self._call(lambda client: client.get(self._prefix + key), None)
        return None if payload is None else json.loads(payload)

    def set(self, key: str, value: dict[str, Any], ttl_s: int | None = None) -> None:
        check_ttl(ttl_s)
        name, payload = self._prefix + key, json.dumps(value)
        # SET … EX is SETEX in one command (redis-py deprecates its setex); ex=None sets no expiry.
        self._call(lambda client: client.set(name, payload, ex=ttl_s), None)

    def clear(self) -> None:
        self._call(self._delete_ours, None)

    def _delete_ours(self, client: redis.Redis) -> None:
        # SCAN rather than KEYS or FLUSHDB: the server may hold other applications' data and must not
        # block while we look.
        batch: list[bytes] = []
        for name in client.scan_iter(match=self._prefix + "*", count=500):
            batch.append(name)
            if len(batch) == 500:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)

    def _call(self, operation: Callable[[redis.Redis], T], fallback: T) -> T:
        if not self._should_try():
            return fallback
        try:
            result = operation(self._client)
        except redis.RedisError as error:
            self._mark_down(error)
            return fallback
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
            log.warning(
                "Redis at %s is unavailable (%s); answering without the cache, retrying every %g s",
                self._where,
                error,
                self._retry_interval_s,
            )

    def _mark_up(self) -> None:
        with self._lock:
            recovered = self._down_until is not None
            self._down_until = None
        if recovered:
            log.info("Redis at %s is back; answers are cached again", self._where)
