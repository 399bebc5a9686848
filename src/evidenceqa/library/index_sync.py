"""Keep a search index in step with the catalogue.

The catalogue logs every document change with the version that made it. An index remembers the
catalogue version it has caught up to (per backend and embedder, in the catalogue's state), and a
sync applies only the documents changed since: removed ones are deleted, changed ones are deleted
and re-added. Applying a change twice gives the same index, so a sync interrupted at any point
is completed by running it again; embeddings are cached by content hash, so that costs little.
One sync runs at a time per catalogue (`evidenceqa index` while an ingest indexes waits its turn).
"""

from __future__ import annotations

import fcntl
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from evidenceqa.documents import Chunk
from evidenceqa.embeddings.base import Embedder
from evidenceqa.index.base import IndexRecord, SearchBackend
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.text.tokens import analyze

_BATCH_CHUNKS = 512  # chunks embedded and written per step: bounded memory, steady progress

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SyncReport:
    from_version: int
    to_version: int
    documents_added: int
    documents_deleted: int
    chunks_added: int


def space_name(embedder: Embedder) -> str:
    """The table / collection for one embedder's vectors: vector spaces are not interchangeable.

    Letters, digits and underscores only, starting with a letter (Milvus's rule for names).
    """
    return "chunks_" + re.sub(r"[^a-z0-9]+", "_", embedder.model_id.lower()).strip("_")


def _state_key(backend: SearchBackend, embedder: Embedder) -> str:
    return f"indexed_version:{backend.name}:{space_name(embedder)}"


def indexed_version(catalogue: Catalogue, backend: SearchBackend, embedder: Embedder) -> int:
    return int(catalogue.get_state(_state_key(backend, embedder)) or 0)


def sync(
    catalogue: Catalogue,
    backend: SearchBackend,
    embedder: Embedder,
    on_chunks: Callable[[int], None] | None = None,
) -> SyncReport:
    """Bring `backend` up to the catalogue's current version."""
    with _one_at_a_time(catalogue):
        return _sync(catalogue, backend, embedder, on_chunks)


@contextmanager
def _one_at_a_time(catalogue: Catalogue) -> Iterator[None]:
    """Two syncs at once would each add every chunk pending since the same version, so the index
    would hold them twice: the second waits for the first, then finds nothing left to do."""
    with open(catalogue.path.with_name(f"{catalogue.path.name}.sync-lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("another process is indexing %s: waiting for it to finish", catalogue.path.parent)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield  # closing the file releases the lock, also when the sync fails


def _sync(
    catalogue: Catalogue,
    backend: SearchBackend,
    embedder: Embedder,
    on_chunks: Callable[[int], None] | None,
) -> SyncReport:
    start = indexed_version(catalogue, backend, embedder)
    target = catalogue.index_version
    pending = catalogue.pending_since(start)
    upserts = sorted(doc_id for doc_id, op in pending.items() if op == "upsert")
    stale = sorted(pending)
    for i in range(0, len(stale), _BATCH_CHUNKS):
        backend.delete(stale[i : i + _BATCH_CHUNKS])
    added = 0
    for batch in _chunk_batches(catalogue, upserts):
        backend.add(to_records(batch, embedder))
        added += len(batch)
        if on_chunks:
            on_chunks(len(batch))
    with catalogue.transaction():
        catalogue.set_state(_state_key(backend, embedder), str(target))
    return SyncReport(start, target, len(upserts), len(pending) - len(upserts), added)


def _chunk_batches(catalogue: Catalogue, doc_ids: Sequence[str]) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for doc_id in doc_ids:
        batch.extend(catalogue.chunks(doc_id))
        if len(batch) >= _BATCH_CHUNKS:
            yield batch
            batch = []
    if batch:
        yield batch


def to_records(chunks: Sequence[Chunk], embedder: Embedder) -> list[IndexRecord]:
    vectors = embedder.embed([chunk.text for chunk in chunks])
    return [
        IndexRecord(
            chunk_id=chunk.chunk_id,
            doc_id=chunk.doc_id,
            hierarchy_level=chunk.hierarchy_level,
            year=chunk.year,
            collection=chunk.collection,
            doc_type=chunk.doc_type,
            topics=list(chunk.topics),
            terms=analyze(chunk.text),
            vector=vector,
            evidence_type=chunk.evidence_type,
        )
        for chunk, vector in zip(chunks, vectors, strict=True)
    ]


def pending_chunks(catalogue: Catalogue, backend: SearchBackend, embedder: Embedder) -> int:
    """How many chunks a sync would embed and write (for a progress bar's total)."""
    pending = catalogue.pending_since(indexed_version(catalogue, backend, embedder))
    upserts = [doc_id for doc_id, op in pending.items() if op == "upsert"]
    return catalogue.count_chunks(upserts)
