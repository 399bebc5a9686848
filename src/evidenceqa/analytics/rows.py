"""The pilot's answers as the analytics count them: each stored answer with its ratings and the
documents it cited, read from the store for a period."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from statistics import fmean

from evidenceqa.store import FeedbackRow, Store, StoredAnswer, answers_between, feedback_between

# Open bounds of a period: feedback on a period's answers counts whenever it was given.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Exchange(StoredAnswer):
    """One question answered in the pilot: the stored answer, with every rating it received."""

    feedback: tuple[FeedbackRow, ...] = ()  # every rating of it, oldest first

    @property
    def ratings(self) -> tuple[float, ...]:
        return tuple(f.rating for f in self.feedback)

    @property
    def rating(self) -> float | None:
        """The mean of its ratings (several people may rate one answer); None when unrated."""
        return fmean(self.ratings) if self.ratings else None

    @property
    def cited(self) -> tuple[tuple[str, str | None], ...]:
        """(doc_id, title) of each cited document, once each, in citation order."""
        return tuple({c.doc_id: c.title for c in self.answer.citations}.items())

    @property
    def cited_doc_ids(self) -> tuple[str, ...]:
        return tuple(doc_id for doc_id, _ in self.cited)

    @property
    def latency_ms(self) -> float | None:
        """timings_ms["total"]: question in, stored answer out."""
        total = self.answer.timings_ms.get("total")
        return float(total) if isinstance(total, int | float) else None

    @property
    def cost_usd(self) -> float:
        return self.answer.cost_usd.get("total", sum(self.cost_by_stage.values()))

    @property
    def cost_by_stage(self) -> dict[str, float]:
        return {stage: usd for stage, usd in self.answer.cost_usd.items() if stage != "total"}


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def period_bounds(since: date | None, until: date | None) -> tuple[datetime, datetime]:
    """The instants of the days `since` to `until`, both included (UTC); None leaves that end open."""
    start = day_start(since) if since else EARLIEST
    # A day from LATEST on is open-ended too (and 9999-12-31 has no next day to end at).
    end = day_start(until + timedelta(days=1)) if until and until < LATEST.date() else LATEST
    return start, end


def load_exchanges(store: Store, since: datetime = EARLIEST, until: datetime = LATEST) -> list[Exchange]:
    """Answers with since <= created_at < until, oldest first, each with all its feedback."""
    answers = answers_between(store, since, until)
    ids = {a.answer_id for a in answers}
    feedback: dict[int, list[FeedbackRow]] = defaultdict(list)
    for row in feedback_between(store, since, LATEST):
        if row.answer_id in ids:
            feedback[row.answer_id].append(row)
    return [Exchange(**vars(a), feedback=tuple(feedback[a.answer_id])) for a in answers]
