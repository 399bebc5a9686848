"""The pilot's answers as the analytics count them: each stored answer with its ratings and the
documents it cited, read from the store for a period."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from statistics import fmean
from typing import Any

from sqlalchemy import select

from evidenceqa.store import AnswerRecord, AnswerRow, FeedbackRow, Store, answers_between, feedback_between

# Open bounds of a period: feedback on a period's answers counts whenever it was given.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Exchange:
    """One question answered in the pilot, with every rating it received."""

    answer_id: int
    created_at: datetime
    user_id: int
    conversation_id: int
    question: str
    answer: str
    abstained: bool
    cited: tuple[tuple[str, str | None], ...]  # (doc_id, title) of each cited document, in order
    latency_ms: float | None  # timings_ms["total"]: question in, stored answer out
    cache_hit: bool
    cost_usd: float
    cost_by_stage: dict[str, float]
    index_version: int
    p_answerable: float | None
    temporal: str | None
    feedback: tuple[FeedbackRow, ...] = ()  # every rating of it, oldest first

    @property
    def ratings(self) -> tuple[float, ...]:
        return tuple(f.rating for f in self.feedback)

    @property
    def rating(self) -> float | None:
        """The mean of its ratings (several people may rate one answer); None when unrated."""
        return fmean(self.ratings) if self.ratings else None

    @property
    def cited_doc_ids(self) -> tuple[str, ...]:
        return tuple(doc_id for doc_id, _ in self.cited)


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def period_bounds(since: date | None, until: date | None) -> tuple[datetime, datetime]:
    """The instants of the days `since` to `until`, both included (UTC); None leaves that end open."""
    start = day_start(since) if since else EARLIEST
    end = day_start(until + timedelta(days=1)) if until else LATEST
    return start, end


def load_exchanges(store: Store, since: datetime = EARLIEST, until: datetime = LATEST) -> list[Exchange]:
    """Answers with since <= created_at < until, oldest first, each with all its feedback."""
    answers = answers_between(store, since, until)
    ids = {a.id for a in answers}
    feedback: dict[int, list[FeedbackRow]] = defaultdict(list)
    for row in feedback_between(store, since, LATEST):
        if row.answer_id in ids:
            feedback[row.answer_id].append(row)
    cited = _cited_documents(store, since, until)
    return [_exchange(a, cited.get(a.id, ()), tuple(feedback[a.id])) for a in answers]


def _exchange(
    a: AnswerRow, cited: tuple[tuple[str, str | None], ...], feedback: tuple[FeedbackRow, ...]
) -> Exchange:
    return Exchange(
        answer_id=a.id, created_at=a.created_at, user_id=a.user_id, conversation_id=a.conversation_id,
        question=a.question, answer=a.answer, abstained=a.abstained, cited=cited,
        latency_ms=_total_ms(a.timings_ms), cache_hit=a.cache_hit, cost_usd=a.cost_usd,
        cost_by_stage=dict(a.cost_by_stage), index_version=a.index_version,
        p_answerable=a.p_answerable, temporal=a.temporal, feedback=feedback,
    )  # fmt: skip


def _total_ms(timings: dict[str, Any]) -> float | None:
    total = timings.get("total")
    return float(total) if isinstance(total, int | float) else None


def _cited_documents(
    store: Store, since: datetime, until: datetime
) -> dict[int, tuple[tuple[str, str | None], ...]]:
    """Each answer's cited documents, once each in citation order (`AnswerRow` keeps only a count)."""
    query = select(AnswerRecord.id, AnswerRecord.citations).where(
        AnswerRecord.created_at >= since, AnswerRecord.created_at < until
    )
    with store.transaction() as session:
        rows = session.execute(query).all()
    found: dict[int, tuple[tuple[str, str | None], ...]] = {}
    for answer_id, citations in rows:
        documents = {c["doc_id"]: c.get("title") for c in citations}  # dicts keep the first order
        found[answer_id] = tuple(documents.items())
    return found
