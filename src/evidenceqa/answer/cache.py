"""The answer cache: exact-match keys to answer dicts, in process memory or in Redis (`redis_cache`).

A key is a sha256 of the normalised question, the applied filters, the library's index version and
a fingerprint of the settings that change answers, so any of those changing is a miss, never a stale
answer. Values are stored as JSON in both implementations: every reader gets its own copy, and the
in-memory cache behaves like Redis (tuples come back as lists).

The cache is an accelerator, never a dependency: a Redis outage makes it a no-op cache that logs one
warning and recovers by itself when Redis comes back.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from evidenceqa.answer import abstain, citations, context, extractive, findings, prompt
from evidenceqa.registry import MissingExtra
from evidenceqa.retrieval import unknown
from evidenceqa.text import sentences

log = logging.getLogger(__name__)

KEY_PREFIX = "evidenceqa:answer:"
# Bump when the shape of a cached answer changes, so a new release never reads an old release's answers.
ANSWER_FORMAT = 2  # 2: citations numbered by source (`citations.SourceNumbers`)
# The settings that change an answer for the same question and index (`search_k` does not: answers
# are written from `evidence_k` chunks, or the call's own k, which the key holds). An absent one
# counts as None.
# The code that decides what an extractive answer quotes and how it reads the findings: the
# offline generator's rules, as the prompt is an LLM's, with how it cuts the evidence into sentences.
# Its source is digested, so any release that changes it misses the answers cached before.
EXTRACTIVE_RULES: tuple[ModuleType, ...] = (extractive, findings, citations, sentences)
# Which chunks an answer hears beside the ranked evidence, whatever writes it: digested alike.
CONTEXT_RULES: tuple[ModuleType, ...] = (context,)
# The rules around the fitted abstention model (names the library never mentions, the floor):
# digested alike, so a release that abstains on other questions misses the answers cached before.
ABSTENTION_RULES: tuple[ModuleType, ...] = (abstain, unknown)
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


def settings_fingerprint(settings: BaseModel) -> str:
    """A digest of the answer-relevant settings and of the generators' rules: changing any of them
    must not serve old answers (a release whose prompt asks for something new, or that quotes other
    sentences offline, is a miss, not a week of old answers from Redis)."""
    material = {name: getattr(settings, name, None) for name in ANSWER_SETTINGS}
    return _digest(
        {
            **material,
            "llm_rules": prompt.SYSTEM_PROMPT,
            "extractive_rules": _source_digest(EXTRACTIVE_RULES),
            "abstention_rules": _source_digest(ABSTENTION_RULES),
            "context_rules": _source_digest(CONTEXT_RULES),
        }
    )


@cache
def _source_digest(modules: tuple[ModuleType, ...]) -> str:
    return _digest([inspect.getsource(module) for module in modules])


def cache_key(
    question: str,
    filters: dict[str, Any],
    index_version: int,
    settings_fingerprint: str,
    k: int | None = None,
    calibration: str = "",
    fusion_model: str = "",
    shorthand: str = "",
) -> str:
    """The exact-match key of one answer; `filters` as `Filters.describe()` gives them, `k` the
    chunks it is written from when the call sets them, `calibration` a digest of the abstention
    model (a refit changes which questions are answered without changing the index),
    `fusion_model` one of the adaptive fusion's model (a new one ranks other evidence first),
    `shorthand` one of the shorthand questions are expanded with (a new list finds other evidence)."""
    return _digest(
        {
            "format": ANSWER_FORMAT,
            "question": normalise_question(question),
            "filters": filters,
            "index_version": index_version,
            "settings": settings_fingerprint,
            "k": k,
            "calibration": calibration,
            "fusion_model": fusion_model,
            "shorthand": shorthand,
        }
    )


def check_ttl(ttl_s: int | None) -> None:
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
        check_ttl(ttl_s)
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


class CacheOptions(BaseModel):
    # Answers by exact question, filters and index version; Redis when a URL is set (shared by every
    # worker; the web app's login and rate counters may share it too), else an in-process LRU.
    redis_url: str | None = None  # e.g. redis://localhost:6379/0
    cache_max_entries: int = Field(1024, ge=1)
    cache_ttl_s: int | None = Field(7 * 24 * 3600, ge=1)  # None: answers never expire


def open_cache(settings: CacheOptions) -> Cache:
    """Redis when `redis_url` is set (one cache for every worker), else an in-process LRU."""
    if settings.redis_url:
        try:
            from evidenceqa.answer.redis_cache import RedisCache
        except ModuleNotFoundError as exc:
            raise MissingExtra("the Redis cache (setting redis_url)", "redis", exc.name) from None
        return RedisCache(settings.redis_url)
    return MemoryCache(settings.cache_max_entries)
