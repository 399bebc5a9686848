"""A small real home for mapping: real MedQuAD and PLOS files, plus the library's own pages on the
same conditions (other documents that answer the same questions). The storage fixtures of
tests/store (SQLite and a real PostgreSQL) for the review decisions."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.documents import Document
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders import load
from evidenceqa.settings import Settings
from tests.store.conftest import (  # noqa: F401 — fixtures, found by name
    backend,
    cheap_hashing,
    clock,
    postgres,
    shared_postgres_url,
    store,
)

DVT_PAGE = "medquad_xml/8_NHLBI_QA_XML/0000051.xml"  # NHLBI: Deep Vein Thrombosis, 7 questions
TB_PAGE = "medquad_xml/9_CDC_QA/0000399.xml"  # CDC: Tuberculosis
MDR_TB = "jats_xml/allofplos/journal.pmed.1001300.xml"  # PLOS Medicine, with an Editors' Summary
# MedlinePlus pages in the library JSONL on the same conditions: they answer the same questions.
LIBRARY_PAGES = ("medquad-4_0000256", "medquad-4_0000918", "medquad-4_0000326")  # DVT, TB, endocarditis
FILES = (DVT_PAGE, TB_PAGE, MDR_TB)


def load_one(path: Path) -> Document:
    (doc,) = [d for d in load(path) if isinstance(d, Document)]
    return doc


@pytest.fixture(scope="session")
def library_pages(library_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The chosen pages of the shared library's MedQuAD file, as a library JSONL of their own."""
    target = tmp_path_factory.mktemp("pages") / "medlineplus.jsonl"
    with gzip.open(library_dir / "medquad_nih.jsonl.gz", "rt", encoding="utf-8") as stream:
        rows = [line for line in stream if json.loads(line)["doc_id"] in LIBRARY_PAGES]
    assert len(rows) == len(LIBRARY_PAGES)
    target.write_text("".join(rows), encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def home_settings(
    formats_dir: Path, library_pages: Path, models_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Settings:
    """A data home holding FILES and the library pages, ingested and indexed (then closed)."""
    settings = Settings(home=tmp_path_factory.mktemp("builder") / "home", models_dir=models_dir)
    with Engine.open(settings) as engine:
        ingestor = Ingestor(engine.catalogue, ChunkingConfig())
        for path in [*(formats_dir / f for f in FILES), library_pages]:
            assert ingestor.ingest_file(path).status == "ingested"
        engine.sync()
    return settings


@pytest.fixture(scope="session")
def engine(home_settings: Settings) -> Iterator[Engine]:
    with Engine.open(home_settings) as opened:
        yield opened
