"""A persistent embedding cache, so re-ingesting unchanged text does not embed it again."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from evidenceqa.embeddings.base import Embedder, no_texts

log = logging.getLogger(__name__)

# SQLite caps the number of `?` parameters per statement; stay well below every version's limit.
_LOOKUP_CHUNK = 500
# Misses are embedded and committed this many at a time, so an interrupted ingest keeps its progress.
_COMMIT_EVERY = 1024
# Recent question vectors, in memory only: a repeated question skips the model, and clinicians'
# questions are never written to disk by the cache.
_QUERY_MEMORY = 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_id, content_hash)
) WITHOUT ROWID
"""


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """(model_id, content_hash) → float32 vector, in SQLite; every write is one transaction.

    It is only a cache: when its file cannot be opened or written (a full disk, a read-only home), it
    logs one warning and is off for the rest of the process, so searching an index that is there
    still works, and an ingest stops at the index's own write with that error."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # One connection shared by threads (e.g. a web server's workers), serialised by the lock.
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            with self._conn:
                # WAL: readers are not blocked by a writer, and a crash mid-write leaves the old state intact.
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute(_SCHEMA)
        except (OSError, sqlite3.OperationalError) as exc:
            self._turn_off(exc)

    def _turn_off(self, exc: Exception) -> None:
        log.warning("the vector cache %s is off (%s): embedding without it", self.path, exc)
        if self._conn is not None:
            self._conn.close()
        self._conn = None

    def get_many(self, model_id: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            if self._conn is None:
                return found
            for start in range(0, len(wanted), _LOOKUP_CHUNK):
                chunk = wanted[start : start + _LOOKUP_CHUNK]
                rows = self._conn.execute(
                    "SELECT content_hash, vector FROM embeddings WHERE model_id = ? "
                    f"AND content_hash IN ({','.join('?' * len(chunk))})",
                    [model_id, *chunk],
                )
                found.update((h, np.frombuffer(blob, dtype=np.float32)) for h, blob in rows)
        return found

    def put_many(self, model_id: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """All or nothing: if `items` fails part-way, nothing of this call is stored."""
        with self._lock:
            if self._conn is None:
                return
            try:
                with self._conn:
                    self._conn.executemany(
                        "INSERT OR REPLACE INTO embeddings (model_id, content_hash, vector) VALUES (?, ?, ?)",
                        ((model_id, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items),
                    )
            except sqlite3.OperationalError as exc:
                self._turn_off(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()


class CachedEmbedder:
    """An Embedder that only asks the wrapped embedder for texts the cache has not seen."""

    def __init__(self, embedder: Embedder, cache: EmbeddingCache) -> None:
        self.embedder = embedder
        self.cache = cache
        self.model_id = embedder.model_id
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def dim(self) -> int:
        # Delegated lazily: some embedders (remote APIs) learn their dimension on first use.
        return self.embedder.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return no_texts(self.dim)
        return self._cached(self.model_id, texts, self.embedder.embed)

    def embed_query(self, text: str) -> np.ndarray:
        if text in self._queries:
            self._queries.move_to_end(text)
            return self._queries[text]
        vector = self.embedder.embed_query(text)
        self._queries[text] = vector
        if len(self._queries) > _QUERY_MEMORY:
            self._queries.popitem(last=False)
        return vector

    def _cached(self, key: str, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        hashes = [content_hash(t) for t in texts]
        vectors = self.cache.get_many(key, hashes)
        # A dict also drops repeated texts, so each distinct miss is embedded once.
        misses = list({h: t for h, t in zip(hashes, texts, strict=True) if h not in vectors}.items())
        for start in range(0, len(misses), _COMMIT_EVERY):
            chunk = misses[start : start + _COMMIT_EVERY]
            new = dict(zip((h for h, _ in chunk), embed([t for _, t in chunk]), strict=True))
            self.cache.put_many(key, new.items())
            vectors.update(new)
        return np.stack([vectors[h] for h in hashes])
