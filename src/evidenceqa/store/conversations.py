"""Conversations: each question and answer as two messages plus the full answer record, clinicians'
feedback on answers, and both read back by period for the analytics.

A user sees only their own conversations; administrators can read everyone's (for review) but write
only to their own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, selectinload

from evidenceqa.records import Answer
from evidenceqa.store.db import Store
from evidenceqa.store.models import (
    RATINGS,
    AnswerRecord,
    Channel,
    Conversation,
    Feedback,
    GapReport,
    Message,
    User,
)
from evidenceqa.text.characters import visible

TITLE_CHARS = 80


class NotFound(LookupError):
    """No such conversation or answer, or it belongs to someone else (the two look the same)."""


class InvalidRating(ValueError):
    """A feedback rating other than Excellent (1.0), Acceptable (0.6) or Very poor (0.2)."""


def start_conversation(store: Store, user: User, title: str = "") -> Conversation:
    now = store.now()
    with store.transaction() as session:
        conversation = Conversation(user_id=user.id, title=_title(title), created_at=now, updated_at=now)
        session.add(conversation)
        session.flush()
        return conversation


def _title(text: str) -> str:
    text = " ".join(visible(text).split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def _conversation(session: Session, conversation_id: int, user: User, write: bool = False) -> Conversation:
    conversation = session.get(Conversation, conversation_id)
    if (
        conversation is None
        or conversation.deleted_at is not None
        or not (conversation.user_id == user.id or (user.is_admin and not write))
    ):
        raise NotFound(f"no conversation {conversation_id}")
    return conversation


def rename_conversation(store: Store, user: User, conversation_id: int, title: str) -> Conversation:
    """The user's own conversation, retitled (ValueError for a title with nothing to show)."""
    if not _title(title):
        raise ValueError("a conversation's title needs a visible character")
    with store.transaction() as session:
        conversation = _conversation(session, conversation_id, user, write=True)
        conversation.title = _title(title)
        session.flush()
        return conversation


def delete_conversation(store: Store, user: User, conversation_id: int) -> None:
    """The user's own conversation, gone from their list and pages. Its answers stay in the pilot's
    figures, which count them without saying whose."""
    with store.transaction() as session:
        _conversation(session, conversation_id, user, write=True).deleted_at = store.now()


def record_exchange(
    store: Store, conversation_id: int, user: User, answer: Answer, channel: Channel = "chat"
) -> int:
    """Store the question, the answer and its full record in one transaction; returns the record's id."""
    now = store.now()
    with store.transaction() as session:
        conversation = _conversation(session, conversation_id, user, write=True)
        conversation.title = conversation.title or _title(answer.question)
        conversation.updated_at = now
        # One flush each: the ids then put the question before the answer (messages sort by id).
        for role, text in (("user", answer.question), ("assistant", answer.answer)):
            message = Message(conversation_id=conversation_id, role=role, text=text, created_at=now)
            session.add(message)
            session.flush()
        record = AnswerRecord(
            message_id=message.id, created_at=now, channel=channel, **_record_fields(answer)
        )
        session.add(record)
        session.flush()
        return record.id


def _record_fields(answer: Answer) -> dict[str, Any]:
    data = answer.to_dict()
    stages = {stage: usd for stage, usd in answer.cost_usd.items() if stage != "total"}
    data["cost_by_stage"] = stages
    data["cost_usd"] = answer.cost_usd.get("total", sum(stages.values()))
    return data


def to_answer(record: AnswerRecord) -> Answer:
    """The `Answer` a record was made from, field for field."""
    fields = {name: getattr(record, name) for name in Answer.__dataclass_fields__ if name != "cost_usd"}
    fields["cost_usd"] = {**record.cost_by_stage, "total": record.cost_usd}
    fields["nearest"] = record.nearest or []  # none before revision 0010
    return Answer.from_dict(fields)


