"""Decisions applied: the validated benchmark rows in the shared format."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from evidenceqa.bench.retrieval import read_questions
from evidenceqa.curation.candidates import Decision
from evidenceqa.curation.review import benchmark_row, progress, validated_rows, write_benchmark
from tests.curation.samples import sample_candidates

AT = datetime(2025, 5, 2, 10, 30, tzinfo=UTC)


def test_an_accepted_pair_is_the_proposal_with_who_and_when() -> None:
    chg = sample_candidates()[0]
    row = benchmark_row(chg, Decision(chg.candidate_id, "accept", "reed@example.org", AT))
    assert row["question"] == "Is chlorhexidine safe on mucous membranes?"
    assert row["gold_doc_ids"] == ["chg", "shave"]
    assert row["gold_passages"] == ["Chlorhexidine gluconate should not be used on mucous membranes.",
                                    "Passage of shave."]  # fmt: skip
    assert row["answers"] == [chg.answer]
    meta = row["meta"]
    assert (meta["question_type"], meta["expected_precision"], meta["year"], meta["topic"]) == (
        "clinical safety", "critical", 2015, "wound care")  # fmt: skip
    assert meta["source_location"] == {"file": "/data/chg.xml", "section_path": ["Results", chg.question],
                                       "paragraph_index": 0}  # fmt: skip
    assert (meta["reviewer"], meta["reviewed_at"], meta["decision"]) == (
        "reed@example.org", "2025-05-02T10:30:00+00:00", "accept")  # fmt: skip
    assert meta["confidence"] == {"chg": 1.0, "shave": 0.7}


def test_an_edit_replaces_what_it_names_and_keeps_the_rest() -> None:
    chg = sample_candidates()[0]
    edit = Decision(chg.candidate_id, "edit", "reed", AT, question="Can chlorhexidine touch mucosa?",
                    gold_doc_ids=["chg", "guideline-7"], question_type="factual")  # fmt: skip
    row = benchmark_row(chg, edit)
    assert row["question"] == "Can chlorhexidine touch mucosa?" and row["answers"] == [chg.answer]
    # A document the reviewer added has no passage: it counts at the document level only.
    assert row["gold_doc_ids"] == ["chg", "guideline-7"]
    assert row["gold_passages"] == ["Chlorhexidine gluconate should not be used on mucous membranes."]
    # A new type without a precision named takes the new type's expected precision.
    assert (row["meta"]["question_type"], row["meta"]["expected_precision"]) == ("factual", "high")


def test_only_accepted_and_edited_pairs_are_written(tmp_path: Path) -> None:
    proposals = sample_candidates()
    decisions = {
        proposals[0].candidate_id: Decision(proposals[0].candidate_id, "accept", "reed", AT),
        proposals[1].candidate_id: Decision(proposals[1].candidate_id, "reject", "reed", AT),
    }
    rows = list(validated_rows(proposals, decisions))  # the third pair has no decision: left out
    assert [r["query_id"] for r in rows] == [proposals[0].candidate_id]
    done = progress(proposals, decisions)
    assert (done.candidates, done.reviewed, done.validated, done.rejected) == (3, 2, 1, 1)
    write_benchmark(tmp_path / "b.jsonl", rows)
    (question,) = read_questions(tmp_path / "b.jsonl")
    assert question.gold_doc_ids == ["chg", "shave"] and question.meta["question_type"] == "clinical safety"
