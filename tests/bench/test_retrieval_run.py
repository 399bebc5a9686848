"""The retrieval benchmark leaves unanswerable rows (clinician-dev's) out of its scores."""

from __future__ import annotations

from pathlib import Path

from evidenceqa.bench.retrieval import Question, run
from tests.conftest import indexed_engine

DOCS = [("a", 2020, "Chlorhexidine gluconate must not be used on mucous membranes."),
        ("b", 2021, "Clipping hair lowers surgical site infection.")]  # fmt: skip


def test_unanswerable_questions_are_not_scored_as_misses(tmp_path: Path, models_dir: Path) -> None:
    answerable = Question("1", "chlorhexidine mucous membranes", ["a"], [], {})
    unanswerable = Question("2", "operating room humidity targets", [], [], {"answerable": False})
    assert answerable.answerable and not unanswerable.answerable
    with indexed_engine(tmp_path, DOCS, models_dir) as engine:
        result = run(engine.retriever(), [answerable, unanswerable], "hybrid")
    assert [row["query_id"] for row in result.per_query] == ["1"]
    assert result.metrics["document"]["MRR@10"] == 1.0
