"""The answer cache: exact-match keys to answer dicts, in process memory or in Redis.

A key is a sha256 of the normalised question, the applied filters, the library's index version and
a fingerprint of the settings that change answers, so any of those changing is a miss, never a stale
answer. Values are stored as JSON in both implementations: every reader gets its own copy, and the
in-memory cache behaves like Redis (tuples come back as lists).

The cache is an accelerator, never a dependency: a Redis outage makes it a no-op cache that logs one
warning and recovers by itself when Redis comes back.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from evidenceqa.config import Settings

log = logging.getLogger(__name__)

KEY_PREFIX = "evidenceqa:answer:"
# Bump when the shape of a cached answer changes, so a new release never reads an old release's answers.
ANSWER_FORMAT = 1
# The settings that change an answer for the same question and index (`search_k` does not: answers
# are written from `evidence_k` chunks, or the call's own k, which the key holds). An absent one
# counts as None.
ANSWER_SETTINGS = (
    "embedder",
    "backend",
    "evidence_k",
    "fusion",
    "alpha",
    "rrf_k",
    "fusion_depth",
    "rerank",
    "rerank_depth",
    "rerank_weight",
    "chunk_strategy",
    "generator",
    "llm_model",
    "llm_api_base",
    "llm_api_version",
    "llm_max_tokens",
)
# Trailing whitespace and sentence punctuation ("… membranes ?", "… membranes?!", fullwidth "？").
_TRAILING = re.compile(r"[\s.?!…,;:？！。]+$")

T = TypeVar("T")
Clock = Callable[[], float]


class Cache(Protocol):
    name: str

    def get(self, key: str) -> dict[str, Any] | None:
        """The value stored under `key`, or None when absent, expired or unavailable."""

    def set(self, key: str, value: dict[str, Any], ttl_s: int | None = None) -> None:
        """Store a JSON-serialisable `value`; `ttl_s` None keeps it until evicted or cleared."""

    def clear(self) -> None:
        """Remove every answer this cache stored (and nothing else in a shared store)."""


def normalise_question(question: str) -> str:
    """Case-folded, whitespace collapsed, trailing punctuation stripped: spellings of one question."""
    return _TRAILING.sub("", " ".join(question.casefold().split()))


def _digest(material: object) -> str:
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def settings_fingerprint(settings: Settings) -> str:
    """A digest of the answer-relevant settings: changing any of them must not serve old answers."""
    return _digest({name: getattr(settings, name, None) for name in ANSWER_SETTINGS})


def cache_key(
    question: str,
    filters: dict[str, Any],
    index_version: int,
    settings_fingerprint: str,
    k: int | None = None,
    calibration: str = "",
) -> str:
    """The exact-match key of one answer; `filters` as `Filters.describe()` gives them, `k` the
    chunks it is written from when the call sets them, `calibration` a digest of the abstention
    model (a refit changes which questions are answered without changing the index)."""
    return _digest(
        {
            "format": ANSWER_FORMAT,
            "question": normalise_question(question),
            "filters": filters,
            "index_version": index_version,
            "settings": settings_fingerprint,
            "k": k,
            "calibration": calibration,
        }
    )


def _check_ttl(ttl_s: int | None) -> None:
    # Redis rejects a zero or negative expiry; that is a caller's bug, not an outage to swallow.
    if ttl_s is not None and ttl_s <= 0:
        raise ValueError(f"ttl_s must be a positive number of seconds or None, not {ttl_s}")


class MemoryCache:
    """An in-process LRU of at most `max_entries` answers; safe to share between request threads."""

    name = "memory"

    def __init__(self, max_entries: int, clock: Clock = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float | None, str]] = OrderedDict()  # key → (expires, JSON)
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, payload = entry
            if expires is not None and self._clock() >= expires:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
        return json.loads(payload)

    def set(self, key: str, value: dict[str, Any], ttl_s: int | None = None) -> None:
        _check_ttl(ttl_s)
        payload = json.dumps(value)  # outside the lock: serialising is the slow part
        with self._lock:
            expires = None if ttl_s is None else self._clock() + ttl_s
            self._entries[key] = (expires, payload)
            self._entries.move_to_end(key)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


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
        _check_ttl(ttl_s)
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


def open_cache(settings: Settings) -> Cache:
    """Redis when `redis_url` is set (one cache for every worker), else an in-process LRU."""
    if settings.redis_url:
        return RedisCache(settings.redis_url)
    return MemoryCache(settings.cache_max_entries)
