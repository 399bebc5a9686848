"""Shared fixtures. The shared data folder is read in place; without it tests skip, except under CI."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from tests.skips import unavailable

if TYPE_CHECKING:  # the redis extra: imported by the fixtures that start a server
    from tests.store.redis_server import RedisServer

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("EVIDENCEQA_SHARED_DATA", REPO.parent / "shared" / "data"))
SAMPLE = REPO / "data" / "sample"


def _require(path: Path) -> Path:
    if not path.exists():
        unavailable(f"shared data not found at {path} (set EVIDENCEQA_SHARED_DATA)")
    return path


@pytest.fixture(scope="session")
def shared_data() -> Path:
    return _require(SHARED_DATA)


@pytest.fixture(scope="session")
def formats_dir(shared_data: Path) -> Path:
    return _require(shared_data / "formats")


@pytest.fixture(scope="session")
def library_dir(shared_data: Path) -> Path:
    return _require(shared_data / "library")


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder of derived models (the MiniLM ONNX export) for every data home in the session."""
    return tmp_path_factory.mktemp("models")


def write_library(path: Path, docs: list[tuple[str, int | None, str]]) -> Path:
    """A library JSONL of one-paragraph documents: (doc_id, year, text) → "Study <doc_id>"."""
    rows = [
        {
            "doc_id": d,
            "title": f"Study {d}",
            "year": y,
            "sections": [{"heading": "Results", "paragraphs": [t]}],
        }
        for d, y, t in docs
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@contextmanager
def indexed_engine(home: Path, docs: list[tuple[str, int | None, str]], models_dir: Path) -> Iterator[Engine]:
    """A data home holding `docs` (as `write_library` writes them), ingested and indexed, opened."""
    with ingested_engine(home, write_library(home / "lib.jsonl", docs), models_dir) as engine:
        yield engine


@contextmanager
def ingested_engine(home: Path, source: Path, models_dir: Path) -> Iterator[Engine]:
    """A data home holding the library file `source`, ingested and indexed, opened."""
    with Engine.open(Settings(home=home / "data", models_dir=models_dir)) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(source)
        engine.sync()
        yield engine


# Fixtures that start a service (PostgreSQL, Redis, Milvus Lite), a browser or a server process, or
# load the embedding model: a test that needs one, directly or through another fixture, is
# `integration`, and so is a test run against PostgreSQL or Milvus by its parameters, and every test
# of a module that drives the CLI in a subprocess. The rest is `make test-fast`, the edit loop's tier.
HEAVY_PARAMETERS = frozenset({"postgresql", "milvus"})
HEAVY_FIXTURES = frozenset({"models_dir", "postgres", "redis_server", "own_redis_server", "redis_url",
                            "populated_all", "opener", "onnx_home", "st_embedder", "browser", "served"})  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        runs_cli = (
            module is not None
            and getattr(getattr(module, "run", None), "__module__", "") == "tests.cli.test_cli"
        )
        callspec = getattr(item, "callspec", None)
        parameters = {v for v in callspec.params.values() if isinstance(v, str)} if callspec else set()
        if (
            runs_cli
            or HEAVY_PARAMETERS & parameters
            or HEAVY_FIXTURES & set(getattr(item, "fixturenames", ()))
        ):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A redis-server for a test module (Debian's redis-server; skipped without it, except under CI)."""
    from tests.store.redis_server import RedisServer, redis_binary

    server = RedisServer(redis_binary(), tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The module's server, emptied: each test sees only its own keys."""
    redis_server.flush()
    return redis_server.url


@pytest.fixture
def own_redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of the test's own, for tests that stop it."""
    from tests.store.redis_server import RedisServer, redis_binary

    server = RedisServer(redis_binary(), tmp_path)
    server.start()
    yield server
    server.stop()