def conversations_of(store: Store, user: User, matching: str = "") -> list[Conversation]:
    """The user's own conversations, most recently active first; with `matching`, those whose title
    or a question of which holds it (case aside)."""
    query = (
        select(Conversation)
        .where(Conversation.user_id == user.id, Conversation.deleted_at.is_(None))
        .order_by(Conversation.updated_at.desc(), Conversation.id.desc())
    )
    words = " ".join(matching.split())
    if words:
        pattern = "%" + words.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        asked = select(Message.conversation_id).where(
            Message.role == "user", Message.text.ilike(pattern, escape="\\")
        )
        query = query.where(Conversation.title.ilike(pattern, escape="\\") | Conversation.id.in_(asked))
    with store.read() as session:
        return list(session.scalars(query))


def messages_of(store: Store, conversation_id: int, user: User) -> list[Message]:
    """The conversation's messages in order; each assistant message carries its `answer` record."""
    query = (
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.id)
        .options(selectinload(Message.answer))
    )
    with store.read() as session:
        _conversation(session, conversation_id, user)
        return list(session.scalars(query))


def searched_questions(store: Store, conversation_id: int, user: User) -> list[str]:
    """The conversation's questions as they were searched (a resolved follow-up as resolved), oldest
    first: what the next follow-up is resolved against."""
    query = (
        select(AnswerRecord.question, AnswerRecord.searched_for)
        .join(Message, AnswerRecord.message_id == Message.id)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.id)
    )
    with store.read() as session:
        _conversation(session, conversation_id, user)
        return [searched or asked for asked, searched in session.execute(query)]


def answer_record(store: Store, answer_id: int, user: User) -> AnswerRecord:
    with store.read() as session:
        return _answer(session, answer_id, user)


def _answer(session: Session, answer_id: int, user: User) -> AnswerRecord:
    row = session.execute(
        select(AnswerRecord, Conversation.user_id)
        .join(Message, AnswerRecord.message_id == Message.id)
        .join(Conversation, Message.conversation_id == Conversation.id)
        .where(AnswerRecord.id == answer_id)
    ).first()
    if row is None or not (row.user_id == user.id or user.is_admin):
        raise NotFound(f"no answer {answer_id}")
    return row[0]


def _rating(rating: float) -> float:
    # Compared with a tolerance so a rating parsed from a form ("0.6") still matches exactly.
    if not isinstance(rating, bool) and isinstance(rating, int | float) and math.isfinite(rating):
        for value in RATINGS.values():
            if abs(rating - value) < 1e-9:
                return value
    choices = ", ".join(f"{value} ({name})" for name, value in RATINGS.items())
    raise InvalidRating(f"rating must be one of {choices}, not {rating!r}")


def record_feedback(
    store: Store, answer_id: int, user: User, rating: float, comment: str | None = ""
) -> Feedback:
    """The user's rating of an answer they can see; a second rating replaces their first."""
    value, text = _rating(rating), visible(comment or "").strip()
    try:
        return _save_feedback(store, answer_id, user, value, text)
    except IntegrityError:
        # Two first ratings raced (PostgreSQL); the other is in now, so this one replaces it.
        return _save_feedback(store, answer_id, user, value, text)


def _save_feedback(store: Store, answer_id: int, user: User, rating: float, comment: str) -> Feedback:
    with store.transaction() as session:
        feedback = _readers_row(session, Feedback, answer_id, user)
        feedback.rating, feedback.comment, feedback.created_at = rating, comment, store.now()
        session.flush()
        return feedback


PerReader = TypeVar("PerReader", Feedback, GapReport)


def _readers_row(session: Session, model: type[PerReader], answer_id: int, user: User) -> PerReader:
    """The reader's own row of `model` for an answer they can see (one per reader), new if none."""
    _answer(session, answer_id, user)
    row = session.scalar(select(model).where(model.answer_id == answer_id, model.user_id == user.id))
    if row is None:
        row = model(answer_id=answer_id, user_id=user.id)
        session.add(row)
    return row


