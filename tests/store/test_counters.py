"""The guards' counter stores, one contract for all: in memory, in the database (SQLite and a real
PostgreSQL) and in a real Redis. The shared ones are also checked from a second instance, as a second
worker process would see them, and under concurrent updates that must not lose a count."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy import func, select

from evidenceqa.settings import Settings
from evidenceqa.store import open_store
from evidenceqa.store.counters import Changed, Counters, DatabaseCounters, MemoryCounters, open_counters
from evidenceqa.store.models import GuardCounter
from evidenceqa.store.redis_counters import KEY_PREFIX, RedisCounters
from tests.store.postgres import PostgresServer
from tests.store.redis_server import RedisServer

NOW = 1_000_000.0
Opener = Callable[[], Counters]  # another instance on the same storage: another worker's view


def add(amount: int, keep_s: float = 60.0) -> Callable[[Any], Changed[int]]:
    """A change that adds `amount` to a count and returns the new count."""

    def change(state: Any) -> Changed[int]:
        count = (state or {"n": 0})["n"] + amount
        return Changed({"n": count}, keep_s, count)

    return change


def drop(state: Any) -> Changed[None]:
    return Changed(None, 0.0, None)


@pytest.fixture(params=["memory", "sqlite", "postgresql", "redis"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Makes counter stores of one kind that share their storage (memory: one and the same)."""
    kind = request.param
    if kind == "memory":
        memory = MemoryCounters()
        yield lambda: memory
    elif kind == "redis":
        url = request.getfixturevalue("redis_url")
        yield lambda: RedisCounters(url)
    else:
        url = None
        if kind == "postgresql":
            server: PostgresServer = request.getfixturevalue("postgres")
            url = server.create_database()
        settings = Settings(home=tmp_path / "home", database_url=url)
        stores = []

        def database() -> Counters:
            stores.append(open_store(settings))
            return DatabaseCounters(stores[-1])

        yield database
        for store in stores:
            store.close()


def test_an_update_sees_the_last_state_and_returns_the_change_s_result(opener: Opener) -> None:
    counters = opener()
    assert counters.get("k", NOW) is None
    assert counters.update("k", NOW, add(2)) == 2
    assert counters.update("k", NOW + 1, add(3)) == 5
    assert counters.get("k", NOW + 2) == {"n": 5}
    assert counters.get("other", NOW + 2) is None  # keys are apart


def test_a_state_expires_after_its_keep_time_and_none_deletes_it(opener: Opener) -> None:
    counters = opener()
    counters.update("short", NOW, add(1, keep_s=10))
    counters.update("long", NOW, add(1, keep_s=3600))
    if counters.name == "redis":  # Redis expires by its own clock: check the expiry it was given
        ttl = redis.Redis.from_url(counters._link.where).pttl(KEY_PREFIX + "short")  # type: ignore[attr-defined]
        assert 9_000 < ttl <= 10_000
    else:
        assert counters.get("short", NOW + 9) == {"n": 1}
        assert counters.get("short", NOW + 10) is None
        assert counters.update("short", NOW + 11, add(1)) == 1  # an expired state starts again
    counters.update("long", NOW + 20, drop)
    assert counters.get("long", NOW + 20) is None


def test_a_second_instance_sees_the_same_counts(opener: Opener) -> None:
    first, second = opener(), opener()
    first.update("k", NOW, add(1))
    assert second.update("k", NOW, add(1)) == 2
    assert first.get("k", NOW) == {"n": 2}


def test_concurrent_updates_from_two_instances_lose_no_count(opener: Opener) -> None:
    # Two "workers", four threads each, 25 increments per thread: 200, exactly, or a count was lost.
    instances = [opener(), opener()]

    def hammer(n: int) -> None:
        for _ in range(25):
            instances[n % 2].update("k", NOW, add(1))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(hammer, range(8)))
    assert instances[0].get("k", NOW) == {"n": 200}


def test_the_database_purges_expired_counters(tmp_path: Path) -> None:
    with open_store(Settings(home=tmp_path / "home")) as store:
        counters = DatabaseCounters(store)
        for key in ("a", "b", "c"):
            counters.update(key, NOW, add(1, keep_s=10))
        counters.update("d", NOW + 100, add(1))  # a minute and more later: a purge of what has expired
        with store.read() as session:
            assert session.scalars(select(GuardCounter.key)).all() == ["d"]
            assert session.scalar(select(func.count()).select_from(GuardCounter)) == 1


def test_memory_keeps_a_bounded_number_of_keys_dropping_the_oldest() -> None:
    counters = MemoryCounters(max_keys=3)
    for n, key in enumerate("abcd"):
        counters.update(key, NOW + n, add(1))
    assert [counters.get(key, NOW + 4) for key in "abcd"] == [None, {"n": 1}, {"n": 1}, {"n": 1}]


def test_redis_keeps_json_under_its_prefix_only(redis_url: str) -> None:
    RedisCounters(redis_url).update("k", NOW, add(7))
    client = redis.Redis.from_url(redis_url)
    assert client.keys("*") == [(KEY_PREFIX + "k").encode()]
    assert json.loads(client.get(KEY_PREFIX + "k") or b"") == {"n": 7}


def test_a_redis_outage_counts_in_this_process_and_redis_takes_over_again(
    own_redis_server: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [0.0]
    counters = RedisCounters(own_redis_server.url, retry_interval_s=5, clock=lambda: clock[0])
    assert counters.update("k", NOW, add(1)) == 1
    own_redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="evidenceqa.store.redis_counters"):
        assert counters.update("k", NOW, add(1)) == 1  # in this process: limits still hold, per worker
        assert counters.update("k", NOW, add(1)) == 2
        assert counters.get("k", NOW) == {"n": 2}
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "counting rate limits and failed logins in each worker" in warnings[0]
    own_redis_server.start()  # empty: nothing was saved
    clock[0] += 5
    assert counters.update("k", NOW, add(1)) == 1  # Redis again
    assert counters.get("k", NOW) == {"n": 1}


def test_open_counters_opens_the_kind_named(tmp_path: Path, redis_url: str) -> None:
    with open_store(Settings(home=tmp_path / "home")) as store:
        assert open_counters("memory", store).name == "memory"
        assert open_counters("database", store).name == "database"
        assert open_counters("redis", store, redis_url).name == "redis"
        with pytest.raises(ValueError, match="Redis counters need a redis_url"):
            open_counters("redis", store)
