"""Benchmark review: candidate pairs loaded per benchmark name, and the decisions reviewers take.

Any logged-in clinician may review. Every decision is kept with who took it and when; the newest
one on a candidate is in force. Loading a candidates file again updates the candidates it holds and
adds new ones, and keeps every decision already taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from evidenceqa.curation.candidates import Candidate, Decision
from evidenceqa.store.conversations import NotFound
from evidenceqa.store.db import Store
from evidenceqa.store.models import ReviewCandidate, ReviewDecision, User

# Both are parts of the review page's addresses.
BENCHMARK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
CANDIDATE_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True)
class ReviewItem:
    candidate: Candidate
    decision: Decision | None  # the one in force
    history: list[Decision]  # every decision, oldest first (only from `review_item`)


def check_name(name: str) -> str:
    if not BENCHMARK_NAME.match(name):
        raise ValueError(f"benchmark name {name!r}: letters, digits, '.', '_' and '-' only (at most 100)")
    return name


def load_candidates(store: Store, benchmark: str, candidates: list[Candidate]) -> tuple[int, int]:
    """Put `candidates` up for review under `benchmark`; returns (added, updated)."""
    check_name(benchmark)
    bad = [c.candidate_id for c in candidates if not CANDIDATE_ID.match(c.candidate_id)]
    if bad:
        raise ValueError(f"candidate ids must be letters, digits, '.', '_' or '-' (at most 64): {bad[0]!r}")
    now = store.now()
    with store.transaction() as session:
        existing = {
            row.candidate_id: row
            for row in session.scalars(select(ReviewCandidate).where(ReviewCandidate.benchmark == benchmark))
        }
        start = max((row.position for row in existing.values()), default=-1) + 1
        added = 0
        for candidate in candidates:
            row = existing.get(candidate.candidate_id)
            if row is None:
                session.add(ReviewCandidate(benchmark=benchmark, candidate_id=candidate.candidate_id,
                                            position=start + added, data=candidate.to_dict(),
                                            imported_at=now))  # fmt: skip
                added += 1
            else:
                row.data, row.imported_at = candidate.to_dict(), now
    return added, len(candidates) - added


def benchmarks(store: Store) -> list[tuple[str, int]]:
    """Every benchmark under review, with its number of candidates."""
    with store.read() as session:
        rows = session.execute(
            select(ReviewCandidate.benchmark, func.count())
            .group_by(ReviewCandidate.benchmark)
            .order_by(ReviewCandidate.benchmark)
        )
        return [(name, count) for name, count in rows]


def review_items(store: Store, benchmark: str) -> list[ReviewItem]:
    """The benchmark's candidates in file order, each with the decision in force."""
    with store.read() as session:
        rows = _candidates(session, benchmark)
        latest = _latest_decisions(session, benchmark)
        return [ReviewItem(Candidate.from_dict(row.data), latest.get(row.id), []) for row in rows]


def review_item(store: Store, benchmark: str, candidate_id: str) -> ReviewItem:
    with store.read() as session:
        row = _candidate(session, benchmark, candidate_id)
        history = [
            _decision(d, candidate_id)
            for d in session.scalars(
                select(ReviewDecision)
                .where(ReviewDecision.candidate_pk == row.id)
                .order_by(ReviewDecision.id)
            )
        ]
        return ReviewItem(Candidate.from_dict(row.data), history[-1] if history else None, history)


def next_pending(store: Store, benchmark: str, after: str | None = None) -> str | None:
    """The first candidate without a decision, looking after `after` first, then from the start."""
    items = review_items(store, benchmark)
    ids = [item.candidate.candidate_id for item in items]
    start = ids.index(after) + 1 if after in ids else 0
    ordered = items[start:] + items[:start]
    return next((i.candidate.candidate_id for i in ordered if i.decision is None), None)


def record_decision(store: Store, benchmark: str, decision: Decision, user: User | None = None) -> Decision:
    """Store a decision (ValueError if it is not a valid one, NotFound if there is no such candidate).
    With a user, the reviewer is that account and the time is now, whatever `decision` says."""
    decision.check()
    with store.transaction() as session:
        row = _candidate(session, benchmark, decision.candidate_id)
        stored = ReviewDecision(
            candidate_pk=row.id,
            decision=decision.decision,
            question=decision.question,
            answer=decision.answer,
            gold_doc_ids=decision.gold_doc_ids,
            question_type=decision.question_type,
            expected_precision=decision.expected_precision,
            topic=decision.topic,
            comment=decision.comment,
            user_id=user.id if user else None,
            reviewer=user.email if user else decision.reviewer,
            created_at=store.now() if user else decision.reviewed_at,
        )
        session.add(stored)
        session.flush()
        return _decision(stored, decision.candidate_id)


def decisions_in_force(store: Store, benchmark: str) -> tuple[list[Candidate], dict[str, Decision]]:
    """The benchmark's candidates and, by candidate id, the decision in force on each decided one."""
    items = review_items(store, benchmark)
    decided = {i.candidate.candidate_id: i.decision for i in items if i.decision is not None}
    return [i.candidate for i in items], decided


def _candidates(session: Session, benchmark: str) -> list[ReviewCandidate]:
    rows = list(
        session.scalars(
            select(ReviewCandidate)
            .where(ReviewCandidate.benchmark == benchmark)
            .order_by(ReviewCandidate.position)
        )
    )
    if not rows:
        raise NotFound(f"no benchmark {benchmark!r} under review")
    return rows


def _candidate(session: Session, benchmark: str, candidate_id: str) -> ReviewCandidate:
    row = session.scalar(
        select(ReviewCandidate).where(
            ReviewCandidate.benchmark == benchmark, ReviewCandidate.candidate_id == candidate_id
        )
    )
    if row is None:
        raise NotFound(f"no candidate {candidate_id!r} in benchmark {benchmark!r}")
    return row


def _latest_decisions(session: Session, benchmark: str) -> dict[int, Decision]:
    """The newest decision on each decided candidate of the benchmark, by candidate row id."""
    newest = (
        select(func.max(ReviewDecision.id))
        .join(ReviewCandidate, ReviewCandidate.id == ReviewDecision.candidate_pk)
        .where(ReviewCandidate.benchmark == benchmark)
        .group_by(ReviewDecision.candidate_pk)
    )
    rows = session.execute(
        select(ReviewDecision, ReviewCandidate.candidate_id)
        .join(ReviewCandidate, ReviewCandidate.id == ReviewDecision.candidate_pk)
        .where(ReviewDecision.id.in_(newest))
    )
    return {decision.candidate_pk: _decision(decision, cid) for decision, cid in rows}


def _decision(row: ReviewDecision, candidate_id: str) -> Decision:
    return Decision(
        candidate_id=candidate_id,
        decision=row.decision,
        reviewer=row.reviewer,
        reviewed_at=row.created_at,
        question=row.question,
        answer=row.answer,
        gold_doc_ids=row.gold_doc_ids,
        question_type=row.question_type,
        expected_precision=row.expected_precision,
        topic=row.topic,
        comment=row.comment,
    )
