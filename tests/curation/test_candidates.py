"""Candidate files: JSONL round trip, the reviewers' CSV out and their decisions back in."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evidenceqa.curation.candidates import (
    Decision,
    candidate_id,
    read_candidates,
    read_decisions_csv,
    split_ids,
    write_candidates,
    write_csv,
)
from tests.curation.samples import sample_candidates

NOW = datetime(2025, 5, 2, 10, 30, tzinfo=UTC)


def test_jsonl_round_trip(tmp_path: Path) -> None:
    proposals = sample_candidates()
    assert write_candidates(tmp_path / "c.jsonl", proposals) == 3
    assert read_candidates(tmp_path / "c.jsonl") == proposals


def test_a_bad_row_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_candidates(path, sample_candidates()[:1])
    path.write_text(path.read_text() + '{"question": "no id"}\n')
    with pytest.raises(ValueError, match=r"c\.jsonl:2: not a candidate row"):
        read_candidates(path)


def test_candidate_ids_are_stable_and_ignore_case_and_spacing() -> None:
    assert candidate_id("doc", "What is DVT?") == candidate_id("doc", "what is  dvt?")
    assert candidate_id("doc", "What is DVT?") != candidate_id("other", "What is DVT?")


def _fill(path: Path, decisions: dict[int, dict[str, str]]) -> None:
    """What an expert does in a spreadsheet: fill in decision columns of some rows."""
    with path.open(encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    for index, values in decisions.items():
        rows[index].update(values)
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_csv_out_and_decisions_back(tmp_path: Path) -> None:
    proposals = sample_candidates()
    path = tmp_path / "review.csv"
    assert write_csv(path, proposals) == 3
    with path.open(encoding="utf-8", newline="") as stream:
        first = next(csv.DictReader(stream))
    assert first["proposed_gold_doc_ids"] == "chg (source 1.00); shave (answers 0.70)"
    assert (first["question_type"], first["expected_precision"], first["decision"]) == (
        "clinical safety",
        "critical",
        "",
    )
    _fill(path, {
        0: {"decision": "Accept", "reviewer": "Dr Reed"},
        1: {"decision": "edit", "reviewer": "Dr Reed", "edited_question": "Does shaving raise infection rates?",
            "edited_gold_doc_ids": "shave; chg", "edited_question_type": "clinical safety",
            "reviewed_at": "2025-05-01T08:00:00"},
    })  # fmt: skip
    accepted, edited = read_decisions_csv(path, now=NOW)
    assert accepted == Decision(proposals[0].candidate_id, "accept", "Dr Reed", NOW)
    assert edited.question == "Does shaving raise infection rates?" and edited.gold_doc_ids == [
        "shave",
        "chg",
    ]
    assert edited.question_type == "clinical safety" and edited.answer is None  # blank keeps the proposal
    assert edited.reviewed_at == datetime(2025, 5, 1, 8, 0, tzinfo=UTC)  # no zone given: UTC


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"decision": "maybe", "reviewer": "Dr Reed"}, "decision must be one of accept, edit, reject"),
        ({"decision": "accept"}, "a decision needs the reviewer's name"),
        (
            {"decision": "edit", "reviewer": "R", "edited_question_type": "trivia"},
            "question type must be one of",
        ),
    ],
)
def test_a_wrong_decision_names_its_line(tmp_path: Path, values: dict[str, str], message: str) -> None:
    path = tmp_path / "review.csv"
    write_csv(path, sample_candidates())
    _fill(path, {1: values})
    with pytest.raises(ValueError, match=rf"review\.csv:3: {message}"):
        read_decisions_csv(path)


def test_cells_a_spreadsheet_would_run_as_formulas_are_defused(tmp_path: Path) -> None:
    proposals = sample_candidates()[:1]
    proposals[0].answer = '=HYPERLINK("http://evil")'
    path = tmp_path / "review.csv"
    write_csv(path, proposals)
    with path.open(encoding="utf-8", newline="") as stream:
        row = next(csv.DictReader(stream))
    assert row["answer"] == '\'=HYPERLINK("http://evil")'
    _fill(path, {0: {"decision": "edit", "reviewer": "R", "edited_answer": "'-2 days is the usual course"}})
    assert read_decisions_csv(path)[0].answer == "-2 days is the usual course"


def test_split_ids_keeps_a_semicolon_inside_a_doi() -> None:
    assert split_ids("doi:10.1002/(sici)1097-0258(199601)15:1<1::aid-sim>3.0.co;2-0; chg\nshave chg") == [
        "doi:10.1002/(sici)1097-0258(199601)15:1<1::aid-sim>3.0.co;2-0", "chg", "shave",
    ]  # fmt: skip
