from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from evidenceqa.embeddings import CachedEmbedder, Embedder, EmbeddingCache, SentenceTransformerEmbedder
from evidenceqa.embeddings.cache import content_hash
from tests.embeddings.protocol import assert_embedder


class CountingEmbedder:
    """A real (tiny) embedder: deterministic vectors from the text's hash; it records every call."""

    def __init__(self, model_id: str = "count:v1", dim: int = 4) -> None:
        self.model_id = model_id
        self.dim = dim
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self._vector(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        self.calls.append(["query:" + text])
        return self._vector("query:" + text)

    def _vector(self, text: str) -> np.ndarray:
        raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[: self.dim], dtype=np.uint8)
        vector = raw.astype(np.float32) + 1
        return vector / np.linalg.norm(vector)


class CountingWrapper:
    """Counts the texts a real embedder is asked for."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.embedded.append(text)
        return self.inner.embed_query(text)


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[EmbeddingCache]:
    cache = EmbeddingCache(tmp_path / "home" / "embeddings.sqlite3")
    yield cache
    cache.close()


def test_second_call_embeds_nothing(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    assert_embedder(cached)
    texts = ["alpha", "beta", "gamma"]
    first = cached.embed(texts)
    assert inner.calls == [texts]
    second = cached.embed(texts)
    assert len(inner.calls) == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, inner.embed(texts))


def test_only_misses_are_embedded_once_each(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    cached.embed(["alpha", "beta"])
    out = cached.embed(["beta", "delta", "alpha", "delta"])
    assert inner.calls[1] == ["delta"]
    np.testing.assert_array_equal(out, inner.embed(["beta", "delta", "alpha", "delta"]))


def test_cache_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite3"
    first = EmbeddingCache(path)
    CachedEmbedder(CountingEmbedder(), first).embed(["alpha"])
    first.close()
    inner = CountingEmbedder()
    reopened = EmbeddingCache(path)
    CachedEmbedder(inner, reopened).embed(["alpha"])
    reopened.close()
    assert inner.calls == []


def test_model_ids_do_not_share_vectors(cache: EmbeddingCache) -> None:
    CachedEmbedder(CountingEmbedder("count:v1"), cache).embed(["alpha"])
    other = CountingEmbedder("count:v2")
    CachedEmbedder(other, cache).embed(["alpha"])
    assert other.calls == [["alpha"]]


def test_queries_are_remembered_in_memory_only(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    cached.embed(["alpha"])
    query = cached.embed_query("alpha")
    assert inner.calls == [["alpha"], ["query:alpha"]]
    np.testing.assert_array_equal(cached.embed_query("alpha"), query)
    assert len(inner.calls) == 2
    assert query.shape == (4,)
    # A new process (a new CachedEmbedder on the same file) embeds the question again: it was not stored.
    again = CountingEmbedder()
    CachedEmbedder(again, cache).embed_query("alpha")
    assert again.calls == [["query:alpha"]]


def test_many_texts_are_committed_in_chunks(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    texts = [f"text {i}" for i in range(1500)]
    out = CachedEmbedder(inner, cache).embed(texts)
    assert [len(call) for call in inner.calls] == [1024, 476]
    assert len(cache.get_many(inner.model_id, [content_hash(t) for t in texts])) == 1500
    np.testing.assert_array_equal(out, inner.embed(texts))


def test_no_texts(cache: EmbeddingCache) -> None:
    assert CachedEmbedder(CountingEmbedder(), cache).embed([]).shape == (0, 4)


def test_cache_uses_wal(cache: EmbeddingCache) -> None:
    with sqlite3.connect(cache.path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_failed_write_stores_nothing_and_keeps_the_cache_readable(cache: EmbeddingCache) -> None:
    cache.put_many("m", [("kept", np.ones(2, dtype=np.float32))])

    def items() -> Iterator[tuple[str, np.ndarray]]:
        yield "partial", np.zeros(2, dtype=np.float32)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.put_many("m", items())
    assert set(cache.get_many("m", ["kept", "partial"])) == {"kept"}


def test_process_killed_mid_write_leaves_the_cache_readable(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite3"
    cache = EmbeddingCache(path)
    cache.put_many("m", [("kept", np.ones(2, dtype=np.float32))])
    cache.close()
    # The child dies inside the write transaction: no rollback, no close, as on a crash or kill -9.
    child = f"""
import os, numpy as np
from evidenceqa.embeddings import EmbeddingCache
def items():
    yield "partial", np.zeros(2, dtype=np.float32)
    os._exit(3)
EmbeddingCache({str(path)!r}).put_many("m", items())
"""
    assert subprocess.run([sys.executable, "-c", child]).returncode == 3
    reopened = EmbeddingCache(path)
    found = reopened.get_many("m", ["kept", "partial"])
    reopened.close()
    assert set(found) == {"kept"}
    np.testing.assert_array_equal(found["kept"], np.ones(2, dtype=np.float32))


def test_real_model_is_not_asked_twice(
    cache: EmbeddingCache, st_embedder: SentenceTransformerEmbedder, paragraphs: list[str]
) -> None:
    counting = CountingWrapper(st_embedder)
    cached = CachedEmbedder(counting, cache)
    first = cached.embed(paragraphs[:10])
    assert len(counting.embedded) == 10
    second = cached.embed(paragraphs[:10])
    assert len(counting.embedded) == 10
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, st_embedder.embed(paragraphs[:10]), atol=1e-6)
    assert cached.dim == 384


def test_a_cache_that_cannot_be_opened_is_off_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level("WARNING", logger="evidenceqa.embeddings.cache"):
        cache = EmbeddingCache(blocked / "embeddings.sqlite3")  # its folder cannot be made
        inner = CountingEmbedder()
        cached = CachedEmbedder(inner, cache)
        first = cached.embed(["alpha"])
        np.testing.assert_array_equal(cached.embed(["alpha"]), first)
    assert len(inner.calls) == 2  # embedded each time: nothing is kept
    [warning] = [r.getMessage() for r in caplog.records]
    assert "is off" in warning and "embedding without it" in warning
    cache.close()


def test_a_cache_whose_writes_fail_turns_off_and_embedding_goes_on(
    cache: EmbeddingCache, caplog: pytest.LogCaptureFixture
) -> None:
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, cache)
    cached.embed(["alpha"])
    writer = sqlite3.connect(cache.path, timeout=0)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock: "database is locked"
    try:
        with caplog.at_level("WARNING", logger="evidenceqa.embeddings.cache"):
            assert cached.embed(["beta"]).shape == (1, 4)
        assert "is off" in caplog.text
        assert cached.embed(["alpha"]).shape == (1, 4) and inner.calls[-1] == ["alpha"]  # off: no lookups
    finally:
        writer.rollback()
        writer.close()
