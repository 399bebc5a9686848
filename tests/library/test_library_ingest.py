"""The whole shared library, as issue 2 asks: 6,568 medical documents plus 2,600 general passages."""

import pytest

from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.catalogue import Catalogue
from evidenceqa.library.ingest import Ingestor

pytestmark = pytest.mark.slow


def test_whole_library_ingests_once_and_then_does_no_work(library_dir, tmp_path):
    files = sorted(library_dir.glob("*.jsonl*"))
    with Catalogue(tmp_path / "catalogue.sqlite3") as catalogue:
        ingestor = Ingestor(catalogue, ChunkingConfig())
        reports = [ingestor.ingest_file(path) for path in files]
        assert [r.errors for r in reports] == [[], [], [], []]
        counts = {name: docs for name, docs, *_ in catalogue.summary()}
        assert counts == {"covidqa": 82, "medquad": 5486, "nq-wikipedia": 2600, "pubmedqa": 1000}
        # MedQuAD reuses two page ids for different pages; each page is kept under a derived id.
        assert sum(len(r.warnings) for r in reports) == 10
        version = catalogue.index_version
        again = [ingestor.ingest_file(path) for path in files]
        assert {r.status for r in again} == {"unchanged"}
        assert catalogue.index_version == version
        overview = [c for c in catalogue.chunks() if c.hierarchy_level == "document"]
        assert len(overview) == 9168
