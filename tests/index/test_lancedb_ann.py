"""LanceDB's approximate vector index: built once the table is large enough, retrained once it has
doubled, and close to exact search (the scale figures are in docs/performance.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evidenceqa.index.base import Filters, IndexRecord
from evidenceqa.index.lancedb import AnnParams, LanceDBBackend

DIM = 16
ANN = AnnParams(min_rows=600, partition_rows=150, nprobes=4, ef=100, refine_factor=2)


def clustered(count: int, start: int = 0, seed: int = 7) -> list[IndexRecord]:
    """Unit vectors around 8 centres, as embeddings of a few topics would be."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, DIM))
    vectors = centres[rng.integers(0, 8, count)] + 0.3 * rng.normal(size=(count, DIM))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        IndexRecord(
            f"c{i}",
            f"d{i // 4}",
            "paragraph",
            2000 + i % 20,
            "c",
            "article",
            [],
            f"term{i % 50}",
            vectors[i - start].astype(np.float32),
        )
        for i in range(start, start + count)
    ]


def vector_indexes(backend: LanceDBBackend) -> list[str]:
    return [ix.name for ix in backend._table.list_indices() if ix.name.startswith("vector")]


def test_small_tables_are_searched_exactly(tmp_path: Path) -> None:
    backend = LanceDBBackend(tmp_path / "lance", DIM, ann=ANN)
    backend.add(clustered(500))
    backend.search_keyword("term1", 1, Filters())  # folds the writes in
    assert vector_indexes(backend) == []


def test_index_is_built_at_the_threshold_and_retrained_when_doubled(tmp_path: Path) -> None:
    backend = LanceDBBackend(tmp_path / "lance", DIM, ann=ANN)
    backend.add(clustered(700))
    backend.close()
    backend = LanceDBBackend(tmp_path / "lance", DIM, ann=ANN)
    assert vector_indexes(backend) == ["vector_ann_700"]
    backend.add(clustered(300, start=700, seed=8))  # 1,000 rows: not yet double
    backend.search_keyword("term1", 1, Filters())
    assert vector_indexes(backend) == ["vector_ann_700"]
    backend.add(clustered(500, start=1000, seed=9))  # 1,500 rows: retrained on all of them
    backend.search_keyword("term1", 1, Filters())
    assert vector_indexes(backend) == ["vector_ann_1500"]


def test_approximate_search_agrees_with_exact_search(tmp_path: Path) -> None:
    backend = LanceDBBackend(tmp_path / "lance", DIM, ann=ANN)
    records = clustered(1200)
    backend.add(records)
    backend.search_keyword("term1", 1, Filters())
    assert vector_indexes(backend)
    overlap = []
    for record in records[:40]:
        approximate = {h.chunk_id for h in backend.search_dense(record.vector, 10, Filters())}
        exact = backend.search_dense(record.vector, 10, Filters(), exact=True)
        assert exact[0].chunk_id == record.chunk_id  # brute force finds the vector itself first
        overlap.append(len(approximate & {h.chunk_id for h in exact}) / 10)
    assert np.mean(overlap) >= 0.9
    filtered = backend.search_dense(records[0].vector, 10, Filters(year_min=2015))
    assert filtered and all(int(h.chunk_id[1:]) % 20 >= 15 for h in filtered)  # the filter holds
