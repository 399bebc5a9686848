"""Milvus search backend: the same code for Milvus Lite (a local `.db` path) and a Milvus server.

Keyword search is Milvus's built-in BM25: a BM25 Function turns the pre-analysed `terms` field
into the `sparse` field, searched with metric BM25. The analyzer is the standard tokenizer plus
lower-casing, no stemming or stop words, so BM25 sees the terms `evidenceqa.text.tokens.analyze`
produced. Dense search is cosine over `vector` with a FLAT (exact) index. Both are pre-filtered
with the same boolean expression built from `Filters`.

Notes from checking milvus-lite 3.2.2 (the pure-Python Milvus Lite):
- nullable INT64 works: `year` stores None for an unknown year, and `year >= n` is false for
  null, as on a server.
- `in`, `not in`, `ARRAY_CONTAINS_ANY`, comparisons and `and` all work in filters; string
  literals take C-style backslash escapes (backslash, both quotes, n, r, t) as on a server.
- BM25 results come back as a *negative* distance (smaller is better), while a server returns
  the positive BM25 score. Scores here are `abs(distance)`, best first, on either.
- Index types: FLAT/BRUTE_FORCE, AUTOINDEX (HNSW when faiss is installed), HNSW, HNSW_SQ,
  IVF_FLAT, IVF_SQ8, SPARSE_INVERTED_INDEX (TAAT_NAIVE only; params bm25_k1, bm25_b).
- BM25 statistics (document count, document frequencies, average length) are per segment, not
  global, so scores drift a little once data spans several segments (a flush writes one; after
  4 similar-sized ones they are compacted into one). Worse, rows still in the in-memory table
  are scored with statistics over the rows the *filter admits*, so the same query scores
  differently with and without a filter, and differently again after a restart. Hence, on
  Milvus Lite only, writes mark the collection dirty and the next search flushes first: every
  search then scores against segments, filter-independently and the same as after a reopen.
  Not done on a server, where flush is costly and rate-limited and BM25 statistics are the
  server's own business (its behaviour was not checked here: no server in this environment).
- A collection opened again by a new process is "released": it must be loaded before search.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pymilvus import DataType, Function, FunctionType, MilvusClient

from evidenceqa.index import IndexOptions
from evidenceqa.index.base import FilterDialect, Filters, Hit, IndexRecord, query_vector, render_filters

ID_MAX_LENGTH = 512
FIELD_MAX_LENGTH = 512
TERMS_MAX_BYTES = 65535  # Milvus's VARCHAR limit; longer terms are cut at a token boundary
TOPICS_MAX = 64  # ARRAY capacity; a record's further topics are dropped
MAX_TOPK = 16384  # Milvus's limit on search limit / query result window
BM25_PARAMS = {"bm25_k1": 1.2, "bm25_b": 0.75}  # LanceDB's values (milvus-lite defaults to k1 1.5)
_IN_LIST_CHUNK = 500  # ids per delete expression
REQUIRED_FIELDS = {
    "chunk_id",
    "doc_id",
    "hierarchy_level",
    "year",
    "collection",
    "doc_type",
    "evidence_type",
    "topics",
    "terms",
    "sparse",
    "vector",
}


def string_literal(value: str) -> str:
    """A double-quoted Milvus expression string literal."""
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


_DIALECT = FilterDialect(
    member="{f} in [{v}]", not_member="{f} not in [{v}]", any_of="ARRAY_CONTAINS_ANY({f}, [{v}])",
    conjunction=" and ", quote=string_literal,
)  # fmt: skip


def filter_expr(filters: Filters) -> str:
    """The `Filters` as a Milvus boolean expression ("" when nothing is filtered)."""
    return render_filters(filters, _DIALECT)


def _truncate_utf8(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    cut = data[:limit].decode("utf-8", errors="ignore")
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def _best_first(hits: list[Hit]) -> list[Hit]:
    """Best first; equal scores in chunk-id order, so results are deterministic."""
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))


# Milvus Lite runs one in-process server per .db path (pymilvus starts it on first connect, and
# by default it lives until the process exits, holding the data-directory lock). Count our
# users per path and stop the server when the last one closes, so that the data is flushed and
# another process (or a test reopening the index) gets it.
_lite_lock = threading.Lock()
_lite_users: dict[str, int] = {}


def _lite_acquire(path: str) -> None:
    with _lite_lock:
        _lite_users[path] = _lite_users.get(path, 0) + 1


def _lite_release(path: str) -> None:
    with _lite_lock:
        left = _lite_users.get(path, 0) - 1
        if left > 0:
            _lite_users[path] = left
            return
        _lite_users.pop(path, None)
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(path)


def is_lite_uri(uri: str) -> bool:
    return uri.endswith(".db")


class MilvusBackend:
    name = "milvus"

    def __init__(
        self,
        uri: str | Path,
        dim: int | None = None,
        collection: str = "chunks",
        token: str | None = None,
        batch_size: int = 1000,
    ):
        """Open `collection` at `uri`, creating it when `dim` is given and there is none.

        `uri`: a local path ending in `.db` (Milvus Lite, a folder despite the name) or a server
        address such as http://host:19530 (with `token`). `dim=None` opens an existing collection
        whatever its dimension.
        """
        self.uri = str(uri)
        self.collection = collection
        self.batch_size = batch_size
        self._lite_path: str | None = None
        self._unflushed = False  # Milvus Lite: written since the last flush (see module docstring)
        if is_lite_uri(self.uri):
            lite = Path(self.uri).resolve()
            if dim is None and not lite.exists():
                raise FileNotFoundError(f"no Milvus Lite index at {lite}: build the index first")
            lite.parent.mkdir(parents=True, exist_ok=True)
            self.uri = self._lite_path = str(lite)
            _lite_acquire(self._lite_path)
        try:
            self._client: MilvusClient | None = MilvusClient(uri=self.uri, token=token or "")
            self.dim = self._open(dim)
        except BaseException:
            self.close()
            raise

    def _open(self, dim: int | None) -> int:
        client = self._c
        if not client.has_collection(self.collection):
            if dim is None:
                raise FileNotFoundError(
                    f"no collection {self.collection!r} at {self.uri}: build the index first"
                )
            self._create(dim)
            return dim
        fields = {f["name"]: f for f in client.describe_collection(self.collection)["fields"]}
        missing = REQUIRED_FIELDS - fields.keys()
        if missing:
            raise ValueError(
                f"collection {self.collection!r} at {self.uri} lacks fields {sorted(missing)}: rebuild the index"
            )
        stored = int(fields["vector"]["params"]["dim"])
        if dim is not None and stored != dim:
            raise ValueError(
                f"index at {self.uri} holds {stored}-dim vectors; the embedder gives {dim}: rebuild the index"
            )
        state = client.get_load_state(self.collection).get("state")
        if getattr(state, "name", str(state)) != "Loaded":
            client.load_collection(self.collection)
        return stored

    def _create(self, dim: int) -> None:
        client = self._c
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=ID_MAX_LENGTH)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=ID_MAX_LENGTH)
        schema.add_field("hierarchy_level", DataType.VARCHAR, max_length=32)
        schema.add_field("year", DataType.INT64, nullable=True)
        schema.add_field("collection", DataType.VARCHAR, max_length=FIELD_MAX_LENGTH)
        schema.add_field("doc_type", DataType.VARCHAR, max_length=FIELD_MAX_LENGTH)
        schema.add_field("evidence_type", DataType.VARCHAR, max_length=FIELD_MAX_LENGTH)
        schema.add_field(
            "topics",
            DataType.ARRAY,
            element_type=DataType.VARCHAR,
            max_capacity=TOPICS_MAX,
            max_length=FIELD_MAX_LENGTH,
        )
        schema.add_field(
            "terms",
            DataType.VARCHAR,
            max_length=TERMS_MAX_BYTES,
            enable_analyzer=True,
            analyzer_params={"tokenizer": "standard", "filter": ["lowercase"]},
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_function(
            Function(
                name="terms_bm25",
                function_type=FunctionType.BM25,
                input_field_names=["terms"],
                output_field_names=["sparse"],
            )
        )
        index = client.prepare_index_params()
        index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25", params=BM25_PARAMS)
        # Exact search. Milvus Lite builds HNSW only with faiss-cpu installed, and its time goes to
        # its pure-Python BM25 anyway (docs/performance.md); a server deployment at millions of
        # chunks would want HNSW here, which could not be measured without a server.
        index.add_index("vector", index_type="FLAT", metric_type="COSINE")
        # Strong consistency: a search sees every write before it (Milvus's default is Bounded).
        client.create_collection(self.collection, schema=schema, consistency_level="Strong")
        # sync=False: indexes on an empty collection need no build wait (pymilvus otherwise
        # polls every 0.5 s per index).
        client.create_index(self.collection, index, sync=False)
        client.load_collection(self.collection)

    @property
    def _c(self) -> MilvusClient:
        if self._client is None:
            raise RuntimeError("the Milvus backend is closed")
        return self._client

    # -- writes ---------------------------------------------------------------------------

    def _row(self, record: IndexRecord) -> dict[str, Any]:
        vector = np.asarray(record.vector, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.dim:
            raise ValueError(
                f"index at {self.uri} holds {self.dim}-dim vectors; got {vector.shape[0]}-dim embeddings"
            )
        if len(record.chunk_id.encode("utf-8")) > ID_MAX_LENGTH:
            raise ValueError(f"chunk id longer than {ID_MAX_LENGTH} bytes: {record.chunk_id[:80]}…")
        return {
            "chunk_id": record.chunk_id,
            "doc_id": record.doc_id,
            "hierarchy_level": record.hierarchy_level,
            "year": None if record.year is None else int(record.year),
            "collection": record.collection,
            "doc_type": record.doc_type,
            "evidence_type": record.evidence_type or "",  # unlabelled: matches no type filter
            "topics": list(record.topics)[:TOPICS_MAX],
            "terms": _truncate_utf8(record.terms, TERMS_MAX_BYTES),
            "vector": vector.tolist(),
        }

    def add(self, records: Sequence[IndexRecord]) -> None:
        rows = list({r.chunk_id: self._row(r) for r in records}.values())  # last one wins
        for start in range(0, len(rows), self.batch_size):
            self._c.upsert(self.collection, rows[start : start + self.batch_size])
            self._unflushed = self._lite_path is not None

    def delete(self, doc_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(doc_ids))
        for start in range(0, len(ids), _IN_LIST_CHUNK):
            self._c.delete(
                self.collection,
                filter=filter_expr(Filters(levels=(), doc_ids=tuple(ids[start : start + _IN_LIST_CHUNK]))),
            )
            self._unflushed = self._lite_path is not None

    # -- reads ----------------------------------------------------------------------------

    def _search(self, data: Any, field: str, metric: str, k: int, filters: Filters) -> list[Hit]:
        if self._unflushed:
            self._c.flush(self.collection)
            self._unflushed = False
        result = self._c.search(
            self.collection,
            data=[data],
            anns_field=field,
            search_params={"metric_type": metric},
            limit=min(k, MAX_TOPK),
            filter=filter_expr(filters),
            output_fields=["chunk_id", "doc_id"],
        )
        hits = []
        for hit in result[0]:
            entity = hit["entity"]
            score = float(hit["distance"])
            hits.append(Hit(entity["chunk_id"], entity["doc_id"], abs(score) if metric == "BM25" else score))
        return _best_first(hits)

    def search_dense(self, vector: np.ndarray, k: int, filters: Filters) -> list[Hit]:
        if k <= 0:
            return []
        query = query_vector(vector, self.dim, self.uri)
        return self._search(query.tolist(), "vector", "COSINE", k, filters)

    def search_keyword(self, terms: str, k: int, filters: Filters) -> list[Hit]:
        if k <= 0 or not terms.strip():
            return []
        return self._search(terms, "sparse", "BM25", k, filters)

    def count(self) -> int:
        rows = self._c.query(self.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def chunk_ids(self, doc_id: str) -> set[str]:
        expr = f"doc_id == {string_literal(doc_id)}"
        rows = self._c.query(self.collection, filter=expr, output_fields=["chunk_id"], limit=MAX_TOPK)
        if len(rows) < MAX_TOPK:
            return {r["chunk_id"] for r in rows}
        ids: set[str] = set()
        iterator = self._c.query_iterator(
            self.collection, filter=expr, output_fields=["chunk_id"], batch_size=4096
        )
        try:
            while batch := iterator.next():
                ids.update(r["chunk_id"] for r in batch)
        finally:
            iterator.close()
        return ids

    def close(self) -> None:
        # getattr: close() also runs on an instance whose __init__ failed before the client existed.
        client = getattr(self, "_client", None)
        if client is not None:
            client.close()
            self._client = None
        if self._lite_path is not None:
            path, self._lite_path = self._lite_path, None
            _lite_release(path)


def open_milvus(settings: IndexOptions, dim: int | None, space: str) -> MilvusBackend:
    """The registered `milvus` backend: `settings.milvus_uri`, else Milvus Lite at
    `settings.home / "milvus.db"`; `settings.milvus_token` authenticates to a server."""
    uri = settings.milvus_uri or str(settings.home / "milvus.db")
    token = settings.milvus_token.get_secret_value() if settings.milvus_token else None
    return MilvusBackend(uri, dim, collection=space, token=token)
