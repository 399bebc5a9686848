"""Two handles on one LanceDB table, as the web app and an ingest in another process hold."""

from __future__ import annotations

from pathlib import Path

from evidenceqa.index.lancedb import FTS_INDEX, LanceDBBackend
from tests.index.corpus import DIM, RECORDS


def test_rows_another_handle_folded_in_first_are_folded_in_again_without_error(tmp_path: Path) -> None:
    writer = LanceDBBackend(tmp_path / "index", dim=DIM)
    writer.add(RECORDS)  # written, not yet folded into the indexes
    reader = LanceDBBackend(tmp_path / "index", dim=DIM)
    reader.close()  # folds them in first
    writer.close()  # its own fold-in was built on the older version: LanceDB reports a conflict
    again = LanceDBBackend(tmp_path / "index", dim=DIM)
    try:
        ids = {r.chunk_id for r in RECORDS}
        assert again.count() == len(ids)
        assert again._table.index_stats(FTS_INDEX).num_unindexed_rows == 0
    finally:
        again.close()


def test_a_long_lived_reader_finds_what_another_process_indexed_later(tmp_path: Path) -> None:
    # The web app keeps its handle open while `evidenceqa ingest` adds documents.
    first, later = RECORDS[:3], RECORDS[3:]
    writer = LanceDBBackend(tmp_path / "index", dim=DIM)
    writer.add(first)
    writer.close()
    reader = LanceDBBackend(tmp_path / "index", dim=DIM, refresh_seconds=0)
    try:
        before = reader.count()
        writer = LanceDBBackend(tmp_path / "index", dim=DIM)
        writer.add(later)
        writer.close()
        assert reader.count() == before + len({r.chunk_id for r in later})
        assert reader.chunk_ids(later[-1].doc_id) >= {later[-1].chunk_id}
    finally:
        reader.close()
