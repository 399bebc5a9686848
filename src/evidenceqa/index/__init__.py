"""Search backends behind one protocol (`evidenceqa.index.base.SearchBackend`), chosen by name
through the registry (group `evidenceqa.backends`): each entry point is a function
`(settings, dim, space) -> SearchBackend`. A backend's module is imported only when it is opened, so
commands that never search load neither LanceDB nor pymilvus; the built-in backends' options are
therefore declared here, beside the choice between them.
"""

from __future__ import annotations

from pydantic import Field, SecretStr

from evidenceqa import registry
from evidenceqa.home import HomeOptions
from evidenceqa.index.base import CONTENT_LEVELS, Filters, Hit, IndexRecord, SearchBackend

__all__ = ["CONTENT_LEVELS", "Filters", "Hit", "IndexOptions", "IndexRecord", "SearchBackend", "open_backend"]


class IndexOptions(HomeOptions):
    backend: str = "lancedb"  # "lancedb", "milvus" (the milvus extra), or a plugin's backend
    milvus_uri: str | None = None  # default: Milvus Lite in the data home; or http://host:19530
    milvus_token: SecretStr | None = None
    # LanceDB: dense search is exact below `ann_min_chunks`; from there an IVF_HNSW_SQ index is
    # trained (0: always exact). The probe settings trade recall for speed; docs/performance.md
    # measures the defaults' recall and latency on the distinct-text scale libraries
    # (benchmarks/ann_sweep.py).
    ann_min_chunks: int = Field(100_000, ge=0)
    ann_partition_chunks: int = Field(5000, ge=100)  # rows per IVF partition at training time
    ann_nprobes: int = Field(16, ge=1)
    ann_ef: int = Field(200, ge=1)
    ann_refine_factor: int = Field(2, ge=1)  # re-rank this many × k candidates by exact cosine
    # How late a long-lived reader (the web app) may see chunks another process (an ingest) indexed.
    index_refresh_seconds: float = Field(5.0, ge=0)


def open_backend(
    name: str | None, settings: IndexOptions, dim: int | None = None, space: str = "chunks"
) -> SearchBackend:
    """Open (or, given `dim`, create) the index of backend `name` (default `settings.backend`).

    `space` names the table / collection: one per embedder, since vector spaces do not mix
    (see `evidenceqa.library.index_sync.space_name`).

    `dim` is the embedder's dimension: a new index is created with it and an existing one must
    match it. Without `dim` an existing index opens whatever its dimension (commands that do
    not embed: counts, deletes), and a missing one is an error.

    Built in: lancedb (`evidenceqa.index.lancedb.open_lancedb`) and milvus
    (`evidenceqa.index.milvus.open_milvus`, the `milvus` extra).
    """
    opener = registry.load("backend", name or settings.backend)
    return opener(settings, dim, space)
