"""The index follows the catalogue: add, change, remove, interrupted syncs — on both backends."""

import threading
from pathlib import Path

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.index.base import Filters
from evidenceqa.library.ingest import Ingestor
from evidenceqa.settings import Settings
from tests.conftest import write_library

DOCS = [
    ("shave", 2007, "Shaving the incision site before spinal surgery increased postoperative infection."),
    ("masks", 2020, "Surgical masks reduce droplet transmission in the operating room."),
    ("chg", 2015, "Chlorhexidine gluconate should not be used on mucous membranes such as the eyes."),
    ("hands", 1999, "Alcohol hand rub before surgery is as effective as surgical scrubbing."),
]


@pytest.fixture(params=["lancedb", "milvus"])
def engine(request, tmp_path, models_dir):
    settings = Settings(home=tmp_path / "home", models_dir=models_dir, backend=request.param)
    with Engine.open(settings) as opened:
        yield opened


def _ingest(engine: Engine, path: Path) -> None:
    Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(path)


def _top_doc(engine: Engine, question: str, **kwargs) -> list[str]:
    return [r.chunk.doc_id for r in engine.retriever().search(question, k=3, **kwargs).results]


def test_sync_indexes_everything_once(engine, tmp_path):
    _ingest(engine, write_library(tmp_path / "lib.jsonl", DOCS))
    assert not engine.is_current() and engine.pending() == 8
    report = engine.sync()
    assert (report.documents_added, report.chunks_added) == (4, 8)
    assert engine.is_current() and engine.backend.count() == 8
    assert engine.sync().chunks_added == 0
    assert _top_doc(engine, "Can chlorhexidine be used on mucous membranes?")[0] == "chg"


def test_changed_and_removed_documents_follow_the_catalogue(engine, tmp_path):
    source = write_library(tmp_path / "lib.jsonl", DOCS)
    _ingest(engine, source)
    engine.sync()
    write_library(
        source, [*DOCS[1:3], ("shave", 2007, "Clipping hair instead of shaving avoids skin nicks.")]
    )
    _ingest(engine, source)
    report = engine.sync()
    assert (report.documents_added, report.documents_deleted) == (1, 1)
    assert "hands" not in _top_doc(engine, "alcohol hand rub surgical scrubbing")
    assert engine.backend.chunk_ids("hands") == set()
    assert _top_doc(engine, "clipping hair skin nicks")[0] == "shave"
    assert engine.backend.count() == 6


def test_an_interrupted_sync_is_completed_by_the_next(engine, tmp_path):
    _ingest(engine, write_library(tmp_path / "lib.jsonl", DOCS))

    def crash(_n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine.sync(crash)
    assert not engine.is_current()
    engine.sync()
    assert engine.is_current() and engine.backend.count() == 8


def test_two_syncs_at_once_index_each_chunk_once(tmp_path, models_dir):
    # `evidenceqa index` run while an ingest is still indexing the same home: the second sync
    # waits for the first instead of adding every pending chunk a second time.
    settings = Settings(home=tmp_path / "home", models_dir=models_dir)
    with Engine.open(settings) as first:
        _ingest(first, write_library(tmp_path / "lib.jsonl", DOCS))
        second_added = threading.Event()
        reports = {}

        def run_second() -> None:  # its own connections, as another process has
            with Engine.open(settings) as second:
                reports["second"] = second.sync(lambda _n: second_added.set())

        other = threading.Thread(target=run_second)

        def midway(_n: int) -> None:  # the first has written its chunks, not yet its version
            other.start()
            second_added.wait(timeout=3)

        reports["first"] = first.sync(midway)
        other.join(timeout=60)
        assert reports["first"].chunks_added == 8 and reports["second"].chunks_added == 0
        assert first.backend.count() == 8


def test_year_filters_and_overview_level_through_the_retriever(engine, tmp_path):
    _ingest(engine, write_library(tmp_path / "lib.jsonl", DOCS))
    engine.sync()
    response = engine.retriever().search("infection prevention in surgery since 2010", k=10)
    assert response.filters == {"year_min": 2010}
    assert {r.chunk.doc_id for r in response.results} == {"masks", "chg"}
    assert all(r.chunk.hierarchy_level != "document" for r in response.results)
    overviews = engine.retriever().search("surgery", k=10, level="document")
    assert {r.chunk.hierarchy_level for r in overviews.results} == {"document"}
    excluded = engine.retriever().search("surgery", k=10, filters=Filters(exclude_doc_ids=("masks",)))
    assert "masks" not in {r.chunk.doc_id for r in excluded.results}
