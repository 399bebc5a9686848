"""Fixtures for the backend contract suite: every test runs against each search backend."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evidenceqa.index.base import SearchBackend
from tests.index.corpus import DIM, RECORDS

BACKENDS = ("lancedb", "milvus")

Opener = Callable[..., SearchBackend]


def open_backend_at(name: str, location: Path, dim: int | None = DIM) -> SearchBackend:
    """A backend whose data lives under `location` (a LanceDB folder or a Milvus Lite .db)."""
    if name == "lancedb":
        from evidenceqa.index.lancedb import LanceDBBackend

        return LanceDBBackend(location / "lance", dim)
    from evidenceqa.index.milvus import MilvusBackend

    return MilvusBackend(str(location / "milvus.db"), dim)


@pytest.fixture(scope="session")
def populated_all(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, SearchBackend]]:
    """One backend of each kind holding the whole corpus, shared by the read-only tests."""
    backends: dict[str, SearchBackend] = {}
    try:
        for name in BACKENDS:
            backend = open_backend_at(name, tmp_path_factory.mktemp(f"populated-{name}"))
            backends[name] = backend
            backend.add(RECORDS)
        yield backends
    finally:
        for backend in backends.values():
            backend.close()


@pytest.fixture(params=BACKENDS)
def backend_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def populated(populated_all: dict[str, SearchBackend], backend_name: str) -> SearchBackend:
    """Read-only: the shared backend holding the corpus. Tests must not write to it."""
    return populated_all[backend_name]


@pytest.fixture
def opener(backend_name: str, tmp_path: Path) -> Iterator[Opener]:
    """Opens backends of this kind at this test's own location; closes what it opened."""
    opened: list[SearchBackend] = []

    def open_(dim: int | None = DIM) -> SearchBackend:
        backend = open_backend_at(backend_name, tmp_path, dim)
        opened.append(backend)
        return backend

    yield open_
    for backend in opened:
        backend.close()


@pytest.fixture
def fresh(opener: Opener) -> SearchBackend:
    """A backend of its own, loaded with the corpus, free to change."""
    backend = opener()
    backend.add(RECORDS)
    return backend
