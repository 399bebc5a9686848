"""The answer cache against a real Redis server (Debian's redis-server, started per module)."""

from __future__ import annotations

import logging
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis

from evidenceqa.answer import findings
from evidenceqa.answer.cache import (
    KEY_PREFIX,
    MemoryCache,
    cache_key,
    open_cache,
    settings_fingerprint,
)
from evidenceqa.answer.redis_cache import RedisCache
from evidenceqa.index.base import Filters
from evidenceqa.settings import Settings, load_settings
from tests.store.redis_server import free_port

ANSWER = {"answer": "Yes, at 0.05 % [1].", "citations": [{"n": 1, "doc_id": "d1"}], "abstained": False}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# Keys


@pytest.mark.parametrize(
    "spelling",
    [
        "can chg be used on mucous membranes",
        "Can CHG be used on mucous membranes ?",
        "  can  CHG be used\ton mucous membranes?!",
        "CAN CHG BE USED ON MUCOUS MEMBRANES.",
    ],
)
def test_spellings_of_one_question_share_a_key(spelling):
    reference = cache_key("can chg be used on mucous membranes", {}, 3, "fp")
    assert cache_key(spelling, {}, 3, "fp") == reference


def test_key_is_a_sha256_hex_digest():
    key = cache_key("q", {}, 1, "fp")
    assert re.fullmatch(r"[0-9a-f]{64}", key)


def test_key_changes_with_question_filters_index_version_and_settings():
    filters = Filters(year_min=2010).describe()
    base = cache_key("Is CHG safe?", filters, 3, "fp")
    assert cache_key("Is CHG unsafe?", filters, 3, "fp") != base
    assert cache_key("Is CHG safe?", {}, 3, "fp") != base
    assert cache_key("Is CHG safe?", Filters(year_min=2011).describe(), 3, "fp") != base
    assert cache_key("Is CHG safe?", filters, 4, "fp") != base
    assert cache_key("Is CHG safe?", filters, 3, "other") != base
    assert cache_key("Is CHG safe?", filters, 3, "fp", k=3) != cache_key(
        "Is CHG safe?", filters, 3, "fp", k=10
    )
    assert cache_key("Is CHG safe?", filters, 3, "fp", calibration="a") != base
    assert cache_key("Is CHG safe?", filters, 3, "fp", fusion_model="a") != base
    assert cache_key("Is CHG safe?", filters, 3, "fp", shorthand="a") != base


def test_filter_key_order_does_not_matter():
    forward = {"year_min": 2010, "collections": ["cochrane"]}
    backward = {"collections": ["cochrane"], "year_min": 2010}
    assert cache_key("q", forward, 1, "fp") == cache_key("q", backward, 1, "fp")


def test_fingerprint_follows_answer_settings_only():
    base = settings_fingerprint(Settings())
    assert settings_fingerprint(Settings()) == base
    assert settings_fingerprint(Settings(search_k=20)) == base  # `search` only: no answer uses it
    assert settings_fingerprint(Settings(evidence_k=3)) != base
    assert settings_fingerprint(Settings(llm_max_tokens=50)) != base
    assert settings_fingerprint(Settings(llm_api_base="http://localhost:8080/v1")) != base
    assert settings_fingerprint(Settings(alpha="rules")) != base
    assert settings_fingerprint(Settings(chunk_strategy="section")) != base
    assert settings_fingerprint(Settings(home=Path("/elsewhere"), cache_max_entries=5)) == base


def test_fingerprint_changes_with_the_llm_rules(monkeypatch):
    base = settings_fingerprint(Settings())
    monkeypatch.setattr("evidenceqa.answer.prompt.SYSTEM_PROMPT", "You answer questions. New rule.")
    assert settings_fingerprint(Settings()) != base


@pytest.mark.parametrize("rules", ["EXTRACTIVE_RULES", "ABSTENTION_RULES", "CONTEXT_RULES"])
def test_fingerprint_changes_with_the_rules_an_answer_is_written_by(monkeypatch, rules):
    base = settings_fingerprint(Settings())
    monkeypatch.setattr(f"evidenceqa.answer.cache.{rules}", (findings,))
    assert settings_fingerprint(Settings()) != base


def test_fingerprint_includes_generator_settings_once_they_exist():
    class WithGenerator(Settings):
        generator: str = "llm"
        llm_model: str = "model-a"

    assert settings_fingerprint(WithGenerator()) != settings_fingerprint(WithGenerator(llm_model="model-b"))
    assert settings_fingerprint(WithGenerator()) != settings_fingerprint(
        WithGenerator(generator="extractive")
    )


# MemoryCache


def test_memory_round_trip_returns_a_copy():
    cache = MemoryCache(4)
    assert cache.get("k") is None
    cache.set("k", ANSWER)
    first = cache.get("k")
    assert first == ANSWER
    first["answer"] = "changed by a caller"
    assert cache.get("k") == ANSWER


def test_memory_evicts_the_least_recently_used():
    cache = MemoryCache(2)
    cache.set("a", {"v": "a"})
    cache.set("b", {"v": "b"})
    assert cache.get("a") == {"v": "a"}  # a is now more recent than b
    cache.set("c", {"v": "c"})
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ({"v": "a"}, None, {"v": "c"})
    assert len(cache) == 2


def test_memory_entries_expire_after_their_ttl():
    clock = FakeClock()
    cache = MemoryCache(4, clock=clock)
    cache.set("short", ANSWER, ttl_s=10)
    cache.set("forever", ANSWER)
    clock.now += 9.5
    assert cache.get("short") == ANSWER
    clock.now += 0.5
    assert cache.get("short") is None
    clock.now += 10**9
    assert cache.get("forever") == ANSWER


