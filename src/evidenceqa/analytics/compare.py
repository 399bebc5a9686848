"""Before and after: the same questions under two periods or two index versions (the seed's
"Performance Evolution" table), and which questions changed outcome.

The questions are those of the "before" selection (the latest answer to each distinct question).
"After" is the latest answer to the same question in the "after" selection; a question it lacks, or
every question when "after" is `current`, is re-run on the library as it is now (no cache, so the
latency is real). A re-run has no rating: when it cites the same documents as the rated "before"
answer, it inherits that rating (the same evidence, the same verdict); otherwise it is judged by
whether it answered. Success is `metrics.success` under "feedback_or_answered" on both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from statistics import fmean, median

import numpy as np

from evidenceqa.analytics.metrics import success
from evidenceqa.analytics.rows import EARLIEST, LATEST, Exchange, day_start
from evidenceqa.records import Answer


@dataclass(frozen=True)
class Selection:
    """Which stored answers a side is: a period, an index version, or `current` (re-run everything)."""

    label: str
    since: datetime = EARLIEST
    until: datetime = LATEST
    index_version: int | None = None
    current: bool = False

    def holds(self, x: Exchange) -> bool:
        in_period = self.since <= x.created_at < self.until
        return in_period and (self.index_version is None or x.answer.index_version == self.index_version)


def parse_selection(text: str) -> Selection:
    """`2025-01-06..2025-02-03` (the end day excluded), `index:3`, or `current`."""
    text = text.strip()
    if text == "current":
        return Selection(label="current library (re-run)", current=True)
    if text.startswith("index:"):
        try:
            return Selection(label=f"index version {int(text[6:])}", index_version=int(text[6:]))
        except ValueError:
            raise ValueError(f"{text!r}: an index version is index:N with N a whole number") from None
    start, dots, end = text.partition("..")
    try:
        since = day_start(date.fromisoformat(start)) if start else EARLIEST
        until = day_start(date.fromisoformat(end)) if end else LATEST
    except ValueError:
        raise ValueError(f"{text!r}: expected DATE..DATE (ISO dates), index:N or current") from None
    if not dots:  # one day
        until = since + timedelta(days=1)
    return Selection(label=f"{start or '…'} to {end or '…'}" if dots else start, since=since, until=until)


def key(question: str) -> str:
    """Questions match across selections case- and space-insensitively."""
    return " ".join(question.lower().split())


def latest_by_question(rows: Sequence[Exchange]) -> dict[str, Exchange]:
    latest: dict[str, Exchange] = {}
    for x in sorted(rows, key=lambda r: (r.created_at, r.answer_id)):
        latest[key(x.answer.question)] = x
    return latest


def rerun_exchange(answer: Answer) -> Exchange:
    """A re-run answer (not stored) in the shape the figures count."""
    return Exchange(answer_id=0, created_at=LATEST, user_id=0, conversation_id=0, answer=answer)


@dataclass(frozen=True)
class Pair:
    question: str
    before: Exchange
    after: Exchange
    rerun: bool  # "after" was re-run now rather than read from the store

    @property
    def before_success(self) -> bool:
        return bool(success(self.before, "feedback_or_answered"))

    @property
    def after_success(self) -> bool:
        return bool(success(self.after, "feedback_or_answered"))

    @property
    def changed(self) -> bool:
        return (
            self.before_success != self.after_success
            or self.before.answer.abstained != self.after.answer.abstained
        )


def pair_up(
    before: Sequence[Exchange], after: Sequence[Exchange], rerun: Callable[[str], Exchange]
) -> list[Pair]:
    """Each "before" question with its "after" answer: stored when there is one, else `rerun`."""
    stored = latest_by_question(after)
    pairs = []
    for k, x in latest_by_question(before).items():
        found = stored.get(k)
        after_x = found if found is not None else _inherit(x, rerun(x.answer.question))
        pairs.append(Pair(x.answer.question, x, after_x, found is None))
    return pairs


def _inherit(before: Exchange, rerun: Exchange) -> Exchange:
    same_evidence = set(rerun.cited_doc_ids) == set(before.cited_doc_ids)
    if before.ratings and same_evidence and rerun.answer.abstained == before.answer.abstained:
        return replace(rerun, feedback=before.feedback)
    return rerun


@dataclass(frozen=True)
class SideFigures:
    questions: int
    success_rate: float | None
    abstention_rate: float | None
    latency_mean_s: float | None
    latency_median_s: float | None
    latency_p95_s: float | None


def side_figures(rows: Sequence[Exchange]) -> SideFigures:
    seconds = [x.latency_ms / 1000 for x in rows if x.latency_ms is not None]
    judged = [bool(success(x, "feedback_or_answered")) for x in rows]
    n = len(rows)
    return SideFigures(
        questions=n,
        success_rate=sum(judged) / n if n else None,
        abstention_rate=sum(x.answer.abstained for x in rows) / n if n else None,
        latency_mean_s=fmean(seconds) if seconds else None,
        latency_median_s=median(seconds) if seconds else None,
        latency_p95_s=float(np.percentile(seconds, 95)) if seconds else None,
    )


@dataclass(frozen=True)
class Comparison:
    before_label: str
    after_label: str
    before: SideFigures
    after: SideFigures
    reruns: int
    pairs: list[Pair]

    @property
    def changed(self) -> list[Pair]:
        return [p for p in self.pairs if p.changed]


def compare(before: Selection, after: Selection, pairs: list[Pair]) -> Comparison:
    return Comparison(
        before_label=before.label,
        after_label=after.label,
        before=side_figures([p.before for p in pairs]),
        after=side_figures([p.after for p in pairs]),
        reruns=sum(p.rerun for p in pairs),
        pairs=pairs,
    )
