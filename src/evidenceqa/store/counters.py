"""Where the web app's guards keep their counters (rate limits, failed logins): in this process, in the
database, or in Redis. One worker needs nothing shared; several worker processes, or several servers,
must see the same counts, or each one multiplies the allowance.

A counter is a small JSON state under a key. The guards own what the state means (evidenceqa.web.guards);
a store only reads it and changes it atomically: `update` runs the guard's pure `change` on the current
state (None when there is none, or it has expired) and keeps what it returns for `keep_s` seconds.
Times are the caller's: `now` is passed in, so a test can move the clock for every store alike.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from evidenceqa.registry import MissingExtra
from evidenceqa.store.db import Store
from evidenceqa.store.models import GuardCounter
from evidenceqa.store.options import CounterKind

R = TypeVar("R")
MAX_KEYS = 10_000  # in memory: beyond this many keys the expired, then the oldest, go (a spray of fresh keys)
PURGE_EVERY_S = 60.0  # the database deletes expired counters at most this often (per process)


class Changed(NamedTuple, Generic[R]):
    """What a change makes of a state: the new one (None: delete it), how long to keep it, and what
    `update` returns."""

    state: Any
    keep_s: float
    result: R


Change = Callable[[Any], Changed[R]]


class Counters(Protocol):
    name: str

    def get(self, key: str, now: float) -> Any:
        """The state under `key`, or None (none, or expired)."""
        ...

    def update(self, key: str, now: float, change: Change[R]) -> R:
        """Replace the state by `change(state)` atomically (no other update of the key in between);
        `change` must be pure: a store may run it again when another worker got there first."""
        ...


class MemoryCounters:
    """Counters in this process: for one worker."""

    name = "memory"

    def __init__(self, max_keys: int = MAX_KEYS) -> None:
        self._states: OrderedDict[str, tuple[Any, float]] = OrderedDict()  # key → (state, expires at)
        self._max_keys = max_keys
        self._lock = threading.Lock()

    def get(self, key: str, now: float) -> Any:
        with self._lock:
            found = self._states.get(key)
            return found[0] if found and found[1] > now else None

    def update(self, key: str, now: float, change: Change[R]) -> R:
        with self._lock:
            found = self._states.pop(key, None)
            changed = change(found[0] if found and found[1] > now else None)
            if changed.state is not None:
                self._states[key] = (changed.state, now + changed.keep_s)  # newest last
                self._prune(now)
            return changed.result

    def _prune(self, now: float) -> None:
        if len(self._states) <= self._max_keys:
            return
        for key in [k for k, (_, expires) in self._states.items() if expires <= now]:
            del self._states[key]
        while len(self._states) > self._max_keys:
            self._states.popitem(last=False)


class DatabaseCounters:
    """Counters in the app's database, shared by every process that uses it. An update is one short
    write transaction: SQLite's write lock serialises it, PostgreSQL locks the key's row."""

    name = "database"

    def __init__(self, store: Store) -> None:
        self.store = store
        self._purged_at = float("-inf")

    def get(self, key: str, now: float) -> Any:
        with self.store.read() as session:
            row = session.get(GuardCounter, key)
            return row.state if row is not None and row.expires_at > now else None

    def update(self, key: str, now: float, change: Change[R]) -> R:
        try:
            return self._update(key, now, change)
        except IntegrityError:  # another worker made the key's row first: now there is one to lock
            return self._update(key, now, change)

    def _update(self, key: str, now: float, change: Change[R]) -> R:
        with self.store.transaction() as session:
            query = select(GuardCounter).where(GuardCounter.key == key).with_for_update()
            row = session.execute(query).scalar_one_or_none()
            changed = change(row.state if row is not None and row.expires_at > now else None)
            if changed.state is None:
                if row is not None:
                    session.delete(row)
            elif row is None:
                session.add(GuardCounter(key=key, state=changed.state, expires_at=now + changed.keep_s))
            else:
                row.state, row.expires_at = changed.state, now + changed.keep_s
            if now - self._purged_at >= PURGE_EVERY_S:
                session.execute(delete(GuardCounter).where(GuardCounter.expires_at <= now))
                self._purged_at = now
            return changed.result


def open_counters(kind: CounterKind, store: Store, redis_url: str | None = None) -> Counters:
    """Counters of `kind`: in this process, in `store`'s database, or in Redis at `redis_url`."""
    if kind == "memory":
        return MemoryCounters()
    if kind == "database":
        return DatabaseCounters(store)
    if redis_url is None:
        raise ValueError("Redis counters need a redis_url")
    try:
        from evidenceqa.store.redis_counters import RedisCounters
    except ModuleNotFoundError as exc:
        raise MissingExtra("the Redis guard counters (setting redis_url)", "redis", exc.name) from None
    return RedisCounters(redis_url)