def test_memory_clear_empties_it():
    cache = MemoryCache(4)
    cache.set("a", ANSWER)
    cache.clear()
    assert cache.get("a") is None and len(cache) == 0


@pytest.mark.parametrize("cache_type", ["memory", "redis"])
def test_a_ttl_must_be_positive(cache_type, request):
    cache = MemoryCache(4) if cache_type == "memory" else RedisCache(request.getfixturevalue("redis_url"))
    with pytest.raises(ValueError, match="ttl_s"):
        cache.set("k", ANSWER, ttl_s=0)


def test_memory_cache_is_thread_safe():
    cache = MemoryCache(50)

    def hammer(worker: int) -> None:
        for i in range(2000):
            key = f"k{(worker * 7 + i) % 200}"
            if i % 3:
                value = cache.get(key)
                assert value is None or value == {"key": key}
            else:
                cache.set(key, {"key": key})

    with ThreadPoolExecutor(max_workers=16) as pool:
        for future in [pool.submit(hammer, worker) for worker in range(16)]:
            future.result()  # re-raises any error from the worker
    assert 0 < len(cache) <= 50


# RedisCache


def test_redis_round_trip_as_json_under_the_prefix(redis_url):
    cache = RedisCache(redis_url)
    assert cache.get("k") is None
    cache.set("k", ANSWER)
    assert cache.get("k") == ANSWER
    raw = redis.Redis.from_url(redis_url)
    assert raw.get(KEY_PREFIX + "k") is not None
    assert raw.ttl(KEY_PREFIX + "k") == -1  # no TTL asked for: none set


def test_redis_sets_the_ttl(redis_url):
    RedisCache(redis_url).set("k", ANSWER, ttl_s=3600)
    assert 3590 <= redis.Redis.from_url(redis_url).ttl(KEY_PREFIX + "k") <= 3600


def test_redis_clear_removes_only_our_prefix(redis_url):
    raw = redis.Redis.from_url(redis_url)
    raw.set("someone-else:key", "keep")
    neighbour = RedisCache(redis_url, prefix="evidenceqa:other:")
    neighbour.set("k", ANSWER)
    cache = RedisCache(redis_url)
    with raw.pipeline() as pipe:  # more keys than one delete batch
        for i in range(1234):
            pipe.set(f"{KEY_PREFIX}{i}", "{}")
        pipe.execute()
    cache.clear()
    assert list(raw.scan_iter(match=KEY_PREFIX + "*")) == []
    assert raw.get("someone-else:key") == b"keep"
    assert neighbour.get("k") == ANSWER


def test_redis_outage_degrades_to_no_cache_and_recovers(own_redis_server, caplog):
    clock = FakeClock()
    cache = RedisCache(own_redis_server.url, retry_interval_s=5, clock=clock)
    cache.set("k", ANSWER)
    assert cache.get("k") == ANSWER

    own_redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="evidenceqa.answer.redis_cache"):
        assert cache.get("k") is None
        cache.set("k", ANSWER, ttl_s=60)
        cache.clear()
        clock.now += 5  # the retry interval passes; the server is still down: a retry, no new warning
        assert cache.get("k") is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "unavailable" in warnings[0].getMessage()

    own_redis_server.start()  # same port, empty (nothing is saved)
    assert cache.get("k") is None  # still inside the retry interval: Redis is not asked
    cache.set("k", ANSWER)
    assert redis.Redis.from_url(own_redis_server.url).get(KEY_PREFIX + "k") is None
    clock.now += 5
    with caplog.at_level(logging.INFO, logger="evidenceqa.answer.redis_cache"):
        cache.set("k", ANSWER)
    assert cache.get("k") == ANSWER
    assert "is back" in caplog.records[-1].getMessage()

    caplog.clear()
    own_redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="evidenceqa.answer.redis_cache"):
        assert cache.get("k") is None
    assert len(caplog.records) == 1  # a new outage, a new warning


def test_redis_down_from_the_start_is_a_miss_not_an_error(caplog):
    cache = RedisCache(f"redis://user:secret@127.0.0.1:{free_port()}/0")
    with caplog.at_level(logging.WARNING, logger="evidenceqa.answer.redis_cache"):
        assert cache.get("k") is None
        cache.set("k", ANSWER)
        cache.clear()
    assert len(caplog.records) == 1
    assert "secret" not in caplog.text


# open_cache


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ["EVIDENCEQA_REDIS_URL", "EVIDENCEQA_CACHE_MAX_ENTRIES", "EVIDENCEQA_CONFIG"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no evidenceqa.toml


def test_open_cache_is_memory_without_a_redis_url(clean_env, monkeypatch):
    monkeypatch.setenv("EVIDENCEQA_CACHE_MAX_ENTRIES", "3")
    cache = open_cache(load_settings())
    assert isinstance(cache, MemoryCache) and cache.name == "memory"
    for key in "abcd":
        cache.set(key, ANSWER)
    assert len(cache) == 3


def test_open_cache_is_redis_with_a_url(clean_env, redis_url):
    cache = open_cache(Settings(redis_url=redis_url))
    assert isinstance(cache, RedisCache) and cache.name == "redis"


def test_open_cache_reads_the_redis_url_from_the_environment(clean_env, monkeypatch, redis_url):
    monkeypatch.setenv("EVIDENCEQA_REDIS_URL", redis_url)
    cache = open_cache(load_settings())
    assert isinstance(cache, RedisCache)
    cache.set("k", ANSWER)
    assert redis.Redis.from_url(redis_url).get(KEY_PREFIX + "k") is not None
