"""A candidate question–answer pair for the benchmark, the reviewer's decision on it, and their files.

Candidates travel as JSONL (one `Candidate.to_dict()` per line, what `benchmark build` writes and
`benchmark review` loads) and as CSV for experts who review offline in a spreadsheet: the CSV has the
proposal's columns and empty decision columns; `read_decisions_csv` reads back the filled-in rows.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evidenceqa.curation.metadata import PRECISIONS, QUESTION_TYPES, Metadata
from evidenceqa.jsonl import read_rows

DECISIONS = ("accept", "edit", "reject")
# How each pattern found its pair (docs/builder.md describes each one).
PATTERNS = ("question-heading", "summary", "box", "question-title", "qa-text", "medquad", "medquad-qtype")


@dataclass(frozen=True)
class Location:
    """Where in the source document the pair sits. `section_index` counts sections in reading order
    (Document.walk), so two sections with the same heading stay apart; None for the title."""

    section_path: list[str]
    section_index: int | None
    paragraph_index: int | None
    file: str | None = None

    def describe(self) -> str:
        where = " > ".join(self.section_path) or "title"
        return where if self.paragraph_index in (None, 0) else f"{where} ¶{self.paragraph_index + 1}"


@dataclass(frozen=True)
class Source:
    """A library document the question is answered by, with how it was found and how sure that is."""

    doc_id: str
    relation: str  # source: the pair's own document · cited: named in the answer · answers: found by search
    confidence: float  # 0–1
    title: str | None = None
    passage: str | None = None  # a sentence of a library chunk that holds the answer (exact text)
    section: str | None = None  # the chunk's section path, for the reviewer
    in_library: bool | None = True  # None: built without a library to check


@dataclass
class Candidate:
    candidate_id: str
    question: str
    answer: str
    doc_id: str
    title: str | None
    pattern: str
    location: Location
    metadata: Metadata
    sources: list[Source] = field(default_factory=list)

    @property
    def gold_doc_ids(self) -> list[str]:
        return [s.doc_id for s in self.sources]

    def passages_of(self, doc_ids: Iterable[str]) -> list[str]:
        wanted = set(doc_ids)
        return [s.passage for s in self.sources if s.doc_id in wanted and s.passage]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        return cls(
            candidate_id=data["candidate_id"],
            question=data["question"],
            answer=data["answer"],
            doc_id=data["doc_id"],
            title=data.get("title"),
            pattern=data["pattern"],
            location=Location(**data["location"]),
            metadata=Metadata(**data["metadata"]),
            sources=[Source(**s) for s in data.get("sources") or []],
        )


def candidate_id(doc_id: str, question: str) -> str:
    """Stable across runs: the same question of the same document keeps its id (and its decisions)."""
    key = f"{doc_id}\n{' '.join(question.lower().split())}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Decision:
    """A reviewer's verdict. On `edit`, a field left None keeps the proposal's value."""

    candidate_id: str
    decision: str  # accept | edit | reject
    reviewer: str
    reviewed_at: datetime
    question: str | None = None
    answer: str | None = None
    gold_doc_ids: list[str] | None = None
    question_type: str | None = None
    expected_precision: str | None = None
    topic: str | None = None
    comment: str = ""

    def check(self) -> None:
        """ValueError with a message a reviewer can act on, if the decision cannot be stored."""
        if self.decision not in DECISIONS:
            raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {self.decision!r}")
        if not self.reviewer.strip():
            raise ValueError("a decision needs the reviewer's name")
        if self.question_type is not None and self.question_type not in QUESTION_TYPES:
            raise ValueError(f"question type must be one of {', '.join(QUESTION_TYPES)}")
        if self.expected_precision is not None and self.expected_precision not in PRECISIONS:
            raise ValueError(f"expected precision must be one of {', '.join(PRECISIONS)}")
        if self.decision == "edit" and self.question is not None and not self.question.strip():
            raise ValueError("an edited question cannot be empty")
        if self.decision == "edit" and self.gold_doc_ids is not None and not self.gold_doc_ids:
            raise ValueError("an edited pair needs at least one gold source document")


# ---- JSONL --------------------------------------------------------------------------------------


def write_candidates(path: Path, candidates: Iterable[Candidate]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as stream:
        for candidate in candidates:
            stream.write(json.dumps(candidate.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_candidates(path: Path) -> list[Candidate]:
    """Candidates from a JSONL file; a malformed row is a ValueError naming its line."""
    return list(read_rows(path, Candidate.from_dict, "a candidate row"))


# ---- CSV for offline review ---------------------------------------------------------------------

PROPOSAL_COLUMNS = (
    "candidate_id", "question", "answer", "source_doc_id", "source_location", "pattern",
    "proposed_gold_doc_ids", "question_type", "expected_precision", "year", "topic",
)  # fmt: skip
DECISION_COLUMNS = (
    "decision", "edited_question", "edited_answer", "edited_gold_doc_ids", "edited_question_type",
    "edited_expected_precision", "edited_topic", "reviewer", "reviewed_at", "comment",
)  # fmt: skip
# A spreadsheet runs a cell that starts with one of these as a formula; document text is untrusted.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Ids are separated by white space ("a; b" too); a bare ";" can belong to a DOI ("…CO;2-0").
_ID_SEPARATOR = re.compile(r"\s+")


def write_csv(
    path: Path, candidates: Iterable[Candidate], decisions: dict[str, Decision] | None = None
) -> int:
    """The proposals, one row each, with any decision already taken filled in."""
    decisions = decisions or {}
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(PROPOSAL_COLUMNS + DECISION_COLUMNS)
        for candidate in candidates:
            row = _proposal_row(candidate) + _decision_row(decisions.get(candidate.candidate_id))
            writer.writerow([_defuse(cell) for cell in row])
            count += 1
    return count


def _proposal_row(c: Candidate) -> list[str]:
    proposed = "; ".join(f"{s.doc_id} ({s.relation} {s.confidence:.2f})" for s in c.sources)
    meta = c.metadata
    return [c.candidate_id, c.question, c.answer, c.doc_id, c.location.describe(), c.pattern, proposed,
            meta.question_type, meta.expected_precision, "" if meta.year is None else str(meta.year),
            meta.topic]  # fmt: skip


def _decision_row(d: Decision | None) -> list[str]:
    if d is None:
        return [""] * len(DECISION_COLUMNS)
    gold = "; ".join(d.gold_doc_ids) if d.gold_doc_ids is not None else ""
    return [d.decision, d.question or "", d.answer or "", gold, d.question_type or "",
            d.expected_precision or "", d.topic or "", d.reviewer, d.reviewed_at.isoformat(), d.comment]  # fmt: skip


def _defuse(cell: str) -> str:
    return "'" + cell if cell.startswith(_FORMULA_START) else cell


def _restore(cell: str | None) -> str:
    cell = (cell or "").strip()
    return cell[1:] if cell.startswith("'") and cell[1:2] in _FORMULA_START else cell


def read_decisions_csv(path: Path, now: datetime | None = None) -> list[Decision]:
    """The decided rows of a reviewed CSV (rows left blank are skipped). A row that cannot be a
    decision is a ValueError naming its line, so nothing of a half-wrong file is stored."""
    now = now or datetime.now(UTC)
    decisions = []
    with path.open(encoding="utf-8-sig", newline="") as stream:
        reader = csv.DictReader(stream)
        missing = {"candidate_id", "decision", "reviewer"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"{path}: not a review CSV (no column {', '.join(sorted(missing))})")
        for line_no, row in enumerate(reader, start=2):
            if not _restore(row.get("decision")):
                continue
            try:
                decision = _decision_of(row, now)
                decision.check()
            except ValueError as exc:
                raise ValueError(f"{path}:{line_no}: {exc}") from None
            decisions.append(decision)
    return decisions


def _decision_of(row: dict[str, str], now: datetime) -> Decision:
    def cell(name: str) -> str | None:
        return _restore(row.get(name)) or None

    gold = cell("edited_gold_doc_ids")
    reviewed_at = cell("reviewed_at")
    return Decision(
        candidate_id=cell("candidate_id") or "",
        decision=(cell("decision") or "").lower(),
        reviewer=cell("reviewer") or "",
        reviewed_at=_aware(datetime.fromisoformat(reviewed_at)) if reviewed_at else now,
        question=cell("edited_question"),
        answer=cell("edited_answer"),
        gold_doc_ids=split_ids(gold) if gold else None,
        question_type=cell("edited_question_type"),
        expected_precision=cell("edited_expected_precision"),
        topic=cell("edited_topic"),
        comment=cell("comment") or "",
    )


def split_ids(text: str) -> list[str]:
    """Document ids typed by a person: separated by spaces, newlines or "; " (ids keep their own ";")."""
    ids = (part.rstrip(";,") for part in _ID_SEPARATOR.split(text.strip()))
    return list(dict.fromkeys(i for i in ids if i))


def _aware(moment: datetime) -> datetime:
    """A spreadsheet's time without a zone is taken as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
