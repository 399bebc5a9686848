"""The search-backend boundary: what an index stores, how it is filtered, what a search returns.

Backends (LanceDB embedded, Milvus Lite / Milvus cluster) implement `SearchBackend`. They store
chunk ids, filter fields, the analysed keyword terms and the embedding; chunk text lives in the
catalogue, the source of truth, so an index can always be rebuilt from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from evidenceqa.documents import HierarchyLevel

CONTENT_LEVELS: tuple[HierarchyLevel, ...] = ("section", "paragraph")


@dataclass(frozen=True)
class IndexRecord:
    chunk_id: str
    doc_id: str
    hierarchy_level: HierarchyLevel
    year: int | None
    collection: str
    doc_type: str
    topics: list[str]
    terms: str  # analysed keyword terms (evidenceqa.text.tokens.analyze of the chunk text)
    vector: np.ndarray  # unit-length float32 embedding
    evidence_type: str | None = None  # evidence_types.KEYS


@dataclass(frozen=True)
class Filters:
    """Pre-filters applied inside the engine. A year bound excludes documents of unknown year."""

    levels: tuple[HierarchyLevel, ...] = CONTENT_LEVELS  # overview chunks only when asked for
    year_min: int | None = None
    year_max: int | None = None
    collections: tuple[str, ...] = ()  # the ones asked for
    # The ones the reader may read: a bound set by their access, not a choice, so a reader is never
    # shown it as a limit of theirs to lift.
    readable: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()
    evidence_types: tuple[str, ...] = ()  # evidence_types.KEYS
    topics: tuple[str, ...] = ()  # any of these
    doc_ids: tuple[str, ...] = ()  # restrict to these documents (e.g. "search within")
    exclude_doc_ids: tuple[str, ...] = ()  # e.g. a benchmark's held-out documents
    # Not a filter but the reader's ranking preference, carried with the filters so that every
    # caller, the answer's record and its cache key hold it: stronger evidence types rank higher.
    prefer_evidence: bool = False

    def year_problem(self) -> str | None:
        """Why no document can pass the year bounds (the first after the last), or None."""
        if self.year_min is not None and self.year_max is not None and self.year_min > self.year_max:
            return f"the earliest year ({self.year_min}) is after the latest ({self.year_max}): no year is in that range"
        return None

    def describe(self) -> dict[str, object]:
        """The filters that differ from the defaults, for results and answer records."""
        default = Filters()
        return {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in self.__dict__.items()
            if value != getattr(default, name)
        }


@dataclass(frozen=True)
class FilterDialect:
    """How one engine spells the filter predicates; `{f}` is the field, `{v}` the quoted values."""

    member: str  # e.g. "{f} IN ({v})"
    not_member: str
    any_of: str  # for list fields (topics)
    conjunction: str  # " AND "
    quote: Callable[[str], str]


def render_filters(filters: Filters, dialect: FilterDialect) -> str:
    """The filters as one predicate in the engine's syntax ("" when nothing is filtered).

    An empty tuple means "no restriction" for every field, `levels` included. `year >= n` and
    `year <= n` are false for a NULL year, so a year bound drops documents of unknown year.
    """

    def values(items: tuple[str, ...]) -> str:
        return ", ".join(dialect.quote(item) for item in items)

    memberships = [
        (dialect.member, "hierarchy_level", filters.levels),
        (dialect.member, "collection", filters.collections),
        (dialect.member, "collection", filters.readable),
        (dialect.member, "doc_type", filters.doc_types),
        (dialect.member, "evidence_type", filters.evidence_types),
        (dialect.any_of, "topics", filters.topics),
        (dialect.member, "doc_id", filters.doc_ids),
        (dialect.not_member, "doc_id", filters.exclude_doc_ids),
    ]
    parts = [template.format(f=field, v=values(items)) for template, field, items in memberships if items]
    if filters.year_min is not None:
        parts.append(f"year >= {int(filters.year_min)}")
    if filters.year_max is not None:
        parts.append(f"year <= {int(filters.year_max)}")
    return dialect.conjunction.join(parts)


def query_vector(vector: np.ndarray, dim: int, where: object) -> np.ndarray:
    """The query as a flat float32 vector, or a clear error when it is not of the index's dimension."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if query.shape[0] != dim:
        raise ValueError(f"index at {where} holds {dim}-dim vectors; the query has {query.shape[0]}")
    return query


@dataclass
class Hit:
    chunk_id: str
    doc_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)  # retriever ("dense", "keyword") → 1-based rank


@runtime_checkable
class SearchBackend(Protocol):
    """A backend may also set `concurrent_search = True`: its search_dense and search_keyword may run
    at once on two threads, and a hybrid search then runs them so."""

    name: str

    def add(self, records: Sequence[IndexRecord]) -> None:
        """Insert or replace records by chunk id."""

    def delete(self, doc_ids: Sequence[str]) -> None:
        """Remove every chunk of these documents."""

    def search_dense(self, vector: np.ndarray, k: int, filters: Filters) -> list[Hit]:
        """Nearest chunks by cosine similarity, best first."""

    def search_keyword(self, terms: str, k: int, filters: Filters) -> list[Hit]:
        """Best BM25 matches for analysed `terms`, best first."""

    def count(self) -> int:
        """Number of chunks stored."""

    def chunk_ids(self, doc_id: str) -> set[str]:
        """The chunk ids stored for one document (for checks and repair)."""

    def close(self) -> None: ...