def report_gap(store: Store, answer_id: int, user: User, comment: str | None = "") -> GapReport:
    """The reader's report that the library lacks what this answer of theirs was asked for; a
    second report of the same answer replaces the first."""
    text = visible(comment or "").strip()
    try:
        return _save_gap(store, answer_id, user, text)
    except IntegrityError:  # two first reports raced (PostgreSQL): this one replaces the other
        return _save_gap(store, answer_id, user, text)


def _save_gap(store: Store, answer_id: int, user: User, comment: str) -> GapReport:
    with store.transaction() as session:
        report = _readers_row(session, GapReport, answer_id, user)
        report.comment, report.created_at = comment, store.now()
        session.flush()
        return report


@dataclass(frozen=True)
class GapReportRow:
    answer_id: int
    user_id: int
    created_at: datetime
    question: str
    comment: str


def gap_reports_between(store: Store, start: datetime, end: datetime) -> list[GapReportRow]:
    """Every gap report made (or last replaced) with start <= created_at < end, oldest first."""
    _check_range(start, end)
    query = (
        select(GapReport, AnswerRecord.question)
        .join(AnswerRecord, GapReport.answer_id == AnswerRecord.id)
        .where(GapReport.created_at >= start, GapReport.created_at < end)
        .order_by(GapReport.created_at, GapReport.id)
    )
    with store.read() as session:
        return [
            GapReportRow(r.answer_id, r.user_id, r.created_at, question, r.comment)
            for r, question in session.execute(query)
        ]


def feedback_of(store: Store, answer_id: int, user: User) -> Feedback | None:
    """The user's own rating of an answer, to show it back."""
    with store.read() as session:
        query = select(Feedback).where(Feedback.answer_id == answer_id, Feedback.user_id == user.id)
        return session.scalar(query)


@dataclass(frozen=True)
class StoredAnswer:
    """A stored answer: the record itself, and who asked it, in which conversation and when."""

    answer_id: int
    created_at: datetime
    user_id: int
    conversation_id: int
    answer: Answer
    channel: Channel = field(default="chat", kw_only=True)  # keyword-only: subclasses add fields after it


@dataclass(frozen=True)
class FeedbackRow:
    id: int
    created_at: datetime
    answer_id: int
    user_id: int
    rating: float
    comment: str
    question: str
    abstained: bool


def _check_range(start: datetime, end: datetime) -> None:
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("answers_between/feedback_between need timezone-aware datetimes (UTC)")


def answers_between(store: Store, start: datetime, end: datetime) -> list[StoredAnswer]:
    """Every user's answers with start <= created_at < end, oldest first."""
    _check_range(start, end)
    query = (
        select(AnswerRecord, Conversation.user_id, Conversation.id)
        .join(Message, AnswerRecord.message_id == Message.id)
        .join(Conversation, Message.conversation_id == Conversation.id)
        .where(AnswerRecord.created_at >= start, AnswerRecord.created_at < end)
        .order_by(AnswerRecord.created_at, AnswerRecord.id)
    )
    with store.read() as session:
        return [
            StoredAnswer(
                record.id,
                record.created_at,
                user_id,
                conversation_id,
                to_answer(record),
                channel=record.channel,
            )
            for record, user_id, conversation_id in session.execute(query)
        ]


def feedback_between(store: Store, start: datetime, end: datetime) -> list[FeedbackRow]:
    """Every rating given (or last replaced) with start <= created_at < end, oldest first."""
    _check_range(start, end)
    query = (
        select(Feedback, AnswerRecord.question, AnswerRecord.abstained)
        .join(AnswerRecord, Feedback.answer_id == AnswerRecord.id)
        .where(Feedback.created_at >= start, Feedback.created_at < end)
        .order_by(Feedback.created_at, Feedback.id)
    )
    with store.read() as session:
        return [
            FeedbackRow(f.id, f.created_at, f.answer_id, f.user_id, f.rating, f.comment, question, abstained)
            for f, question, abstained in session.execute(query)
        ]
