"""The table questions (benchmarks/tables/questions-dev.jsonl) are answerable only from a table: each
gold passage is a row of a table chunk of its gold document in the shared format files."""

from __future__ import annotations

from pathlib import Path

from evidenceqa.bench.retrieval import read_questions
from evidenceqa.chunking import ChunkingConfig, chunk_document
from evidenceqa.loaders import LoadError, load

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "tables" / "questions-dev.jsonl"


def test_each_gold_passage_is_a_row_of_a_table_chunk_of_its_document(formats_dir: Path) -> None:
    questions = read_questions(QUESTIONS)
    wanted = {doc for q in questions for doc in q.gold_doc_ids}
    tables: dict[str, list[str]] = {}
    for path in sorted(formats_dir.rglob("*")):
        if path.suffix not in {".xml", ".nxml"}:
            continue
        for doc in load(path):
            if not isinstance(doc, LoadError) and doc.doc_id in wanted:
                chunks = chunk_document(doc, ChunkingConfig())
                tables[doc.doc_id] = [c.body for c in chunks if c.body.startswith("Table ")]
    assert len(questions) >= 10 and set(tables) == wanted
    for q in questions:
        (doc,) = q.gold_doc_ids
        (row,) = q.gold_passages
        holding = [body for body in tables[doc] if row in body]
        assert holding, (q.query_id, row)
        assert all(line.startswith("|") for body in holding for line in body.splitlines() if row in line)
