"""A LanceDB table written before a filter field existed keeps working and gains the field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import lancedb
import pyarrow as pa

from evidenceqa.index.base import Filters
from evidenceqa.index.lancedb import LanceDBBackend, schema
from tests.index.corpus import DIM, RECORDS


def test_a_table_from_before_evidence_types_gains_the_column_and_keeps_its_rows(tmp_path: Path) -> None:
    records = [r for r in RECORDS if r.hierarchy_level != "document"][:4]
    scratch = LanceDBBackend(tmp_path / "scratch", dim=DIM)
    rows = scratch._arrow(records).drop_columns(["evidence_type"])  # as the old release wrote them
    scratch.close()
    old = pa.schema([f for f in schema(DIM) if f.name != "evidence_type"])
    lancedb.connect(str(tmp_path / "index")).create_table("chunks", data=rows, schema=old)
    backend = LanceDBBackend(tmp_path / "index", dim=DIM)
    try:
        assert "evidence_type" in backend._table.schema.names and backend.count() == 4
        guidelines = Filters(evidence_types=("guideline",))
        assert backend.search_dense(records[0].vector, 10, guidelines) == []
        assert len(backend.search_dense(records[0].vector, 10, Filters())) == 4
        backend.add([replace(records[0], evidence_type="guideline")])  # what the re-labelling re-indexes
        found = backend.search_dense(records[0].vector, 10, guidelines)
        assert [h.chunk_id for h in found] == [records[0].chunk_id]
    finally:
        backend.close()
