"""Search backends behind one protocol (`evidenceqa.index.base.SearchBackend`), chosen by name
through the registry (group `evidenceqa.backends`): each entry point is a function
`(settings, dim, space) -> SearchBackend`. A backend's module is imported only when it is opened, so
commands that never search load neither LanceDB nor pymilvus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evidenceqa import registry
from evidenceqa.index.base import CONTENT_LEVELS, Filters, Hit, IndexRecord, SearchBackend

if TYPE_CHECKING:
    from evidenceqa.config import Settings

__all__ = ["CONTENT_LEVELS", "Filters", "Hit", "IndexRecord", "SearchBackend", "open_backend"]


def open_backend(
    name: str | None, settings: Settings, dim: int | None = None, space: str = "chunks"
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
