"""Two editions of a guideline and two of a patient leaflet, as a small real index, for the tests of
superseded guidance. Constructed (the shared library holds no document in two editions): the same
advice in the words each edition might use, the older guideline a slightly closer match to a
question in its words, so that only the supersession can put the newer one first."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evidenceqa.answer.engine import Engine
from tests.conftest import ingested_engine

TITLE = "Surgical site infections: prevention and treatment"
ROWS = [
    {"doc_id": "cg74", "title": TITLE, "year": 2008, "journal": "NICE guideline", "evidence_type": "guideline",
     "sections": [{"heading": "Recommendations", "paragraphs": [
         "Do not use hair removal routinely before surgery to reduce surgical site infection. If hair has "
         "to be removed, use electric clippers with a single-use head on the day of surgery."]}]},
    {"doc_id": "ng125", "title": f"{TITLE} (2019 update)", "year": 2019, "journal": "NICE guideline",
     "evidence_type": "guideline", "sections": [{"heading": "Recommendations", "paragraphs": [
         "Hair should not be removed routinely before an operation. Where it must be, clip it with "
         "single-use electric clippers on the day of the operation; never shave."]}]},
    {"doc_id": "leaflet-2012", "title": "Your operation: what to expect", "year": 2012,
     "journal": "Hospital patient leaflets", "evidence_type": "patient-information", "supersedes": [],
     "sections": [{"heading": "Before", "paragraphs": ["Please do not shave the area yourself before surgery."]}]},
    {"doc_id": "leaflet-2024", "title": "Having an operation", "year": 2024, "journal": "Hospital patient leaflets",
     "evidence_type": "patient-information", "supersedes": ["leaflet-2012"],
     "sections": [{"heading": "Before", "paragraphs": ["Do not shave or wax near the operation site."]}]},
]  # fmt: skip


@contextmanager
def editions_engine(home: Path, models_dir: Path) -> Iterator[Engine]:
    source = home / "editions.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    with ingested_engine(home, source, models_dir) as engine:
        yield engine
