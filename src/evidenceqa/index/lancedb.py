"""LanceDB search backend: embedded, on disk, one table of chunks.

Keyword search is LanceDB's native full-text index (BM25) over the pre-analysed `terms` column,
built with a whitespace tokenizer and no stemming, stop words or folding of its own, so that
BM25 sees exactly the terms `evidenceqa.text.tokens.analyze` produced. Dense search is exact
(brute-force) cosine search over the `vector` column until the table reaches `AnnParams.min_rows`;
from there an IVF_HNSW_SQ index answers it (docs/performance.md measures both at 328k chunks: the
index is an order of magnitude faster for a little recall). Both are pre-filtered with the same SQL
predicate built from `Filters`.

Incremental indexing: rows written after an index was built are still found (LanceDB searches
the unindexed rows by a flat scan), but the FTS scores them with different BM25 statistics than
the indexed rows, so a fresh row and an indexed row with the same text get different scores.
Writes therefore mark the table stale, and the next search (or `close`) calls `optimize()`,
which folds new rows into every index (FTS, scalar, and later ANN) and compacts away deleted or
replaced rows. Ingest can add many small batches without re-indexing after each one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import cast

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import FTS, Bitmap, BTree, IvfHnswSq, LabelList
from lancedb.query import LanceVectorQueryBuilder, MatchQuery

from evidenceqa.index import IndexOptions
from evidenceqa.index.base import FilterDialect, Filters, Hit, IndexRecord, query_vector, render_filters

FTS_INDEX = "terms_idx"
# Scalar indexes on the filter fields: cheap to build, they keep pre-filtering fast at scale.
SCALAR_INDEXES: dict[str, BTree | Bitmap | LabelList] = {
    "chunk_id": BTree(),  # merge_insert joins on it
    "doc_id": BTree(),
    "year": BTree(),
    "hierarchy_level": Bitmap(),
    "collection": Bitmap(),
    "doc_type": Bitmap(),
    "evidence_type": Bitmap(),
    "topics": LabelList(),  # serves array_has_any
}
# The analysed terms are already lower-case, stemmed and stop-word free: the engine only splits
# on whitespace. max_token_length=None keeps long chemical names (the default drops > 40 chars).
FTS_CONFIG = FTS(
    base_tokenizer="whitespace",
    lower_case=True,
    stem=False,
    remove_stop_words=False,
    ascii_folding=False,
    max_token_length=None,
)
_IN_LIST_CHUNK = 500  # ids per DELETE ... IN (...) statement
# The vector index's name records how many rows it was trained on: partitions fitted to that size
# stay good while optimize() folds new rows in, until the table has doubled and it is retrained.
_ANN_NAME = re.compile(r"vector_ann_(\d+)$")

_DEFAULT = IndexOptions()


@dataclass(frozen=True)
class AnnParams:
    """When to build the approximate vector index, and how to probe it (`IndexOptions.ann_*`)."""

    min_rows: int = _DEFAULT.ann_min_chunks  # 0: always exact
    partition_rows: int = _DEFAULT.ann_partition_chunks
    nprobes: int = _DEFAULT.ann_nprobes
    ef: int = _DEFAULT.ann_ef
    refine_factor: int = _DEFAULT.ann_refine_factor


# Added after the first release: a table made before it gains the column (empty until the
# catalogue's re-labelling re-indexes its documents).
_EVIDENCE_FIELD = pa.field("evidence_type", pa.string())


def schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("chunk_id", pa.string(), nullable=False),
            pa.field("doc_id", pa.string(), nullable=False),
            pa.field("hierarchy_level", pa.string(), nullable=False),
            pa.field("year", pa.int32(), nullable=True),
            pa.field("collection", pa.string()),
            pa.field("doc_type", pa.string()),
            pa.field("topics", pa.list_(pa.string())),
            pa.field("terms", pa.string()),
            pa.field("vector", pa.list_(pa.float32(), dim)),
            _EVIDENCE_FIELD,
        ]
    )


def sql_literal(value: str) -> str:
    """A SQL string literal (DataFusion: single quotes doubled, backslashes are literal)."""
    return "'" + value.replace("'", "''") + "'"


_DIALECT = FilterDialect(
    member="{f} IN ({v})", not_member="{f} NOT IN ({v})", any_of="array_has_any({f}, [{v}])",
    conjunction=" AND ", quote=sql_literal,
)  # fmt: skip


def filter_sql(filters: Filters) -> str | None:
    """The `Filters` as a SQL predicate, or None when nothing is filtered."""
    return render_filters(filters, _DIALECT) or None


def _best_first(hits: list[Hit]) -> list[Hit]:
    """Best first; equal scores in chunk-id order, so results are deterministic."""
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))


_COMMIT_RETRIES = 5  # optimize() attempts against other processes' commits


def _dedup(records: Sequence[IndexRecord]) -> list[IndexRecord]:
    """One record per chunk id, the last one winning (merge_insert rejects duplicate keys)."""
    return list({r.chunk_id: r for r in records}.values())


class LanceDBBackend:
    name = "lancedb"
    # Reads of one table may run at once (LanceDB's engine is thread-safe for them and releases the
    # GIL); only the fold-in of unindexed rows is serialised (`_sync_indexes`).
    concurrent_search = True

    def __init__(
        self,
        path: str | Path,
        dim: int | None = None,
        table: str = "chunks",
        batch_size: int = 2000,
        ann: AnnParams | None = None,
        # LanceDB's own default is never to look for other processes' commits: documents ingested
        # while `serve` ran were not found until a restart.
        refresh_seconds: float = _DEFAULT.index_refresh_seconds,
    ):
        """Open the table at `path`, creating it when `dim` is given and there is none.

        `dim=None` opens an existing index whatever its dimension (for commands that do not embed).
        Reads see what other processes committed at most `refresh_seconds` late.
        """
        self.path = Path(path)
        self.batch_size = batch_size
        self.ann = ann or AnnParams()
        self._sync_lock = threading.Lock()
        if dim is None and not self.path.exists():
            raise FileNotFoundError(f"no LanceDB index at {self.path}: build the index first")
        self._db = lancedb.connect(
            str(self.path), read_consistency_interval=timedelta(seconds=refresh_seconds)
        )
        try:
            self._table = self._db.open_table(table)
        except ValueError:
            if dim is None:
                raise FileNotFoundError(
                    f"no table {table!r} in the LanceDB index at {self.path}: build the index first"
                ) from None
            self._table = self._db.create_table(table, schema=schema(dim))
        stored = self._table.schema.field("vector").type.list_size
        if dim is not None and stored != dim:
            raise ValueError(
                f"index at {self.path} holds {stored}-dim vectors; the embedder gives {dim}: rebuild the index"
            )
        self.dim = stored
        if _EVIDENCE_FIELD.name not in self._table.schema.names:
            self._table.add_columns(_EVIDENCE_FIELD)
        self._ensure_indexes()
        stats = self._table.index_stats(FTS_INDEX)
        # Written by another process without optimize(): fold those rows in before searching.
        self._stale = bool(stats and stats.num_unindexed_rows)

    def _ensure_indexes(self) -> None:
        """Create any missing index; works on an empty table."""
        existing = {ix.name for ix in self._table.list_indices()}
        for column, config in SCALAR_INDEXES.items():
            if f"{column}_idx" not in existing:
                self._table.create_index(column, config=config, replace=True)
        if FTS_INDEX not in existing:
            self._table.create_index("terms", config=FTS_CONFIG, replace=True)

    def _ann_indexes(self) -> list[str]:
        return [ix.name for ix in self._table.list_indices() if _ANN_NAME.match(ix.name)]

    def trained_rows(self, indexes: list[str] | None = None) -> int | None:
        """Rows the vector index was trained on; None when there is none (search is exact)."""
        names = self._ann_indexes() if indexes is None else indexes
        matches = (_ANN_NAME.match(name) for name in names)
        return max((int(found.group(1)) for found in matches if found), default=None)

    def _ensure_ann(self) -> None:
        """Train the vector index once the table is large enough, again once it has doubled."""
        rows = self._table.count_rows()
        stale = self._ann_indexes()
        trained = self.trained_rows(stale)
        if not self.ann.min_rows or rows < self.ann.min_rows or (trained and rows < 2 * trained):
            return
        config = IvfHnswSq(distance_type="cosine", num_partitions=max(1, rows // self.ann.partition_rows))
        self._table.create_index("vector", config=config, replace=True, name=f"vector_ann_{rows}")
        for name in stale:
            self._table.drop_index(name)

    def _sync_indexes(self) -> None:
        """Fold rows written since the last optimize into the indexes (see the module docstring)."""
        if self._stale:
            with self._sync_lock:  # a hybrid search's two halves may both find the table stale
                if self._stale:
                    self._fold_in()
                    self._stale = False

    def _fold_in(self) -> None:
        """optimize(), from the latest version again when another process committed first: two
        handles folding in the same rows (the web app and an ingest) conflict, and LanceDB
        reports that as retryable."""
        for attempt in range(1, _COMMIT_RETRIES + 1):
            try:
                self._table.optimize()
                self._ensure_ann()
                return
            except RuntimeError as error:
                if "Retryable commit conflict" not in str(error) or attempt == _COMMIT_RETRIES:
                    raise
                self._table.checkout_latest()

    # -- writes ---------------------------------------------------------------------------

    def _arrow(self, records: Sequence[IndexRecord]) -> pa.Table:
        vectors = np.stack([np.asarray(r.vector, dtype=np.float32).reshape(-1) for r in records])
        if vectors.shape[1] != self.dim:
            raise ValueError(
                f"index at {self.path} holds {self.dim}-dim vectors; got {vectors.shape[1]}-dim embeddings"
            )
        columns = {
            "chunk_id": pa.array([r.chunk_id for r in records], pa.string()),
            "doc_id": pa.array([r.doc_id for r in records], pa.string()),
            "hierarchy_level": pa.array([r.hierarchy_level for r in records], pa.string()),
            "year": pa.array([r.year for r in records], pa.int32()),
            "collection": pa.array([r.collection for r in records], pa.string()),
            "doc_type": pa.array([r.doc_type for r in records], pa.string()),
            "topics": pa.array([list(r.topics) for r in records], pa.list_(pa.string())),
            "terms": pa.array([r.terms for r in records], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(vectors.reshape(-1), pa.float32()), self.dim
            ),
            "evidence_type": pa.array([r.evidence_type for r in records], pa.string()),
        }
        return pa.Table.from_pydict(columns, schema=self._table.schema)

    def add(self, records: Sequence[IndexRecord]) -> None:
        records = _dedup(records)
        for start in range(0, len(records), self.batch_size):
            batch = self._arrow(records[start : start + self.batch_size])
            (
                self._table.merge_insert("chunk_id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(batch)
            )
            self._stale = True

    def delete(self, doc_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(ids), _IN_LIST_CHUNK):
            # render_filters rather than filter_sql (str | None): with doc_ids set it is never empty.
            self._table.delete(
                render_filters(
                    Filters(levels=(), doc_ids=tuple(ids[start : start + _IN_LIST_CHUNK])), _DIALECT
                )
            )
            self._stale = True

    # -- reads ----------------------------------------------------------------------------

    def search_dense(self, vector: np.ndarray, k: int, filters: Filters, exact: bool = False) -> list[Hit]:
        """`exact`: brute force even when a vector index exists (a benchmark's reference)."""
        if k <= 0:
            return []
        query = query_vector(vector, self.dim, self.path)
        self._sync_indexes()
        # Table.search is typed as the base LanceQueryBuilder; a vector query gets the vector builder.
        vector_query = cast(
            LanceVectorQueryBuilder,
            self._table.search(query, query_type="vector", vector_column_name="vector"),
        )
        builder = vector_query.distance_type("cosine")
        if exact:
            builder = builder.bypass_vector_index()
        else:  # ignored while there is no vector index
            # HNSW refuses an ef below the candidates it must return (k × the refine factor).
            ef = max(self.ann.ef, k * self.ann.refine_factor)
            builder = builder.nprobes(self.ann.nprobes).ef(ef).refine_factor(self.ann.refine_factor)
        sql = filter_sql(filters)
        if sql:
            builder = builder.where(sql, prefilter=True)
        rows = builder.select(["chunk_id", "doc_id", "_distance"]).limit(k).to_list()
        return _best_first([Hit(r["chunk_id"], r["doc_id"], 1.0 - float(r["_distance"])) for r in rows])

    def search_keyword(self, terms: str, k: int, filters: Filters) -> list[Hit]:
        if k <= 0 or not terms.strip():
            return []
        self._sync_indexes()
        # A pydantic dataclass: without pydantic's mypy plugin its kw_only defaults read as required.
        query = MatchQuery(terms, "terms")  # type: ignore[call-arg]
        builder = self._table.search(query, query_type="fts")
        sql = filter_sql(filters)
        if sql:
            builder = builder.where(sql, prefilter=True)
        rows = builder.select(["chunk_id", "doc_id", "_score"]).limit(k).to_list()
        return _best_first([Hit(r["chunk_id"], r["doc_id"], float(r["_score"])) for r in rows])

    def count(self) -> int:
        return self._table.count_rows()

    def chunk_ids(self, doc_id: str) -> set[str]:
        rows = (
            self._table.search()
            .where(f"doc_id = {sql_literal(doc_id)}")
            .select(["chunk_id"])
            .limit(None)
            .to_arrow()
        )
        return set(rows.column("chunk_id").to_pylist())

    def close(self) -> None:
        """Leave the indexes up to date for the next reader."""
        if self._table is not None:
            self._sync_indexes()
            self._table = None  # type: ignore[assignment]


def open_lancedb(settings: IndexOptions, dim: int | None, space: str) -> LanceDBBackend:
    """The registered `lancedb` backend: the table `space` in `settings.index_path`."""
    ann = AnnParams(settings.ann_min_chunks, settings.ann_partition_chunks, settings.ann_nprobes,
                    settings.ann_ef, settings.ann_refine_factor)  # fmt: skip
    return LanceDBBackend(
        settings.index_path, dim, table=space, ann=ann, refresh_seconds=settings.index_refresh_seconds
    )
