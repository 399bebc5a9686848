"""The answer cache in Redis (the `redis` extra): one cache for every worker that points at the server.

An outage makes it a no-op cache that logs one warning and recovers by itself when Redis comes back.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import redis

from evidenceqa.answer.cache import KEY_PREFIX, Clock, check_ttl
from evidenceqa.store.redis_link import RedisLink

log = logging.getLogger(__name__)


class RedisCache:
    """Answers in Redis as JSON under `prefix`, shared by every worker that points at the same server.

    While Redis is down (`RedisLink`: one short timeout every `retry_interval_s`) every get is a miss
    and every set does nothing.
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
        self._link = RedisLink(url, log, "answering without the cache", "answers are cached again",
                               timeout_s, retry_interval_s, clock)  # fmt: skip
        self._prefix = prefix

    def get(self, key: str) -> dict[str, Any] | None:
        payload = self._link.call(lambda client: client.get(self._prefix + key), lambda: None)
        return None if payload is None else json.loads(payload)

    def set(self, key: str, value: dict[str, Any], ttl_s: int | None = None) -> None:
        check_ttl(ttl_s)
        name, payload = self._prefix + key, json.dumps(value)
        # SET … EX is SETEX in one command (redis-py deprecates its setex); ex=None sets no expiry.
        self._link.call(lambda client: client.set(name, payload, ex=ttl_s), lambda: None)

    def clear(self) -> None:
        self._link.call(self._delete_ours, lambda: None)

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
