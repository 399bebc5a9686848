"""open_backend: settings pick the backend and where its data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from evidenceqa.index import open_backend
from evidenceqa.index.base import Filters, SearchBackend
from evidenceqa.settings import Settings
from tests.index.corpus import DIM, RECORDS


@pytest.mark.parametrize("name", ["lancedb", "milvus"])
def test_open_backend(tmp_path: Path, name: str) -> None:
    settings = Settings(home=tmp_path, backend=name, milvus_uri=None, milvus_token=None)
    with pytest.raises(FileNotFoundError):
        open_backend(name, settings)  # nothing built yet, and no dimension to build with
    backend = open_backend(None, settings, DIM)
    try:
        assert isinstance(backend, SearchBackend)
        assert backend.name == name
        backend.add(RECORDS[:5])
        assert backend.count() == 5
    finally:
        backend.close()
    expected = settings.index_path if name == "lancedb" else tmp_path / "milvus.db"
    assert expected.exists()
    reopened = open_backend(name, settings)
    try:
        assert reopened.count() == 5
        assert reopened.search_dense(RECORDS[1].vector, 1, Filters())[0].chunk_id == RECORDS[1].chunk_id
    finally:
        reopened.close()


def test_unknown_backend(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown backend 'faiss'; choose from: lancedb, milvus"):
        open_backend("faiss", Settings(home=tmp_path), DIM)
