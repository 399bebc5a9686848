"""Reviewed candidates → the validated benchmark, in the shared benchmark format.

Only accepted and edited pairs go in; a pair without a decision is not validated and stays out. An
edit replaces what it names (question, answer, gold documents, question type, precision, topic) and
keeps the rest of the proposal. Gold passages are the proposal's passages of the gold documents
kept; a document a reviewer added has none, so it counts at the document level only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidenceqa.curation.candidates import Candidate, Decision
from evidenceqa.curation.metadata import EXPECTED_PRECISION


@dataclass(frozen=True)
class Progress:
    candidates: int
    accepted: int
    edited: int
    rejected: int

    @property
    def reviewed(self) -> int:
        return self.accepted + self.edited + self.rejected

    @property
    def validated(self) -> int:
        return self.accepted + self.edited


def progress(candidates: list[Candidate], decisions: dict[str, Decision]) -> Progress:
    verdicts = [decisions[c.candidate_id].decision for c in candidates if c.candidate_id in decisions]
    return Progress(
        len(candidates), verdicts.count("accept"), verdicts.count("edit"), verdicts.count("reject")
    )


def benchmark_row(candidate: Candidate, decision: Decision) -> dict[str, Any] | None:
    """The shared format's row for a validated pair; None for a rejected one."""
    if decision.decision == "reject":
        return None
    edit = decision if decision.decision == "edit" else None
    meta = candidate.metadata
    question_type = (edit and edit.question_type) or meta.question_type
    # A reviewer who changes the type without naming a precision gets the new type's expected one.
    precision = (edit and edit.expected_precision) or (
        EXPECTED_PRECISION[question_type] if question_type != meta.question_type else meta.expected_precision
    )
    gold = edit.gold_doc_ids if edit and edit.gold_doc_ids is not None else candidate.gold_doc_ids
    return {
        "query_id": candidate.candidate_id,
        "question": (edit and edit.question) or candidate.question,
        "gold_doc_ids": gold,
        "gold_passages": candidate.passages_of(gold),
        "answers": [(edit and edit.answer) or candidate.answer],
        "meta": {
            "collection": meta.collection,
            "question_type": question_type,
            "expected_precision": precision,
            "year": meta.year,
            "topic": (edit and edit.topic) or meta.topic,
            "pattern": candidate.pattern,
            "source_doc_id": candidate.doc_id,
            "source_location": {
                "file": candidate.location.file,
                "section_path": candidate.location.section_path,
                "paragraph_index": candidate.location.paragraph_index,
            },
            "confidence": {s.doc_id: s.confidence for s in candidate.sources if s.doc_id in gold},
            "decision": decision.decision,
            "reviewer": decision.reviewer,
            "reviewed_at": decision.reviewed_at.isoformat(),
            "comment": decision.comment,
        },
    }


def validated_rows(
    candidates: Iterable[Candidate], decisions: dict[str, Decision]
) -> Iterator[dict[str, Any]]:
    """The benchmark rows of the accepted and edited pairs, in the candidates' order."""
    for candidate in candidates:
        decision = decisions.get(candidate.candidate_id)
        if decision is not None and (row := benchmark_row(candidate, decision)) is not None:
            yield row


def write_benchmark(path: Path, rows: list[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_jsonl(rows), encoding="utf-8")
    return len(rows)


def to_jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
