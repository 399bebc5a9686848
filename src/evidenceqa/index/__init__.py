"""Search backends behind one protocol (`evidenceqa.index.base.SearchBackend`).

Backends are imported lazily: `evidenceqa.retrieval.fusion` imports `evidenceqa.index.base`, and each
backend imports `evidenceqa.retrieval.fusion`, so importing them here would be circular (and would load
LanceDB and pymilvus for commands that never search).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidenceqa.index.base import CONTENT_LEVELS, Filters, Hit, IndexRecord, SearchBackend

if TYPE_CHECKING:
    from evidenceqa.config import Settings

BACKENDS = ("lancedb", "milvus")

__all__ = ["BACKENDS", "CONTENT_LEVELS", "Filters", "Hit", "IndexRecord", "SearchBackend", "open_backend"]


def open_backend(
    name: str | None, settings: Settings, dim: int | None = None, space: str = "chunks"
) -> SearchBackend:
    """Open (or, given `dim`, create) the index of backend `name` (default `settings.backend`).

    `space` names the table / collection: one per embedder, since vector spaces do not mix
    (see `evidenceqa.library.index_sync.space_name`).

    `dim` is the embedder's dimension: a new index is created with it and an existing one must
    match it. Without `dim` an existing index opens whatever its dimension (commands that do
    not embed: counts, deletes), and a missing one is an error.

    - lancedb: the table lives in `settings.index_path`.
    - milvus: `settings.milvus_uri`, else Milvus Lite at `settings.home / "milvus.db"`;
      `settings.milvus_token` authenticates to a server.
    """
    name = name or settings.backend
    if name == "lancedb":
        from evidenceqa.index.lancedb import AnnParams, LanceDBBackend

        ann = AnnParams(settings.ann_min_chunks, settings.ann_partition_chunks, settings.ann_nprobes,
                        settings.ann_ef, settings.ann_refine_factor)  # fmt: skip
        return LanceDBBackend(settings.index_path, dim, table=space, ann=ann)
    if name == "milvus":
        from evidenceqa.index.milvus import MilvusBackend

        uri = settings.milvus_uri or str(settings.home / "milvus.db")
        token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
        return MilvusBackend(uri, dim, collection=space, token=token)
    raise ValueError(f"unknown search backend {name!r}; choose one of {', '.join(BACKENDS)}")
