"""The guards' counters in Redis (the `redis` extra): shared by every worker and every server that
points at it, as the answer cache is.

While Redis is down the counters are kept in this process instead (one warning; `RedisLink`), so
limits and lockouts still hold, per worker, rather than every request failing or none being limited.
Counts made during the outage stay in the process; Redis starts again from what it held.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import redis

from evidenceqa.store.counters import Change, MemoryCounters, R
from evidenceqa.store.redis_link import RedisLink

log = logging.getLogger(__name__)
KEY_PREFIX = "evidenceqa:guard:"


class RedisCounters:
    name = "redis"

    def __init__(self, url: str, prefix: str = KEY_PREFIX, **link: Any) -> None:
        self._link = RedisLink(url, log, "counting rate limits and failed logins in each worker",
                               "rate limits and failed logins are shared again", **link)  # fmt: skip
        self._prefix = prefix
        self._local = MemoryCounters()  # during an outage

    def get(self, key: str, now: float) -> Any:
        found = self._link.call(lambda client: [client.get(self._prefix + key)], lambda: None)
        if found is None:  # Redis is down
            return self._local.get(key, now)
        return None if found[0] is None else json.loads(found[0])

    def update(self, key: str, now: float, change: Change[R]) -> R:
        return self._link.call(lambda client: self._optimistic(client, key, change),
                               lambda: self._local.update(key, now, change))  # fmt: skip

    def _optimistic(self, client: redis.Redis, key: str, change: Change[R]) -> R:
        # WATCH → read → MULTI … EXEC: when another worker writes the key in between, EXEC fails and
        # the change runs again on the value it wrote.
        name = self._prefix + key
        with client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(name)
                    payload = pipe.get(name)
                    changed = change(None if payload is None else json.loads(payload))
                    pipe.multi()
                    if changed.state is None:
                        pipe.delete(name)
                    else:
                        pipe.set(name, json.dumps(changed.state), px=max(1, math.ceil(changed.keep_s * 1000)))
                    pipe.execute()
                    return changed.result
                except redis.WatchError:
                    continue
